// Tests for the CPU runtime's elementwise kernels (unary, clip, leaky relu, broadcasting
// binary ops) against naive references written independently here, on random shapes from
// fixed seeds.
#include "dlc_kernels.h"
#include "runtime_test_util.h"
#include "scalar_ops.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

using namespace dlc::rt;

//===----------------------------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------------------------===//

namespace {

double unaryReference(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::Relu:
    return x > 0 ? x : 0;
  case UnaryKind::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Abs:
    return x < 0 ? -x : x;
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::Reciprocal:
    return 1 / x;
  case UnaryKind::Floor:
    return std::floor(x);
  case UnaryKind::Ceil:
    return std::ceil(x);
  case UnaryKind::Softplus:
    return std::log1p(std::exp(x));
  case UnaryKind::Sin:
    return std::sin(x);
  case UnaryKind::Cos:
    return std::cos(x);
  case UnaryKind::Tan:
    return std::tan(x);
  case UnaryKind::Asin:
    return std::asin(x);
  case UnaryKind::Acos:
    return std::acos(x);
  case UnaryKind::Atan:
    return std::atan(x);
  case UnaryKind::Sinh:
    return std::sinh(x);
  case UnaryKind::Cosh:
    return std::cosh(x);
  case UnaryKind::Asinh:
    return std::asinh(x);
  case UnaryKind::Acosh:
    return std::acosh(x);
  case UnaryKind::Atanh:
    return std::atanh(x);
  case UnaryKind::Softsign:
    return x / (1 + std::fabs(x));
  case UnaryKind::HardSwish:
    return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
  case UnaryKind::Sign:
    return (x > 0) - (x < 0);
  case UnaryKind::Round:
    return std::nearbyint(x);
  case UnaryKind::Mish:
    return x * std::tanh(std::log1p(std::exp(x)));
  }
  return 0;
}

// Where each kind is defined (and not too steep for float): inputs are drawn from [lo, hi].
std::pair<float, float> unaryDomain(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Log:
  case UnaryKind::Sqrt:
  case UnaryKind::Reciprocal:
    return {0.01f, 6.0f};
  case UnaryKind::Asin:
  case UnaryKind::Acos:
  case UnaryKind::Atanh:
    return {-0.99f, 0.99f};
  case UnaryKind::Acosh:
    return {1.0f, 6.0f};
  case UnaryKind::Tan:
    return {-1.5f, 1.5f};
  default:
    return {-6.0f, 6.0f};
  }
}

} // namespace

// Each kind of unary kernel for element type T against double-precision formulas: the float
// kernel within 2e-6 of the formula rounded to float, the double kernel within 1e-13 (which a
// kernel computing in float could not meet).
template <typename T> void checkUnaryKernels(std::mt19937 &rng, double rel) {
  // Every kind (a new one without a reference formula fails: unaryReference gives 0).
#define DLC_UNARY_KIND(name, gradFrom) UnaryKind::name,
  const UnaryKind kinds[] = {DLC_UNARY_KINDS(DLC_UNARY_KIND)};
#undef DLC_UNARY_KIND
  for (UnaryKind kind : kinds) {
    INFO("kind " << static_cast<int>(kind) << ", " << sizeof(T) << "-byte elements");
    auto [lo, hi] = unaryDomain(kind);
    std::vector<T> x = randomValues<T>(rng, 1001, lo, hi);
    if (kind == UnaryKind::Round) // exact halves round to even
      for (T v : {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5})
        x.push_back(v);
    if (kind == UnaryKind::Sigmoid || kind == UnaryKind::Softplus || kind == UnaryKind::Tanh) {
      // Far tails, where naive formulas overflow.
      for (T v : {-100.0, -87.0, -20.0, 20.0, 87.0, 100.0})
        x.push_back(v);
    }
    std::vector<T> y(x.size());
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = static_cast<double>(static_cast<T>(unaryReference(kind, x[i])));
    unary(kind, x.data(), y.data(), static_cast<int64_t>(x.size()));
    requireClose(y, want, rel, 1e-37);

    // In place.
    unary(kind, x.data(), x.data(), static_cast<int64_t>(x.size()));
    requireClose(x, want, rel, 1e-37);
  }
}

