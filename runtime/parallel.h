// Internal to the runtime: a parallel loop over the current thread's pool (see ThreadScope).
#ifndef DLC_RUNTIME_PARALLEL_H
#define DLC_RUNTIME_PARALLEL_H

#include "dlc_kernels.h"

namespace dlc {
namespace rt {

// Calls f(begin, end) on contiguous, disjoint ranges covering [0, count), one per thread, each
// at least `grain` long (fewer parts when count is small). The ranges depend only on count
// and the thread count.
template <typename F> void parallelFor(int64_t count, int64_t grain, F &&f) {
  int64_t parts = activeThreadCount();
  if (grain > 0 && count / grain < parts)
    parts = count / grain;
  if (parts <= 1) {
    if (count > 0)
      f(int64_t(0), count);
    return;
  }
  struct Loop {
    F *f;
    int64_t count, parts;
  } loop{&f, count, parts};
  parallelRun(
      int(parts),
      [](void *context, int part) {
        const Loop &l = *static_cast<const Loop *>(context);
        const int64_t begin = l.count * part / l.parts, end = l.count * (part + 1) / l.parts;
        if (begin < end)
          (*l.f)(begin, end);
      },
      &loop);
}

} // namespace rt
} // namespace dlc

#endif
