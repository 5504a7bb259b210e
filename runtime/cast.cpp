#include "dlc_kernels.h"
#include "scalar_ops.h"

#include <algorithm>
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

using scalar::MiniFloat;

// The small float format of t, or false.
bool miniFloatOf(dlc_dtype t, MiniFloat *type) {
  switch (t) {
  case DLC_F8E4M3FN:
    *type = MiniFloat::E4M3FN;
    return true;
  case DLC_F8E4M3FNUZ:
    *type = MiniFloat::E4M3FNUZ;
    return true;
  case DLC_F8E5M2:
    *type = MiniFloat::E5M2;
    return true;
  case DLC_F8E5M2FNUZ:
    *type = MiniFloat::E5M2FNUZ;
    return true;
  case DLC_F4E2M1:
    *type = MiniFloat::E2M1;
    return true;
  default:
    return false;
  }
}

bool isMiniFloat(dlc_dtype t) {
  MiniFloat unused;
  return miniFloatOf(t, &unused);
}

int smallIntBits(dlc_dtype t) {
  return t == DLC_I4 || t == DLC_U4 ? 4 : t == DLC_I2 || t == DLC_U2 ? 2 : 0;
}

// The types the ordinary conversion templates do not know.
bool isStorageOnly(dlc_dtype t) {
  return t == DLC_BF16 || t == DLC_F8E8M0 || isMiniFloat(t) || smallIntBits(t);
}

bool isFloating(dlc_dtype t) {
  return t == DLC_F32 || t == DLC_F64 || t == DLC_F16 || t == DLC_BF16 || t == DLC_F8E8M0 ||
         isMiniFloat(t);
}

template <typename Wide> Wide readStorageOnly(dlc_dtype t, const void *x, int64_t i) {
  if (t == DLC_BF16)
    return Wide(bfloatToFloat(static_cast<const uint16_t *>(x)[i]));
  MiniFloat type;
  if (miniFloatOf(t, &type))
    return Wide(
        scalar::decodeMiniFloat(scalar::miniFloatFormat(type), static_cast<const uint8_t *>(x)[i]));
  if (t == DLC_F8E8M0)
    return Wide(scalar::decodeE8M0(static_cast<const uint8_t *>(x)[i]));
  if (t == DLC_I4 || t == DLC_I2)
    return Wide(static_cast<const int8_t *>(x)[i]);
  return Wide(static_cast<const uint8_t *>(x)[i]);
}

template <typename Wide>
void writeStorageOnly(dlc_dtype t, Wide v, void *y, int64_t i, bool saturate, Rounding rounding) {
  MiniFloat type;
  if (t == DLC_BF16) {
    static_cast<uint16_t *>(y)[i] = floatToBfloat(float(v));
  } else if (miniFloatOf(t, &type)) {
    static_cast<uint8_t *>(y)[i] =
        scalar::encodeMiniFloat(scalar::miniFloatFormat(type), double(v), saturate);
  } else if (t == DLC_F8E8M0) {
    static_cast<uint8_t *>(y)[i] = scalar::encodeE8M0(double(v), saturate, rounding);
  } else {
    int64_t whole;
    if constexpr (std::is_same_v<Wide, double>)
      whole = scalar::truncatedLowByte(v);
    else
      whole = v;
    static_cast<uint8_t *>(y)[i] =
        uint8_t(scalar::wrapToBits(whole, smallIntBits(t), t == DLC_I4 || t == DLC_I2));
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
