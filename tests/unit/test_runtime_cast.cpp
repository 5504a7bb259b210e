// Conversions of the storage-only types (bfloat16, the four float8 formats, 4- and 2-bit
// integers) through dlc::rt::cast, checked against each format's definition: every code
// decoded, and floats rounded to the nearest representable value found by search.
#include "dlc_kernels.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace dlc::rt;

namespace {

// A float8 format as the ONNX spec describes it.
struct Format {
  dlc_dtype dtype;
  const char *name;
  int mantissaBits, bias;
  bool ieeeSpecials; // top exponent: inf and NaN (e5m2)
  bool unsignedZero; // "fnuz": no -0, 0x80 is the one NaN
  double largest;    // the spec's largest finite value
};

const Format kFormats[] = {
    {DLC_F8E4M3FN, "e4m3fn", 3, 7, false, false, 448.0},
    {DLC_F8E4M3FNUZ, "e4m3fnuz", 3, 8, false, true, 240.0},
    {DLC_F8E5M2, "e5m2", 2, 15, true, false, 57344.0},
    {DLC_F8E5M2FNUZ, "e5m2fnuz", 2, 16, false, true, 57344.0},
};

bool isNanCode(const Format &f, uint8_t code) {
  if (f.unsignedZero)
    return code == 0x80;
  if (f.ieeeSpecials)
    return (code & 0x7c) == 0x7c && (code & 0x03);
  return (code & 0x7f) == 0x7f;
}

// (-1)^s 2^(e - bias) (1 + m / 2^M), subnormal 2^(1 - bias) (m / 2^M).
double value(const Format &f, uint8_t code) {
  int e = (code & 0x7f) >> f.mantissaBits, m = code & ((1 << f.mantissaBits) - 1);
  double fraction = m / double(1 << f.mantissaBits);
  double v = e == 0 ? std::ldexp(fraction, 1 - f.bias) : std::ldexp(1 + fraction, e - f.bias);
  return (code & 0x80) ? -v : v;
}

float decode(dlc_dtype t, uint8_t code) {
  float out;
  cast(t, &code, DLC_F32, &out, 1);
  return out;
}

uint8_t encode(dlc_dtype t, float x, bool saturate) {
  uint8_t out;
  cast(DLC_F32, &x, t, &out, 1, saturate);
  return out;
}

} // namespace

TEST_CASE("float8: every code decodes to its definition and encodes back", "[cast][float8]") {
  for (const Format &f : kFormats) {
    INFO(f.name);
    double largest = 0;
    for (int code = 0; code < 256; ++code) {
      INFO("code " << code);
      float x = decode(f.dtype, uint8_t(code));
      if (isNanCode(f, uint8_t(code))) {
        CHECK(std::isnan(x));
        continue;
      }
      if (f.ieeeSpecials && (code & 0x7f) == 0x7c) {
        CHECK(x == ((code & 0x80) ? -INFINITY : INFINITY));
        continue;
      }
      REQUIRE(double(x) == value(f, uint8_t(code)));
      largest = std::max(largest, double(x));
      bool negativeZero = code == 0x80; // only fnuz lacks it, and there 0x80 is NaN
      REQUIRE(encode(f.dtype, x, false) == (negativeZero ? 0x80 : code));
      REQUIRE(encode(f.dtype, x, true) == (negativeZero ? 0x80 : code));
    }
    CHECK(largest == f.largest);
    CHECK(std::isnan(decode(f.dtype, encode(f.dtype, NAN, true))));
    CHECK(std::isnan(decode(f.dtype, encode(f.dtype, NAN, false))));
  }
}

