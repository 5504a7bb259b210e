#include "dlc_runtime.h"

#include <cmath>
#include <cstring>

namespace dlc {
namespace rt {

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24, exact in float
    return (sign ? -1.0f : 1.0f) * std::ldexp(float(mantissa), -24);
  uint32_t out = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13) // inf, NaN
                                  : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep it quiet
    return uint16_t(sign | 0x7e00);
  if (magnitude >= 0x47800000u) // >= 65536 (or inf): rounds to inf
    return uint16_t(sign | 0x7c00);
  if (magnitude < 0x38800000u) { // below 2^-14: subnormal half, round to nearest even
    float scaled = std::fabs(value) * 16777216.0f; // in units of 2^-24, exact
    float rounded = std::nearbyint(scaled);        // ties to even in the default mode
    return uint16_t(sign | uint16_t(rounded));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even; a carry
  // into the exponent (or to inf) is the right result.
  uint32_t half = ((magnitude >> 13) - (112u << 10));
  uint32_t dropped = magnitude & 0x1fff;
  if (dropped > 0x1000 || (dropped == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

namespace {

// float16 values travel as their bits; conversions go through float.
struct Half {
  uint16_t bits;
};


template <typename From, typename To> void convert(const void *x, void *y, int64_t n) {
  const From *in = static_cast<const From *>(x);
  To *out = static_cast<To *>(y);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<From, Half> && std::is_same_v<To, Half>)
      out[i] = in[i];
    else if constexpr (std::is_same_v<From, Half>)
      out[i] = static_cast<To>(halfToFloat(in[i].bits));
    else if constexpr (std::is_same_v<To, Half>)
      out[i] = Half{floatToHalf(static_cast<float>(in[i]))};
    else
      out[i] = static_cast<To>(in[i]);
  }
}

template <typename From> void convertFrom(const void *x, dlc_dtype to, void *y, int64_t n) {
  switch (to) {
  case DLC_F32: convert<From, float>(x, y, n); break;
  case DLC_F64: convert<From, double>(x, y, n); break;
  case DLC_I32: convert<From, int32_t>(x, y, n); break;
  case DLC_I64: convert<From, int64_t>(x, y, n); break;
  case DLC_I8: convert<From, int8_t>(x, y, n); break;
  case DLC_U8: convert<From, uint8_t>(x, y, n); break;
  case DLC_I16: convert<From, int16_t>(x, y, n); break;
  case DLC_U16: convert<From, uint16_t>(x, y, n); break;
  case DLC_U32: convert<From, uint32_t>(x, y, n); break;
  case DLC_U64: convert<From, uint64_t>(x, y, n); break;
  case DLC_F16: convert<From, Half>(x, y, n); break;
  case DLC_BOOL: {
    const From *in = static_cast<const From *>(x);
    uint8_t *out = static_cast<uint8_t *>(y);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<From, Half>)
        out[i] = halfToFloat(in[i].bits) != 0.0f;
      else
        out[i] = in[i] != From(0);
    }
    break;
  }
  }
}

} // namespace

void cast(dlc_dtype from, const void *x, dlc_dtype to, void *y, int64_t n) {
  switch (from) {
  case DLC_F32: convertFrom<float>(x, to, y, n); break;
  case DLC_F64: convertFrom<double>(x, to, y, n); break;
  case DLC_I32: convertFrom<int32_t>(x, to, y, n); break;
  case DLC_I64: convertFrom<int64_t>(x, to, y, n); break;
  case DLC_I8: convertFrom<int8_t>(x, to, y, n); break;
  case DLC_I16: convertFrom<int16_t>(x, to, y, n); break;
  case DLC_U16: convertFrom<uint16_t>(x, to, y, n); break;
  case DLC_U32: convertFrom<uint32_t>(x, to, y, n); break;
  case DLC_U64: convertFrom<uint64_t>(x, to, y, n); break;
  case DLC_F16: convertFrom<Half>(x, to, y, n); break;
  case DLC_U8:
  case DLC_BOOL: convertFrom<uint8_t>(x, to, y, n); break;
  }
}

} // namespace rt
} // namespace dlc
