// Internal to the runtime: a parallel loop over the current thread's pool (see ThreadScope).
#ifndef DLC_RUNTIME_PARALLEL_H
#define DLC_RUNTIME_PARALLEL_H

#include "dlc_kernels.h"

#include <type_traits>
#include <utility>

namespace dlc {
namespace rt {

// Calls f(begin, end) on contiguous, disjoint ranges covering [0, count), one per thread, each
// at least `grain` long (fewer parts when count is small). The ranges depend only on count
// and the thread count.
template <typename F> void parallelFor(int64_t count, int64_t grain, F &&f) {
  if (count <= 0)
    return;
  int64_t parts = activeThreadCount();
  if (grain > 0 && count / grain < parts)
    parts = count / grain;
  if (parts < 1)
    parts = 1;
  struct Loop {
    std::remove_reference_t<F> *f;
    int64_t count, parts;
  } loop{&f, count, parts};
  // One call site for f, also when serial (parallelRun then runs the one part here): each
  // copy of f's body is compiled once per kernel instantiation.
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

// Below this much work (element operations) a part is not worth waking a thread for.
constexpr int64_t kMinWorkPerPart = 32768;

// The runtime's one partitioning rule for kernels whose items are independent: parallelFor
// over `count` items of `workPerItem` element operations each, every part at least
// kMinWorkPerPart of work. Each item is computed the same way whatever the split, so results
// do not depend on the thread count.
template <typename F> void parallelForWork(int64_t count, int64_t workPerItem, F &&f) {
  const int64_t work = workPerItem > 0 ? workPerItem : 1;
  parallelFor(count, (kMinWorkPerPart + work - 1) / work, std::forward<F>(f));
}

// f(begin, end) over [0, n) elements in parts of whole kBlock-element blocks (the last may be
// shorter): for flat elementwise kernels.
template <typename F> void parallelElements(int64_t n, F &&f) {
  constexpr int64_t kBlock = 1024;
  parallelForWork((n + kBlock - 1) / kBlock, kBlock, [&](int64_t first, int64_t end) {
    f(first * kBlock, end * kBlock < n ? end * kBlock : n);
  });
}

} // namespace rt
} // namespace dlc

#endif