TEST_CASE("unary kernels match double-precision formulas", "[elementwise]") {
  std::mt19937 rng(1);
  checkUnaryKernels<float>(rng, 2e-6);
  checkUnaryKernels<double>(rng, 1e-13);
}

TEST_CASE("unary kernels handle NaN and empty input", "[elementwise]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float x[2] = {nan, -1.0f}, y[2] = {0, 0};
  unary(UnaryKind::Relu, x, y, 2);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 0.0f);
  unary(UnaryKind::Exp, x, y, 0);
  CHECK(y[1] == 0.0f);
}

TEST_CASE("clip and leaky relu", "[elementwise]") {
  std::mt19937 rng(2);
  std::vector<float> x = randomFloats(rng, 517, -3.0f, 3.0f);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  std::vector<double> want(x.size());

  clipF32(x.data(), y.data(), static_cast<int64_t>(x.size()), -0.5f, 1.25f);
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = std::isnan(x[i]) ? x[i] : std::min(1.25, std::max(-0.5, double(x[i])));
  requireClose(y, want, 0.0);

  leakyReluF32(x.data(), y.data(), static_cast<int64_t>(x.size()), 0.1f);
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = x[i] < 0 ? double(0.1f * x[i]) : double(x[i]);
  requireClose(y, want, 0.0);
}

