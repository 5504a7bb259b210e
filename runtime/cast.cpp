#include "dlc_runtime.h"
#include "scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace dlc {
namespace rt {

namespace {

using scalar::bfloatToFloat;
using scalar::floatToBfloat;
using scalar::floatToHalf;
using scalar::halfToFloat;

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
      out[i] = scalar::convertValue<To>(halfToFloat(in[i].bits));
    else if constexpr (std::is_same_v<To, Half>)
      out[i] = Half{floatToHalf(static_cast<float>(in[i]))};
    else
      out[i] = scalar::convertValue<To>(in[i]);
  }
}

template <typename From> void convertFrom(const void *x, dlc_dtype to, void *y, int64_t n) {
  switch (to) {
  case DLC_F32:
    convert<From, float>(x, y, n);
    break;
  case DLC_F64:
    convert<From, double>(x, y, n);
    break;
  case DLC_I32:
    convert<From, int32_t>(x, y, n);
    break;
  case DLC_I64:
    convert<From, int64_t>(x, y, n);
    break;
  case DLC_I8:
    convert<From, int8_t>(x, y, n);
    break;
  case DLC_U8:
    convert<From, uint8_t>(x, y, n);
    break;
  case DLC_I16:
    convert<From, int16_t>(x, y, n);
    break;
  case DLC_U16:
    convert<From, uint16_t>(x, y, n);
    break;
  case DLC_U32:
    convert<From, uint32_t>(x, y, n);
    break;
  case DLC_U64:
    convert<From, uint64_t>(x, y, n);
    break;
  case DLC_F16:
    convert<From, Half>(x, y, n);
    break;
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
  default:
    break; // storage-only types: castThrough converts them
  }
}

// The small float formats of ONNX (float8, and float4 in a byte's low bits): exponent and
// mantissa widths, bias, and how each spends its special codes.
enum class Specials {
  Ieee,         // all-ones exponent: infinity (mantissa 0) or NaN
  OnlyNan,      // "fn": only S.1111.111 is NaN, no infinity
  UnsignedZero, // "fnuz": the negative-zero code is the only NaN, no infinity
  None,         // finite only (float4 e2m1): conversions always saturate
};
struct MiniFloatFormat {
  int exponentBits, mantissaBits, bias;
  Specials specials;
  uint32_t signBit() const { return 1u << (exponentBits + mantissaBits); }
};
constexpr MiniFloatFormat kE4M3FN{4, 3, 7, Specials::OnlyNan};
constexpr MiniFloatFormat kE4M3FNUZ{4, 3, 8, Specials::UnsignedZero};
constexpr MiniFloatFormat kE5M2{5, 2, 15, Specials::Ieee};
constexpr MiniFloatFormat kE5M2FNUZ{5, 2, 16, Specials::UnsignedZero};
constexpr MiniFloatFormat kE2M1{2, 1, 1, Specials::None};

double largestFinite(const MiniFloatFormat &f) {
  int topExponent = (1 << f.exponentBits) - (f.specials == Specials::Ieee ? 2 : 1) - f.bias;
  int topMantissa = (1 << f.mantissaBits) - (f.specials == Specials::OnlyNan ? 2 : 1);
  return std::ldexp(1.0 + std::ldexp(topMantissa, -f.mantissaBits), topExponent);
}

double decodeMiniFloat(const MiniFloatFormat &f, uint8_t bits) {
  const uint32_t sign = bits & f.signBit(), magnitudeBits = bits & (f.signBit() - 1);
  const int allOnes = (1 << f.exponentBits) - 1;
  int exponent = int(magnitudeBits >> f.mantissaBits);
  int mantissa = int(magnitudeBits & ((1u << f.mantissaBits) - 1));
  bool special = f.specials == Specials::UnsignedZero ? bits == f.signBit()
                 : f.specials == Specials::OnlyNan    ? magnitudeBits == f.signBit() - 1
                 : f.specials == Specials::Ieee       ? exponent == allOnes
                                                      : false;
  if (special)
    return f.specials == Specials::Ieee && mantissa == 0 ? (sign ? -HUGE_VAL : HUGE_VAL)
                                                         : std::nan("");
  int scale = 1 - f.bias - f.mantissaBits; // of the subnormals' unit; normals add exponent - 1
  double magnitude = exponent == 0
                         ? std::ldexp(mantissa, scale)
                         : std::ldexp(mantissa | (1 << f.mantissaBits), scale + exponent - 1);
  return sign ? -magnitude : magnitude;
}

// Round to nearest even, independent of the floating-point environment.
double roundHalfEven(double q) {
  double r = std::floor(q), rest = q - r;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(r, 2.0) != 0.0))
    r += 1.0;
  return r;
}

