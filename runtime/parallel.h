// Internal to the runtime: a parallel loop over the current thread's pool (see ThreadScope).
#ifndef DLC_RUNTIME_PARALLEL_H
#define DLC_RUNTIME_PARALLEL_H

#include "dlc_kernels.h"
#include "shares.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace dlc {
namespace rt {

// Items [0, count) dealt out as `owners` contiguous ranges. An owner claims its own range's
// items front to back, then takes the others' from their backs: equally fast threads each
// work through their own range (the data they touched last stays in their caches), and a
// faster one also takes over the end of a slower one's.
class ClaimedRanges {
public:
  void reset(int64_t count, int owners) {
    owners_ = owners;
    for (int o = 0; o < owners; ++o)
      ranges_[o].frontBack.store(
          pack(shareStart(count, owners, o), shareStart(count, owners, o + 1)));
  }
  // The next item for `owner`, or -1 when none is left.
  int64_t claim(int owner) {
    for (int i = 0; i < owners_; ++i) {
      const int from = (owner + i) % owners_;
      std::atomic<uint64_t> &range = ranges_[from].frontBack;
      uint64_t bounds = range.load();
      for (;;) {
        const int64_t front = int64_t(bounds >> 32), back = int64_t(bounds & 0xffffffffu);
        if (front >= back)
          break;
        const bool own = from == owner;
        if (range.compare_exchange_weak(bounds, own ? pack(front + 1, back)
                                                    : pack(front, back - 1)))
          return own ? front : back - 1;
      }
    }
    return -1;
  }

private:
  static uint64_t pack(int64_t front, int64_t back) {
    return uint64_t(front) << 32 | uint64_t(back);
  }
  struct alignas(64) Range {
    std::atomic<uint64_t> frontBack{0};
  };
  Range ranges_[kMaxThreads];
  int owners_ = 0;
};

// Calls f(begin, end) on contiguous, disjoint ranges covering [0, count), partsPerThread per
// thread, each at least `grain` long (fewer parts when count is small). The ranges depend
// only on count and the thread count; which thread runs a range, on the threads' speed.
template <typename F>
void parallelFor(int64_t count, int64_t grain, F &&f, int64_t partsPerThread = 1) {
  if (count <= 0)
    return;
  const int64_t threads = activeThreadCount();
  int64_t parts = threads * partsPerThread;
  if (grain > 0 && count / grain < parts)
    parts = count / grain;
  // More parts than threads come in a multiple of the thread count: equally fast threads
  // then finish together (3 parts on 2 threads would leave one thread idle a third of the
  // time).
  if (parts > threads)
    parts = parts / threads * threads;
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
// Independent items come in this many parts per thread, so that a thread on a faster core
// takes more of them. Two threads, per-op minimums: 4 parts cost EfficientNet-B0 6% (its
// serial global pools read their inputs from wherever the parts before left them), 1 and 4
// the same on DeiT-S and BERT; 2 keeps the takeover with half the pieces.
constexpr int64_t kItemPartsPerThread = 2;

// Items [0, count) that each need a slot of scratch space, of which there are `slots`: one
// worker per thread (at most `slots`) sets up its slot (setUp(slot)), then claims items
// (ClaimedRanges) and runs f(slot, item) in that slot, which stays in its cache. No worker
// waits for another between items, and a faster one takes over a slower one's (in batches
// of `slots` items, each ending in a wait for the slower thread, a DB detector's 3x3 convs
// ran only 1.2-1.3x faster on two threads than on one). Each worker gets at least
// kMinWorkPerPart of the items' work (`workPerItem` element operations each). An item's
// result must not depend on its slot.
template <typename SetUp, typename F>
void parallelForInSlots(int64_t count, int64_t slots, int64_t workPerItem, SetUp &&setUp,
                        F &&f) {
  int64_t workers = activeThreadCount();
  workers = std::min(workers, std::min(count, slots));
  workers = std::min(workers, std::max<int64_t>(1, count * workPerItem / kMinWorkPerPart));
  if (workers <= 0)
    return;
  ClaimedRanges claims;
  claims.reset(count, int(workers));
  parallelFor(workers, 1, [&](int64_t first, int64_t end) {
    for (int64_t slot = first; slot < end; ++slot) {
      setUp(slot);
      for (int64_t item; (item = claims.claim(int(slot))) >= 0;)
        f(slot, item);
    }
  });
}

// The same for slots that need no setting up.
template <typename F>
void parallelForInSlots(int64_t count, int64_t slots, int64_t workPerItem, F &&f) {
  parallelForInSlots(count, slots, workPerItem, [](int64_t) {}, std::forward<F>(f));
}

// The runtime's one partitioning rule for kernels whose items are independent: parallelFor
// over `count` items of `workPerItem` element operations each, every part at least
// kMinWorkPerPart of work. Each item is computed the same way whatever the split, so results
// do not depend on the thread count.
template <typename F> void parallelForWork(int64_t count, int64_t workPerItem, F &&f) {
  const int64_t work = workPerItem > 0 ? workPerItem : 1;
  parallelFor(count, (kMinWorkPerPart + work - 1) / work, std::forward<F>(f),
              kItemPartsPerThread);
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