namespace {

template <typename T> T binaryReference(BinaryKind kind, T a, T b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Pow:
    if constexpr (std::is_integral_v<T>) {
      T r = 1;
      for (T e = 0; e < b; ++e)
        r *= a;
      return r;
    } else {
      return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  case BinaryKind::Max:
    return a > b ? a : b;
  case BinaryKind::Min:
    return a < b ? a : b;
  case BinaryKind::Mod:
  case BinaryKind::FMod: {
    // Remainders from the exact quotient, then the divisor's sign for Mod (Python's %).
    double q = std::trunc(double(a) / double(b));
    T r = static_cast<T>(double(a) - q * double(b));
    if (kind == BinaryKind::Mod && r != 0 && ((r < 0) != (b < 0)))
      r = static_cast<T>(r + b);
    return r;
  }
  default:
    if constexpr (std::is_integral_v<T>) {
      switch (kind) {
      case BinaryKind::And: return a & b;
      case BinaryKind::Or: return a | b;
      case BinaryKind::Xor: return a ^ b;
      case BinaryKind::ShiftLeft:
        return b >= T(sizeof(T) * 8) ? T(0)
                                     : T(static_cast<std::make_unsigned_t<T>>(a) << b);
      case BinaryKind::ShiftRight:
        if (b >= T(sizeof(T) * 8))
          return a < 0 ? T(-1) : T(0);
        return a < 0 ? T(-((-(a + 1)) >> b) - 1) : T(a >> b); // floor(a / 2^b)
      default: break;
      }
    }
  }
  return 0;
}

// Operand values keep every op exact for integers and well conditioned for floats.
template <typename T> T binaryOperand(std::mt19937 &rng, BinaryKind kind, bool rhs) {
  if constexpr (std::is_integral_v<T>) {
    if (kind == BinaryKind::Pow)
      return static_cast<T>(rhs ? randomInt(rng, 0, 6) : randomInt(rng, -5, 5));
    bool divides = kind == BinaryKind::Div || kind == BinaryKind::Mod || kind == BinaryKind::FMod;
    if (kind == BinaryKind::ShiftLeft || kind == BinaryKind::ShiftRight)
      return static_cast<T>(rhs ? randomInt(rng, 0, sizeof(T) * 8 + 2)
                                : randomInt(rng, std::is_unsigned_v<T> ? 0 : -100, 100));
    if (std::is_unsigned_v<T>) {
      if (kind == BinaryKind::ShiftLeft || kind == BinaryKind::ShiftRight)
        return static_cast<T>(rhs ? randomInt(rng, 0, 9) : randomInt(rng, 0, 255));
      return static_cast<T>(divides && rhs ? randomInt(rng, 1, 9) : randomInt(rng, 0, 100));
    }
    if (divides && rhs) {
      T v = static_cast<T>(randomInt(rng, 1, 9));
      return randomInt(rng, 0, 1) ? v : static_cast<T>(-v);
    }
    return static_cast<T>(randomInt(rng, -50, 50));
  } else {
    std::uniform_real_distribution<T> dist(-4, 4);
    if (kind == BinaryKind::Pow)
      return rhs ? dist(rng) : std::uniform_real_distribution<T>(T(0.25), T(3))(rng);
    if ((kind == BinaryKind::Div || kind == BinaryKind::Mod || kind == BinaryKind::FMod) && rhs) {
      T v = std::uniform_real_distribution<T>(T(0.5), T(4))(rng);
      return randomInt(rng, 0, 1) ? v : -v;
    }
    return dist(rng);
  }
}

// A random operand shape that broadcasts to `out`: right-aligned, each dim kept or 1.
Shape broadcastableShape(std::mt19937 &rng, const Shape &out) {
  int64_t rank = randomInt(rng, 0, static_cast<int64_t>(out.size()));
  Shape shape(out.end() - rank, out.end());
  for (int64_t &d : shape)
    if (randomInt(rng, 0, 2) == 0)
      d = 1;
  return shape;
}

// Element strides of `shape` laid onto the dims of `out` (0 where broadcast).
Shape broadcastStrides(const Shape &shape, const Shape &out) {
  Shape strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = shape.size() - 1 - i, od = out.size() - 1 - i;
    strides[od] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

// NumPy broadcasting, by operand multi-index rather than strides.
int64_t broadcastSource(const Shape &outIdx, const Shape &shape) {
  Shape idx(shape.size());
  size_t lead = outIdx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    idx[d] = shape[d] == 1 ? 0 : outIdx[lead + d];
  return ravel(idx, shape);
}

template <typename T>
void checkBinaryCase(std::mt19937 &rng, BinaryKind kind, const Shape &out, const Shape &aShape,
                     const Shape &bShape) {
  INFO("kind " << static_cast<int>(kind) << " out " << describe(out) << " a " << describe(aShape)
               << " b " << describe(bShape));
  std::vector<T> a(static_cast<size_t>(numElements(aShape)));
  std::vector<T> b(static_cast<size_t>(numElements(bShape)));
  for (T &v : a)
    v = binaryOperand<T>(rng, kind, false);
  for (T &v : b)
    v = binaryOperand<T>(rng, kind, true);
  Shape aStrides = broadcastStrides(aShape, out), bStrides = broadcastStrides(bShape, out);
  std::vector<T> y(static_cast<size_t>(numElements(out)));
  binary<T>(kind, a.data(), aStrides.data(), b.data(), bStrides.data(), y.data(), out.data(),
            static_cast<int>(out.size()));
  std::vector<T> want(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    Shape idx = unravel(static_cast<int64_t>(i), out);
    want[i] =
        binaryReference(kind, a[broadcastSource(idx, aShape)], b[broadcastSource(idx, bShape)]);
  }
  if constexpr (std::is_integral_v<T>) {
    requireEqual(y, want);
  } else {
    std::vector<double> wantD(want.begin(), want.end());
    bool remainder = kind == BinaryKind::Mod || kind == BinaryKind::FMod;
    requireClose(y, wantD, kind == BinaryKind::Pow ? 1e-6 : remainder ? 1e-5 : 0.0);
  }
}

template <typename T> void checkBinaryRandom(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<BinaryKind> kinds = {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul,
                                   BinaryKind::Div, BinaryKind::Pow, BinaryKind::Max,
                                   BinaryKind::Min, BinaryKind::Mod, BinaryKind::FMod};
  if (std::is_integral_v<T>)
    kinds.insert(kinds.end(), {BinaryKind::And, BinaryKind::Or, BinaryKind::Xor,
                               BinaryKind::ShiftLeft, BinaryKind::ShiftRight});
  if (std::is_unsigned_v<T>)
    kinds = {BinaryKind::Add, BinaryKind::Max, BinaryKind::Mod, BinaryKind::And,
             BinaryKind::Or, BinaryKind::Xor, BinaryKind::ShiftLeft, BinaryKind::ShiftRight};
  for (BinaryKind kind : kinds) {
    for (int trial = 0; trial < 40; ++trial) {
      Shape out(static_cast<size_t>(randomInt(rng, 0, 5)));
      for (int64_t &d : out)
        d = randomInt(rng, 1, 5);
      checkBinaryCase<T>(rng, kind, out, broadcastableShape(rng, out),
                         broadcastableShape(rng, out));
    }
    // The flat fast paths: equal shapes, scalar either side, row and column broadcast.
    checkBinaryCase<T>(rng, kind, {1003}, {1003}, {1003});
    checkBinaryCase<T>(rng, kind, {7, 37}, {7, 37}, {});
    checkBinaryCase<T>(rng, kind, {7, 37}, {1}, {7, 37});
    checkBinaryCase<T>(rng, kind, {9, 19}, {9, 19}, {19});
    checkBinaryCase<T>(rng, kind, {9, 19}, {9, 1}, {1, 19});
    checkBinaryCase<T>(rng, kind, {3, 1, 5, 1, 4}, {3, 1, 5, 1, 4}, {5, 1, 1});
    checkBinaryCase<T>(rng, kind, {2, 0, 3}, {2, 0, 3}, {3});
  }
}

} // namespace

TEST_CASE("binary kernels broadcast like NumPy (float)", "[elementwise]") {
  checkBinaryRandom<float>(3);
}
TEST_CASE("binary kernels broadcast like NumPy (double)", "[elementwise]") {
  checkBinaryRandom<double>(4);
}
TEST_CASE("binary kernels broadcast like NumPy (int32)", "[elementwise]") {
  checkBinaryRandom<int32_t>(5);
}
TEST_CASE("binary kernels broadcast like NumPy (int64)", "[elementwise]") {
  checkBinaryRandom<int64_t>(6);
}
TEST_CASE("binary kernels broadcast like NumPy (uint8: bitwise, shifts)", "[elementwise]") {
  checkBinaryRandom<uint8_t>(7);
}
TEST_CASE("binary kernels broadcast like NumPy (int16, uint16)", "[elementwise]") {
  checkBinaryRandom<int16_t>(9);
  checkBinaryRandom<uint16_t>(10);
}

TEST_CASE("comparisons, select and byte broadcast follow NumPy", "[elementwise]") {
  std::mt19937 rng(8);
  Shape out = {3, 4, 5};
  for (int trial = 0; trial < 30; ++trial) {
    Shape aShape = broadcastableShape(rng, out), bShape = broadcastableShape(rng, out),
          cShape = broadcastableShape(rng, out);
    std::vector<int64_t> a(numElements(aShape)), b(numElements(bShape));
    std::vector<uint8_t> c(numElements(cShape));
    for (auto &v : a)
      v = randomInt(rng, -3, 3);
    for (auto &v : b)
      v = randomInt(rng, -3, 3);
    for (auto &v : c)
      v = static_cast<uint8_t>(randomInt(rng, 0, 1));
    Shape aS = broadcastStrides(aShape, out), bS = broadcastStrides(bShape, out),
          cS = broadcastStrides(cShape, out);
    std::vector<uint8_t> less(numElements(out)), equal(numElements(out));
    std::vector<int64_t> picked(numElements(out)), spread(numElements(out));
    compare<int64_t>(CompareKind::Less, a.data(), aS.data(), b.data(), bS.data(), less.data(),
                     out.data(), 3);
    compare<int64_t>(CompareKind::Equal, a.data(), aS.data(), b.data(), bS.data(), equal.data(),
                     out.data(), 3);
    select(c.data(), cS.data(), a.data(), aS.data(), b.data(), bS.data(), picked.data(),
           out.data(), 3, sizeof(int64_t));
    broadcastBytes(a.data(), aS.data(), spread.data(), out.data(), 3, sizeof(int64_t));
    for (int64_t i = 0; i < numElements(out); ++i) {
      Shape idx = unravel(i, out);
      int64_t x = a[broadcastSource(idx, aShape)], y = b[broadcastSource(idx, bShape)];
      bool cond = c[broadcastSource(idx, cShape)];
      REQUIRE(less[i] == (x < y));
      REQUIRE(equal[i] == (x == y));
      REQUIRE(picked[i] == (cond ? x : y));
      REQUIRE(spread[i] == x);
    }
  }
}

TEST_CASE("binary kernels accept arbitrary operand strides", "[elementwise]") {
  // a is a 3x4 matrix read transposed; b a 4-vector broadcast down the rows of the 4x3 result.
  std::vector<float> a(12), b = {1, 2, 3, 4}, y(12);
  std::iota(a.begin(), a.end(), 0.0f);
  Shape out = {4, 3}, aStrides = {1, 4}, bStrides = {1, 0};
  binary<float>(BinaryKind::Mul, a.data(), aStrides.data(), b.data(), bStrides.data(), y.data(),
                out.data(), 2);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(y[i * 3 + j] == a[j * 4 + i] * b[i]);
}

TEST_CASE("integer binary edge cases never trap", "[elementwise]") {
  Shape shape = {6};
  Shape strides = {1};
  auto run = [&](BinaryKind kind, std::vector<int32_t> a, std::vector<int32_t> b) {
    std::vector<int32_t> y(a.size());
    Shape n = {static_cast<int64_t>(a.size())};
    binary<int32_t>(kind, a.data(), strides.data(), b.data(), strides.data(), y.data(), n.data(),
                    1);
    return y;
  };
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  CHECK(run(BinaryKind::Div, {7, -7, 0, kMin, 7, -7}, {0, 0, 0, -1, 2, 2}) ==
        std::vector<int32_t>{0, 0, 0, kMin, 3, -3});
  CHECK(run(BinaryKind::Add, {kMax, kMin}, {1, -1}) == std::vector<int32_t>{kMin, kMax});
  CHECK(run(BinaryKind::Pow, {2, 1, -1, -1, 0, 3}, {-1, -5, -3, -2, -1, 0}) ==
        std::vector<int32_t>{0, 1, -1, 1, 0, 1});
  CHECK(run(BinaryKind::Pow, {2, -3, 10}, {31, 3, 9}) ==
        std::vector<int32_t>{kMin, -27, 1000000000});

  std::vector<int64_t> a64 = {std::numeric_limits<int64_t>::min(), 5}, b64 = {-1, 0}, y64(2);
  Shape two = {2};
  binary<int64_t>(BinaryKind::Div, a64.data(), strides.data(), b64.data(), strides.data(),
                  y64.data(), two.data(), 1);
  CHECK(y64 == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0});
}