TEST_CASE("float8: floats round to the nearest value, ties to even, overflow per saturate",
          "[cast][float8]") {
  std::mt19937 rng(817);
  for (const Format &f : kFormats) {
    INFO(f.name);
    std::vector<std::pair<double, uint8_t>> finite; // non-negative finite values, ascending
    for (int code = 0; code < 128; ++code)
      if (!isNanCode(f, uint8_t(code)) && !(f.ieeeSpecials && code >= 0x7c))
        finite.push_back({value(f, uint8_t(code)), uint8_t(code)});
    std::sort(finite.begin(), finite.end());
    uint8_t overflow = f.unsignedZero ? 0x80 : f.ieeeSpecials ? 0x7c : 0x7f;
    // Past the largest value the next (unrepresentable) step is one more unit of its binade.
    double top = finite.back().first;
    double beyond = top + std::ldexp(1.0, std::ilogb(top) - f.mantissaBits);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::uniform_int_distribution<int> scale(-14 - f.bias, 4 + f.bias);
    for (int i = 0; i < 100000; ++i) {
      float x = std::ldexp(unit(rng), scale(rng));
      if (i % 1000 == 0) // exact midpoints between neighbours, where ties decide
        x = float((finite[i / 1000 % (finite.size() - 1)].first +
                   finite[i / 1000 % (finite.size() - 1) + 1].first) /
                  2);
      uint8_t want;
      if (x >= beyond || (x > top && (x - top > beyond - x ||
                                      (x - top == beyond - x && !(finite.back().second & 1))))) {
        want = overflow; // nearest-even would leave the format
      } else {
        want = nearestCode(finite, x);
      }
      INFO("x = " << x);
      REQUIRE(encode(f.dtype, x, false) == want);
      uint8_t negative = want == 0 && f.unsignedZero ? 0 : uint8_t(want | 0x80);
      if (want == overflow && f.unsignedZero)
        negative = overflow;
      REQUIRE(encode(f.dtype, -x, false) == negative);
      uint8_t saturated = x > top ? finite.back().second : want;
      REQUIRE(encode(f.dtype, x, true) == saturated);
    }
    CHECK(encode(f.dtype, INFINITY, true) == finite.back().second);
    CHECK(encode(f.dtype, INFINITY, false) == overflow);
  }
  // Spot checks against ml_dtypes, which generates ONNX's reference outputs.
  CHECK(encode(DLC_F8E4M3FN, 464.0f, false) == 0x7e); // tie between 448 and "480": even 448
  CHECK(encode(DLC_F8E4M3FN, 465.0f, false) == 0x7f);
  CHECK(encode(DLC_F8E4M3FN, -1e9f, false) == 0xff);
  CHECK(encode(DLC_F8E5M2, 61440.0f, false) == 0x7c); // tie between 57344 and 65536: inf
  CHECK(encode(DLC_F8E5M2, 61439.0f, false) == 0x7b);
  CHECK(encode(DLC_F8E4M3FNUZ, -1e-9f, false) == 0x00); // no negative zero
}

TEST_CASE("bfloat16: exact widening, nearest-even narrowing", "[cast][bfloat16]") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t b = uint16_t(bits);
    float f;
    cast(DLC_BF16, &b, DLC_F32, &f, 1);
    uint32_t wide = bits << 16, got;
    std::memcpy(&got, &f, 4);
    if ((wide & 0x7fffffff) > 0x7f800000) { // NaN: stays NaN (signalling ones become quiet)
      REQUIRE(std::isnan(f));
    } else {
      REQUIRE(got == wide);
      uint16_t back;
      cast(DLC_F32, &f, DLC_BF16, &back, 1);
      REQUIRE(back == b);
    }
  }
  std::mt19937 rng(29);
  std::uniform_int_distribution<uint32_t> anyBits(0, 0x7f7fffff); // finite, non-negative
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = anyBits(rng);
    float x;
    std::memcpy(&x, &bits, 4);
    uint16_t below = uint16_t(bits >> 16), above = uint16_t(below + 1);
    auto valueOf = [](uint16_t b) {
      uint32_t w = uint32_t(b) << 16;
      float v;
      std::memcpy(&v, &w, 4);
      return double(v);
    };
    double down = x - valueOf(below), up = valueOf(above) - x;
    uint16_t want = down < up ? below : up < down ? above : (below & 1) ? above : below;
    uint16_t got;
    cast(DLC_F32, &x, DLC_BF16, &got, 1);
    INFO("bits " << bits);
    REQUIRE(got == want);
  }
  uint16_t nan;
  float qnan = std::numeric_limits<float>::quiet_NaN();
  cast(DLC_F32, &qnan, DLC_BF16, &nan, 1);
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x7f) != 0);
}

