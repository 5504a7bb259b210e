// Checks shared by every generated model's API.
#include "dlc_runtime.h"

extern "C" dlc_status dlc_check_tensors(const dlc_tensor_info *expected, int count,
                                        const dlc_tensor *actual, int actualCount) {
  if (actualCount != count || (count > 0 && !actual))
    return DLC_INVALID_ARGUMENT;
  for (int i = 0; i < count; ++i) {
    const dlc_tensor &t = actual[i];
    const dlc_tensor_info &e = expected[i];
    if ((!t.data && e.bytes) || t.dtype != e.dtype || t.rank != e.rank ||
        (t.rank > 0 && !t.shape))
      return DLC_INVALID_ARGUMENT;
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] != e.shape[d])
        return DLC_INVALID_ARGUMENT;
  }
  return DLC_OK;
}

namespace {
bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}
} // namespace

extern "C" dlc_status dlc_check_buffers(const dlc_model_info *info, const void *const *inputs,
                                        void *const *outputs) {
  if (!info || (info->num_inputs && !inputs) || !outputs)
    return DLC_INVALID_ARGUMENT;
  for (int i = 0; i < info->num_inputs; ++i)
    if (!inputs[i] && info->inputs[i].bytes)
      return DLC_INVALID_ARGUMENT;
  for (int o = 0; o < info->num_outputs; ++o) {
    size_t bytes = info->outputs[o].bytes;
    if (!outputs[o] && bytes)
      return DLC_INVALID_ARGUMENT;
    for (int i = 0; i < info->num_inputs; ++i)
      if (overlaps(outputs[o], bytes, inputs[i], info->inputs[i].bytes))
        return DLC_INVALID_ARGUMENT;
    for (int other = 0; other < o; ++other)
      if (overlaps(outputs[o], bytes, outputs[other], info->outputs[other].bytes))
        return DLC_INVALID_ARGUMENT;
  }
  return DLC_OK;
}