uint8_t encodeMiniFloat(const MiniFloatFormat &f, double x, bool saturate) {
  const int m = f.mantissaBits;
  const uint32_t signBit = f.signBit(), allOnes = (1u << f.exponentBits) - 1;
  // NaN codes as ml_dtypes (ONNX's reference) writes them; float4 has none and takes -0.
  uint32_t nan = f.specials == Specials::UnsignedZero ? signBit
                 : f.specials == Specials::OnlyNan    ? signBit - 1
                 : f.specials == Specials::Ieee       ? (allOnes << m) | (1u << (m - 1))
                                                      : signBit;
  if (std::isnan(x))
    return uint8_t(nan);
  uint32_t sign = std::signbit(x) ? signBit : 0;
  uint32_t overflow = f.specials == Specials::Ieee      ? sign | (allOnes << m)
                      : f.specials == Specials::OnlyNan ? sign | (signBit - 1)
                                                        : signBit;
  double magnitude = std::fabs(x), largest = largestFinite(f);
  if ((saturate || f.specials == Specials::None) && magnitude > largest)
    magnitude = largest;
  if (std::isinf(magnitude))
    return uint8_t(overflow);
  // Round in units of the quantum of magnitude's binade (subnormals share the lowest one);
  // values that round past the largest finite one overflow.
  int binade;
  std::frexp(magnitude, &binade);
  int exponent = std::max(binade - 1, 1 - f.bias);
  double units = roundHalfEven(std::ldexp(magnitude, m - exponent));
  if (std::ldexp(units, exponent - m) > largest)
    return uint8_t(overflow);
  if (units == 0.0)
    return uint8_t(f.specials == Specials::UnsignedZero ? 0 : sign);
  uint32_t mantissa = uint32_t(units);
  if (mantissa >= (2u << m)) { // rounding carried into the next binade
    mantissa >>= 1;
    ++exponent;
  }
  uint32_t biased = mantissa >= (1u << m) ? uint32_t(exponent + f.bias) : 0;
  return uint8_t(sign | (biased << m) | (mantissa & ((1u << m) - 1)));
}

// float8 e8m0 holds only an exponent: 2^(bits - 127), 0xFF NaN. Rounding follows the float32
// bits as ONNX's reference does: up adds one to the exponent when any mantissa bit is set,
// nearest rounds on the guard bit (ties away from a zero exponent), down truncates; without
// `saturate` a carry past 0xFE gives NaN.
uint8_t encodeE8M0(double x, bool saturate, Rounding rounding) {
  float narrow = float(x);
  uint32_t bits;
  std::memcpy(&bits, &narrow, 4);
  uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff)
    return 0xff;
  bool up = false;
  if (rounding == Rounding::Up)
    up = (bits & 0x7fffff) != 0;
  else if (rounding == Rounding::Nearest)
    up = (bits & 0x400000) && ((bits & 0x200000) || (bits & 0x1fffff) || exponent > 0);
  if (up && !(saturate && exponent == 0xfe))
    ++exponent;
  return uint8_t(exponent);
}

double decodeE8M0(uint8_t bits) {
  return bits == 0xff ? std::nan("") : std::ldexp(1.0, bits - 127);
}

const MiniFloatFormat *miniFloatFormat(dlc_dtype t) {
  switch (t) {
  case DLC_F8E4M3FN:
    return &kE4M3FN;
  case DLC_F8E4M3FNUZ:
    return &kE4M3FNUZ;
  case DLC_F8E5M2:
    return &kE5M2;
  case DLC_F8E5M2FNUZ:
    return &kE5M2FNUZ;
  case DLC_F4E2M1:
    return &kE2M1;
  default:
    return nullptr;
  }
}

int smallIntBits(dlc_dtype t) {
  return t == DLC_I4 || t == DLC_U4 ? 4 : t == DLC_I2 || t == DLC_U2 ? 2 : 0;
}

// The types the ordinary conversion templates do not know.
bool isStorageOnly(dlc_dtype t) {
  return t == DLC_BF16 || t == DLC_F8E8M0 || miniFloatFormat(t) || smallIntBits(t);
}

bool isFloating(dlc_dtype t) {
  return t == DLC_F32 || t == DLC_F64 || t == DLC_F16 || t == DLC_BF16 || t == DLC_F8E8M0 ||
         miniFloatFormat(t);
}

// Keeps the low bits of v as a 4- or 2-bit integer, sign-extended when signed.
int64_t wrapToBits(int64_t v, dlc_dtype t) {
  int bits = smallIntBits(t);
  int64_t low = int64_t(uint64_t(v) & ((uint64_t(1) << bits) - 1));
  bool negative = (t == DLC_I4 || t == DLC_I2) && low >= (int64_t(1) << (bits - 1));
  return negative ? low - (int64_t(1) << bits) : low;
}

