#include "dlc_runtime.h"

namespace dlc {
namespace rt {
namespace {

template <typename From, typename To> void convert(const void *x, void *y, int64_t n) {
  const From *in = static_cast<const From *>(x);
  To *out = static_cast<To *>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<To>(in[i]);
}

template <typename From> void convertFrom(const void *x, dlc_dtype to, void *y, int64_t n) {
  switch (to) {
  case DLC_F32: convert<From, float>(x, y, n); break;
  case DLC_F64: convert<From, double>(x, y, n); break;
  case DLC_I32: convert<From, int32_t>(x, y, n); break;
  case DLC_I64: convert<From, int64_t>(x, y, n); break;
  case DLC_I8: convert<From, int8_t>(x, y, n); break;
  case DLC_U8: convert<From, uint8_t>(x, y, n); break;
  case DLC_BOOL: {
    const From *in = static_cast<const From *>(x);
    uint8_t *out = static_cast<uint8_t *>(y);
    for (int64_t i = 0; i < n; ++i)
      out[i] = in[i] != From(0);
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
  case DLC_U8:
  case DLC_BOOL: convertFrom<uint8_t>(x, to, y, n); break;
  }
}

} // namespace rt
} // namespace dlc
