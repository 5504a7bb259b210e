// Internal to the runtime: the depthwise convolution's row kernel, written over the same
// vector traits as gemm_kernel.h and compiled once per instruction set (isa_*.cpp, gemm.cpp).
// Everything here has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_DEPTHWISE_KERNEL_H
#define DLC_RUNTIME_DEPTHWISE_KERNEL_H

#include "gemm.h"

namespace dlc {
namespace rt {
namespace {

template <class V> struct DepthwiseRow {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes;
  // Independent accumulators per step: one chain of multiply-adds per tap would wait on the
  // previous one's latency.
  static constexpr int64_t kVectors = 4;

  // Vectors [j, j + count * kLanes) of the row, all taps, accumulators in registers.
  template <int64_t Count> static void block(const DepthwiseRowArgs &r, int64_t j, Vec *out) {
    Vec acc[Count];
    for (int64_t v = 0; v < Count; ++v)
      acc[v] = V::broadcast(r.init);
    for (int64_t t = 0; t < r.taps; ++t) {
      const Vec w = V::broadcast(r.weights[t]);
      const float *src = r.sources[t] + j;
      for (int64_t v = 0; v < Count; ++v)
        acc[v] = V::fma(w, V::load(src + v * kLanes), acc[v]);
    }
    for (int64_t v = 0; v < Count; ++v)
      out[v] = acc[v];
  }

  static void run(const DepthwiseRowArgs &r) {
    int64_t j = 0;
    for (; j + kVectors * kLanes <= r.n; j += kVectors * kLanes) {
      Vec out[kVectors];
      block<kVectors>(r, j, out);
      for (int64_t v = 0; v < kVectors; ++v)
        V::store(r.y + j + v * kLanes, out[v]);
    }
    for (; j < r.n; j += kLanes) {
      Vec out[1];
      block<1>(r, j, out);
      if (j + kLanes <= r.n) {
        V::store(r.y + j, out[0]);
      } else {
        alignas(64) float tail[kLanes];
        V::store(tail, out[0]);
        for (int64_t l = 0; j + l < r.n; ++l)
          r.y[j + l] = tail[l];
      }
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