template <typename Wide> Wide readStorageOnly(dlc_dtype t, const void *x, int64_t i) {
  if (t == DLC_BF16)
    return Wide(bfloatToFloat(static_cast<const uint16_t *>(x)[i]));
  if (const MiniFloatFormat *f = miniFloatFormat(t))
    return Wide(decodeMiniFloat(*f, static_cast<const uint8_t *>(x)[i]));
  if (t == DLC_F8E8M0)
    return Wide(decodeE8M0(static_cast<const uint8_t *>(x)[i]));
  if (t == DLC_I4 || t == DLC_I2)
    return Wide(static_cast<const int8_t *>(x)[i]);
  return Wide(static_cast<const uint8_t *>(x)[i]);
}

template <typename Wide>
void writeStorageOnly(dlc_dtype t, Wide v, void *y, int64_t i, bool saturate, Rounding rounding) {
  if (t == DLC_BF16) {
    static_cast<uint16_t *>(y)[i] = floatToBfloat(float(v));
  } else if (const MiniFloatFormat *f = miniFloatFormat(t)) {
    static_cast<uint8_t *>(y)[i] = encodeMiniFloat(*f, double(v), saturate);
  } else if (t == DLC_F8E8M0) {
    static_cast<uint8_t *>(y)[i] = encodeE8M0(double(v), saturate, rounding);
  } else {
    int64_t whole = 0;
    if constexpr (std::is_same_v<Wide, double>) {
      // Truncate; only the low bits survive, and fmod keeps them exactly for any magnitude.
      if (std::isfinite(v))
        whole = int64_t(std::fmod(std::trunc(v), 256.0));
    } else {
      whole = v;
    }
    static_cast<uint8_t *>(y)[i] = uint8_t(wrapToBits(whole, t));
  }
}

// Conversions with a storage-only type on either side go through a wide intermediate, a chunk
// at a time: int64 between integer types (exact), double otherwise.
template <typename Wide>
void castThrough(dlc_dtype from, const void *x, dlc_dtype to, void *y, int64_t n, bool saturate,
                 Rounding rounding) {
  constexpr int64_t kChunk = 256;
  constexpr dlc_dtype wide = std::is_same_v<Wide, double> ? DLC_F64 : DLC_I64;
  Wide buffer[kChunk];
  const size_t fromSize = dlc_dtype_size(from), toSize = dlc_dtype_size(to);
  for (int64_t start = 0; start < n; start += kChunk) {
    int64_t count = std::min(kChunk, n - start);
    const void *in = static_cast<const char *>(x) + start * fromSize;
    void *out = static_cast<char *>(y) + start * toSize;
    if (isStorageOnly(from))
      for (int64_t i = 0; i < count; ++i)
        buffer[i] = readStorageOnly<Wide>(from, in, i);
    else
      cast(from, in, wide, buffer, count);
    if (isStorageOnly(to))
      for (int64_t i = 0; i < count; ++i)
        writeStorageOnly<Wide>(to, buffer[i], out, i, saturate, rounding);
    else
      cast(wide, buffer, to, out, count);
  }
}

} // namespace

void cast(dlc_dtype from, const void *x, dlc_dtype to, void *y, int64_t n, bool saturate,
          Rounding rounding) {
  if (isStorageOnly(from) || isStorageOnly(to)) {
    if (isFloating(from) || isFloating(to))
      castThrough<double>(from, x, to, y, n, saturate, rounding);
    else
      castThrough<int64_t>(from, x, to, y, n, saturate, rounding);
    return;
  }
  switch (from) {
  case DLC_F32:
    convertFrom<float>(x, to, y, n);
    break;
  case DLC_F64:
    convertFrom<double>(x, to, y, n);
    break;
  case DLC_I32:
    convertFrom<int32_t>(x, to, y, n);
    break;
  case DLC_I64:
    convertFrom<int64_t>(x, to, y, n);
    break;
  case DLC_I8:
    convertFrom<int8_t>(x, to, y, n);
    break;
  case DLC_I16:
    convertFrom<int16_t>(x, to, y, n);
    break;
  case DLC_U16:
    convertFrom<uint16_t>(x, to, y, n);
    break;
  case DLC_U32:
    convertFrom<uint32_t>(x, to, y, n);
    break;
  case DLC_U64:
    convertFrom<uint64_t>(x, to, y, n);
    break;
  case DLC_F16:
    convertFrom<Half>(x, to, y, n);
    break;
  case DLC_U8:
  case DLC_BOOL:
    convertFrom<uint8_t>(x, to, y, n);
    break;
  default:
    break; // storage-only types are handled above
  }
}

} // namespace rt
} // namespace dlc