TEST_CASE("float max and min propagate NaN", "[elementwise]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {nan, 1.0f, 2.0f}, b = {1.0f, nan, 3.0f}, y(3);
  Shape strides = {1}, n = {3};
  for (BinaryKind kind : {BinaryKind::Max, BinaryKind::Min}) {
    binary<float>(kind, a.data(), strides.data(), b.data(), strides.data(), y.data(), n.data(), 1);
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(y[2] == (kind == BinaryKind::Max ? 3.0f : 2.0f));
  }
}

// binary16 from its definition: (-1)^s 2^(e-15) (1 + m/1024), subnormal 2^-14 (m/1024).
static double halfValue(uint16_t bits) {
  int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  double v = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1.0 + m / 1024.0, e - 15);
  return (bits & 0x8000) ? -v : v;
}

TEST_CASE("float16 conversions: every half exactly, floats to the nearest (even) half",
          "[elementwise][half]") {
  std::vector<std::pair<double, uint16_t>> finite; // the non-negative finite halves, ascending
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    int e = (h >> 10) & 0x1f;
    float f = scalar::halfToFloat(h);
    if (e == 0x1f) {
      CHECK(((h & 0x3ff) ? std::isnan(f) : std::isinf(f)));
      CHECK(std::signbit(f) == bool(h & 0x8000));
      continue;
    }
    REQUIRE(double(f) == halfValue(h));
    REQUIRE(scalar::floatToHalf(f) == h); // round trip, signed zeros included
    if (!(h & 0x8000))
      finite.push_back({halfValue(h), h});
  }
  CHECK(scalar::floatToHalf(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  CHECK(scalar::floatToHalf(65520.0f) == 0x7c00); // halfway past the largest half rounds up to inf
  CHECK(scalar::floatToHalf(65519.0f) == 0x7bff);
  // Random floats against the nearest half found by search, ties to the even bit pattern.
  std::mt19937 rng(401);
  for (int i = 0; i < 200000; ++i) {
    float f = std::ldexp(randomFloats(rng, 1, 0.0f, 1.0f)[0], int(randomInt(rng, -26, 15)));
    uint16_t want = nearestCode(finite, f);
    INFO("float " << f);
    REQUIRE(scalar::floatToHalf(f) == want);
    REQUIRE(scalar::floatToHalf(-f) == uint16_t(want | 0x8000));
  }
}

//===----------------------------------------------------------------------------------------===//
// Fused elementwise chains
//===----------------------------------------------------------------------------------------===//

namespace {

// An input of a random chain over [N, C, H, W]: its own shape as the unfused ops see it.
struct ChainInput {
  Shape shape;
  int64_t repeat, period;
  std::vector<float> data;
};

ChainInput randomChainInput(std::mt19937 &rng, const Shape &out) {
  const int64_t n = out[0] * out[1] * out[2] * out[3], plane = out[2] * out[3];
  ChainInput input;
  switch (randomInt(rng, 0, 3)) {
  case 0:
    input = {out, 1, n, {}};
    break;
  case 1: // a scalar
    input = {{}, 1, 1, {}};
    break;
  case 2: // a row along W
    input = {{out[3]}, 1, out[3], {}};
    break;
  default: // one value per channel
    input = {{out[1], 1, 1}, plane, out[1], {}};
    break;
  }
  int64_t size = 1;
  for (int64_t d : input.shape)
    size *= d;
  input.data = randomFloats(rng, size, -2.0f, 2.0f);
  return input;
}

// Bits equal, any NaN equal to any NaN.
bool sameFloats(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
      return false;
  return true;
}

} // namespace

TEST_CASE("fused chains equal the unfused kernels bit for bit, on any thread count",
          "[elementwise]") {
  const UnaryKind unaries[] = {UnaryKind::Relu, UnaryKind::Sigmoid, UnaryKind::Tanh,
                               UnaryKind::Exp,  UnaryKind::Erf,     UnaryKind::Abs,
                               UnaryKind::Neg,  UnaryKind::Softplus, UnaryKind::Sqrt};
  const BinaryKind binaries[] = {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul,
                                 BinaryKind::Div, BinaryKind::Max, BinaryKind::Min,
                                 BinaryKind::Pow, BinaryKind::Mod};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    // Sizes around the chunk and thread thresholds, odd so no chunk boundary lines up.
    const Shape out = trial % 2 ? Shape{2, 5, 37, 29} : Shape{1, 3, randomInt(rng, 1, 9), 7};
    const int64_t n = out[0] * out[1] * out[2] * out[3];
    const int numInputs = int(randomInt(rng, 1, 4)), numSteps = int(randomInt(rng, 1, 12));
    std::vector<ChainInput> inputs;
    for (int i = 0; i < numInputs; ++i)
      inputs.push_back(randomChainInput(rng, out));
    // The unfused reference: every slot as a whole tensor, each step by the unfused kernel.
    std::vector<std::vector<float>> slots;
    for (const ChainInput &input : inputs) {
      std::vector<float> whole(n);
      Shape outShape(out.begin(), out.end());
      std::vector<int64_t> strides(4, 0), own(input.shape.size(), 1);
      for (size_t d = input.shape.size(); d-- > 1;)
        own[d - 1] = own[d] * input.shape[d];
      for (size_t d = 0; d < input.shape.size(); ++d)
        strides[4 - input.shape.size() + d] = input.shape[d] == 1 ? 0 : own[d];
      broadcastF32(input.data.data(), strides.data(), whole.data(), outShape.data(), 4);
      slots.push_back(whole);
    }
    std::vector<FusedStep> steps;
    const Shape flat{n};
    const int64_t unitStrides[] = {1};
    for (int s = 0; s < numSteps; ++s) {
      const int32_t available = int32_t(slots.size());
      const int32_t a = int32_t(randomInt(rng, 0, available - 1)),
                    b = int32_t(randomInt(rng, 0, available - 1));
      std::vector<float> result(n);
      switch (randomInt(rng, 0, 3)) {
      case 0: {
        UnaryKind kind = unaries[randomInt(rng, 0, std::size(unaries) - 1)];
        steps.push_back(unaryStep(kind, a));
        unary(kind, slots[a].data(), result.data(), n);
        break;
      }
      case 1: {
        BinaryKind kind = binaries[randomInt(rng, 0, std::size(binaries) - 1)];
        steps.push_back(binaryStep(kind, a, b));
        binary(kind, slots[a].data(), unitStrides, slots[b].data(), unitStrides, result.data(),
               flat.data(), 1);
        break;
      }
      case 2:
        steps.push_back(clipStep(a, -0.75f, 1.5f));
        clipF32(slots[a].data(), result.data(), n, -0.75f, 1.5f);
        break;
      default:
        steps.push_back(leakyReluStep(a, 0.2f));
        leakyReluF32(slots[a].data(), result.data(), n, 0.2f);
        break;
      }
      slots.push_back(result);
    }
    std::vector<FusedInput> fusedInputs;
    for (const ChainInput &input : inputs)
      fusedInputs.push_back({input.data.data(), input.repeat, input.period});
    INFO("trial " << trial << ": " << numInputs << " inputs, " << numSteps << " steps, n " << n);
    for (int threads : {1, 3}) {
      INFO("threads " << threads);
      ThreadPool *pool = threads > 1 ? createThreadPool(threads) : nullptr;
      std::optional<ThreadScope> scope(std::in_place, pool);
      std::vector<float> fused(n, -1.0f);
      fusedElementwiseF32(fusedInputs.data(), numInputs, steps.data(), numSteps, fused.data(), n);
      CHECK(sameFloats(fused, slots.back()));
      // In place over the first input when it has the output's shape.
      if (inputs[0].shape == out) {
        std::vector<float> overwritten = inputs[0].data;
        std::vector<FusedInput> inPlace = fusedInputs;
        inPlace[0].data = overwritten.data();
        fusedElementwiseF32(inPlace.data(), numInputs, steps.data(), numSteps,
                            overwritten.data(), n);
        CHECK(sameFloats(overwritten, slots.back()));
      }
      scope.reset();
      destroyThreadPool(pool);
    }
  }
}