TEST_CASE("4- and 2-bit integers: truncate, keep the low bits, sign-extend", "[cast][int4]") {
  // Expected values as ml_dtypes converts them (the ONNX reference).
  const float x[] = {-9.7f, -8.5f, -2.5f, -0.5f,  0.5f, 1.5f,     2.6f,     7.6f,
                     8.0f,  15.5f, 16.2f, 300.0f, NAN,  INFINITY, -INFINITY};
  const int n = sizeof(x) / sizeof(x[0]);
  struct Case {
    dlc_dtype type;
    int8_t want[15];
  } cases[] = {
      {DLC_I4, {7, -8, -2, 0, 0, 1, 2, 7, -8, -1, 0, -4, 0, 0, 0}},
      {DLC_U4, {7, 8, 14, 0, 0, 1, 2, 7, 8, 15, 0, 12, 0, 0, 0}},
      {DLC_I2, {-1, 0, -2, 0, 0, 1, -2, -1, 0, -1, 0, 0, 0, 0, 0}},
      {DLC_U2, {3, 0, 2, 0, 0, 1, 2, 3, 0, 3, 0, 0, 0, 0, 0}},
  };
  for (const Case &c : cases) {
    int8_t got[15];
    cast(DLC_F32, x, c.type, got, n);
    for (int i = 0; i < n; ++i) {
      INFO("type " << c.type << ", x = " << x[i]);
      CHECK(got[i] == c.want[i]);
    }
    // Back to int64 and float: the values, not the bits.
    int64_t wide[15];
    float narrow[15];
    cast(c.type, got, DLC_I64, wide, n);
    cast(c.type, got, DLC_F32, narrow, n);
    for (int i = 0; i < n; ++i) {
      CHECK(wide[i] == c.want[i]);
      CHECK(narrow[i] == float(c.want[i]));
    }
  }
  const int64_t integers[] = {-9, -8, 7, 8, 16, 17, int64_t(1) << 62};
  int8_t int4[7];
  cast(DLC_I64, integers, DLC_I4, int4, 7);
  const int8_t want[] = {7, -8, 7, -8, 0, 1, 0};
  for (int i = 0; i < 7; ++i)
    CHECK(int4[i] == want[i]);
}

TEST_CASE("float4 e2m1: the eight magnitudes, nearest-even rounding, always saturating",
          "[cast][float4]") {
  std::vector<std::pair<double, uint8_t>> finite;
  for (int code = 0; code < 16; ++code) {
    int e = (code >> 1) & 3, m = code & 1;
    double v = e == 0 ? m * 0.5 : (1 + m / 2.0) * std::ldexp(1.0, e - 1);
    float x = decode(DLC_F4E2M1, uint8_t(code));
    REQUIRE(double(x) == ((code & 8) ? -v : v));
    if (!(code & 8))
      finite.push_back({v, uint8_t(code)});
  }
  CHECK(finite.back().first == 6.0);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> range(0.0f, 9.0f);
  for (int i = 0; i < 20000; ++i) {
    float x = i < 15 ? float((finite[i % 7].first + finite[i % 7 + 1].first) / 2) : range(rng);
    uint8_t want = nearestCode(finite, x); // beyond 6: the largest, 6
    INFO("x = " << x);
    REQUIRE(encode(DLC_F4E2M1, x, false) == want);
    REQUIRE(encode(DLC_F4E2M1, -x, false) == uint8_t(want | 8));
  }
  // As ml_dtypes (the ONNX reference): infinities saturate, NaN becomes -0.
  CHECK(encode(DLC_F4E2M1, INFINITY, false) == 7);
  CHECK(encode(DLC_F4E2M1, -INFINITY, false) == 15);
  CHECK(encode(DLC_F4E2M1, NAN, false) == 8);
}

