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
