// Internal to the runtime: the depthwise convolution's row kernels (planar and channels-last),
// written over the same
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
    // The rest (short rows: 56 or 28 columns) in one block of up to kVectors accumulators,
    // not vector by vector, whose single chain of multiply-adds would wait on each one.
    const int64_t rest = r.n - j, count = (rest + kLanes - 1) / kLanes;
    if (count == 0)
      return;
    Vec out[kVectors];
    if (count == 1)
      block<1>(r, j, out);
    else if (count == 2)
      block<2>(r, j, out);
    else if (count == 3)
      block<3>(r, j, out);
    else
      block<kVectors>(r, j, out);
    for (int64_t v = 0; v < count; ++v) {
      const int64_t lanes = rest - v * kLanes;
      if (lanes >= kLanes)
        V::store(r.y + j + v * kLanes, out[v]);
      else
        V::storePartial(r.y + j + v * kLanes, out[v], lanes);
    }
  }
};

// Channels-last: vectors run along the channels, so every tap is a contiguous load of the
// input and of the weights, whatever the stride, dilation or padding.
template <class V> struct DepthwiseNhwcRow {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes, kVectors = 4;

  // Channels [c, c + Count * kLanes) of output column o over tap rows [k1Begin, k1End); with
  // Count 1, only the first `lanes` of them (the last channels, loaded and stored masked).
  template <int64_t Count>
  static void block(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, int64_t k1Begin,
                    int64_t k1End, int64_t lanes = kLanes) {
    auto load = [lanes](const float *p) {
      return Count > 1 || lanes == kLanes ? V::load(p) : V::loadPartial(p, lanes);
    };
    Vec acc[Count];
    for (int64_t v = 0; v < Count; ++v)
      acc[v] = r.bias ? load(r.bias + c + v * kLanes) : V::zero();
    const int64_t firstColumn = o * r.strideWidth - r.padWidth;
    for (int64_t k1 = k1Begin; k1 < k1End; ++k1) {
      const float *row = r.x + (r.firstRow + k1 * r.dilationHeight) * r.inWidth * r.channels;
      const float *weights = r.weights + k1 * r.kernelWidth * r.channels + c;
      for (int64_t k2 = 0; k2 < r.kernelWidth; ++k2) {
        const int64_t column = firstColumn + k2 * r.dilationWidth;
        if (column < 0 || column >= r.inWidth)
          continue;
        const float *src = row + column * r.channels + c, *w = weights + k2 * r.channels;
        for (int64_t v = 0; v < Count; ++v)
          acc[v] = V::fma(load(w + v * kLanes), load(src + v * kLanes), acc[v]);
      }
    }
    if (r.residual) {
      // 1 * residual is exact, so this is the unfused add's single rounding.
      const Vec one = V::broadcast(1.0f);
      const float *residual = r.residual + o * r.channels + c;
      for (int64_t v = 0; v < Count; ++v)
        acc[v] = V::fma(one, load(residual + v * kLanes), acc[v]);
    }
    if (r.clamp) {
      // scalar::clampValue's order: a NaN passes both (max and min return their second operand).
      const Vec lo = V::broadcast(r.lo), hi = V::broadcast(r.hi);
      for (int64_t v = 0; v < Count; ++v)
        acc[v] = V::min(hi, V::max(lo, acc[v]));
    }
    float *y = r.y + o * r.channels + c;
    for (int64_t v = 0; v < Count; ++v) {
      if (Count > 1 || lanes == kLanes)
        V::store(y + v * kLanes, acc[v]);
      else
        V::storePartial(y, acc[v], lanes);
    }
  }

  static void run(const DepthwiseNhwcRowArgs &r) {
    // Tap rows inside the image: the same for every output column of the row.
    int64_t k1Begin = 0, k1End = r.kernelHeight;
    while (k1Begin < k1End && r.firstRow + k1Begin * r.dilationHeight < 0)
      ++k1Begin;
    while (k1End > k1Begin && r.firstRow + (k1End - 1) * r.dilationHeight >= r.inHeight)
      --k1End;
    for (int64_t o = 0; o < r.outWidth; ++o) {
      int64_t c = 0;
      for (; c + kVectors * kLanes <= r.channels; c += kVectors * kLanes)
        block<kVectors>(r, o, c, k1Begin, k1End);
      for (; c + kLanes <= r.channels; c += kLanes)
        block<1>(r, o, c, k1Begin, k1End);
      if (c < r.channels)
        block<1>(r, o, c, k1Begin, k1End, r.channels - c);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