TEST_CASE("float8 e8m0: powers of two, rounded up, down or to nearest", "[cast][e8m0]") {
  auto toE8M0 = [](float x, bool saturate, Rounding rounding) {
    uint8_t out;
    cast(DLC_F32, &x, DLC_F8E8M0, &out, 1, saturate, rounding);
    return out;
  };
  for (int code = 0; code < 255; ++code) {
    float x = decode(DLC_F8E8M0, uint8_t(code));
    REQUIRE(double(x) == std::ldexp(1.0, code - 127));
    if (code > 0) // 2^-127 is a float32 subnormal (see below)
      for (Rounding r : {Rounding::Up, Rounding::Down, Rounding::Nearest})
        REQUIRE(toE8M0(x, true, r) == code); // exact powers of two stay
  }
  // The reference rounds on float32 bits: 2^-127 has exponent field 0 and a mantissa bit set.
  CHECK(toE8M0(std::ldexp(1.0f, -127), true, Rounding::Up) == 1);
  CHECK(toE8M0(std::ldexp(1.0f, -127), true, Rounding::Down) == 0);
  CHECK(std::isnan(decode(DLC_F8E8M0, 0xff)));
  CHECK(toE8M0(3.0f, true, Rounding::Up) == 129);      // 4
  CHECK(toE8M0(3.0f, true, Rounding::Down) == 128);    // 2
  CHECK(toE8M0(3.0f, true, Rounding::Nearest) == 129); // 1.5 is a tie: away from 2
  CHECK(toE8M0(2.5f, true, Rounding::Nearest) == 128);
  CHECK(toE8M0(-3.0f, true, Rounding::Up) == 129); // the sign is dropped
  float largest = std::numeric_limits<float>::max();
  CHECK(toE8M0(largest, true, Rounding::Up) == 0xfe);
  CHECK(toE8M0(largest, false, Rounding::Up) == 0xff);
  CHECK(toE8M0(INFINITY, true, Rounding::Up) == 0xff);
}

TEST_CASE("float to integer: truncation toward zero, saturation at the range, NaN to 0", "[cast]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {2.9f,   -2.9f, 300.0f, -300.0f,       1e20f,
                                 -1e20f, nan,   127.0f, 2147483520.0f, -0.5f};
  std::vector<int8_t> i8(in.size());
  cast(DLC_F32, in.data(), DLC_I8, i8.data(), int64_t(in.size()));
  CHECK(i8 == std::vector<int8_t>{2, -2, 127, -128, 127, -128, 0, 127, 127, 0});
  std::vector<uint32_t> u32(in.size());
  cast(DLC_F32, in.data(), DLC_U32, u32.data(), int64_t(in.size()));
  CHECK(u32 == std::vector<uint32_t>{2, 0, 300, 0, 4294967295u, 0, 0, 127, 2147483520u, 0});
  std::vector<int32_t> i32(in.size());
  cast(DLC_F32, in.data(), DLC_I32, i32.data(), int64_t(in.size()));
  CHECK(i32 ==
        std::vector<int32_t>{2, -2, 300, -300, 2147483647, -2147483647 - 1, 0, 127, 2147483520, 0});
  const std::vector<double> wide = {9.3e18, -9.3e18, 9.2e18};
  std::vector<int64_t> i64(wide.size());
  cast(DLC_F64, wide.data(), DLC_I64, i64.data(), int64_t(wide.size()));
  CHECK(i64 == std::vector<int64_t>{INT64_MAX, INT64_MIN, 9200000000000000000});
}
