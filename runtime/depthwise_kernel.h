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
  // Output columns computed together inside the image: each tap's weights, loaded once, serve
  // them all (one column at a time loads a weight per input, and loads bound the kernel). As
  // many as the registers hold beside kVectors weights.
  static constexpr int64_t kColumns = kLanes >= 16 ? 4 : 2;

  // Channels [c, c + Count * kLanes) of output columns [o, o + Columns); with Count 1, only the
  // first `lanes` of them (the last channels, loaded and stored masked). Taps outside the row
  // are skipped, so a block of several columns must have all its taps inside. The sums start
  // from the bias and add the taps in order, whatever the blocking: the bits do not depend on
  // it.
  template <int64_t Count, int64_t Columns>
  static void block(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, int64_t k1Begin,
                    int64_t k1End, int64_t lanes = kLanes) {
    auto load = [lanes](const float *p) {
      return Count > 1 || lanes == kLanes ? V::load(p) : V::loadPartial(p, lanes);
    };
    Vec acc[Columns][Count];
    for (int64_t v = 0; v < Count; ++v) {
      const Vec bias = r.bias ? load(r.bias + c + v * kLanes) : V::zero();
      for (int64_t col = 0; col < Columns; ++col)
        acc[col][v] = bias;
    }
    const int64_t firstColumn = o * r.strideWidth - r.padWidth;
    const int64_t columnStep = r.strideWidth * r.channels;
    for (int64_t k1 = k1Begin; k1 < k1End; ++k1) {
      const float *row = r.x + (r.firstRow + k1 * r.dilationHeight) * r.inWidth * r.channels;
      const float *weights = r.weights + k1 * r.kernelWidth * r.channels + c;
      for (int64_t k2 = 0; k2 < r.kernelWidth; ++k2) {
        const int64_t column = firstColumn + k2 * r.dilationWidth;
        if (Columns == 1 && (column < 0 || column >= r.inWidth))
          continue;
        const float *src = row + column * r.channels + c;
        Vec w[Count];
        for (int64_t v = 0; v < Count; ++v)
          w[v] = load(weights + k2 * r.channels + v * kLanes);
        for (int64_t col = 0; col < Columns; ++col)
          for (int64_t v = 0; v < Count; ++v)
            acc[col][v] = V::fma(w[v], load(src + col * columnStep + v * kLanes), acc[col][v]);
      }
    }
    for (int64_t col = 0; col < Columns; ++col)
      finish(r, o + col, c, acc[col], lanes, Count);
  }

  // Residual, clamp and store of `count` vectors of output column o from channel c.
  static void finish(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, Vec *acc,
                     int64_t lanes, int64_t count) {
    const bool whole = count > 1 || lanes == kLanes;
    if (r.residual) {
      // 1 * residual is exact, so this is the unfused add's single rounding.
      const Vec one = V::broadcast(1.0f);
      const float *residual = r.residual + o * r.channels + c;
      for (int64_t v = 0; v < count; ++v)
        acc[v] = V::fma(one,
                        whole ? V::load(residual + v * kLanes) : V::loadPartial(residual, lanes),
                        acc[v]);
    }
    if (r.clamp) {
      // scalar::clampValue's order: a NaN passes both (max and min return their second operand).
      const Vec lo = V::broadcast(r.lo), hi = V::broadcast(r.hi);
      for (int64_t v = 0; v < count; ++v)
        acc[v] = V::min(hi, V::max(lo, acc[v]));
    }
    float *y = r.y + o * r.channels + c;
    for (int64_t v = 0; v < count; ++v) {
      if (whole)
        V::store(y + v * kLanes, acc[v]);
      else
        V::storePartial(y, acc[v], lanes);
    }
  }

  // Every channel of output columns [o, o + Columns).
  template <int64_t Columns>
  static void columns(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t k1Begin, int64_t k1End) {
    int64_t c = 0;
    for (; c + kVectors * kLanes <= r.channels; c += kVectors * kLanes)
      block<kVectors, Columns>(r, o, c, k1Begin, k1End);
    for (; c + kLanes <= r.channels; c += kLanes)
      block<1, Columns>(r, o, c, k1Begin, k1End);
    if (c < r.channels)
      block<1, Columns>(r, o, c, k1Begin, k1End, r.channels - c);
  }

  static void run(const DepthwiseNhwcRowArgs &r) {
    // Tap rows inside the image: the same for every output column of the row.
    int64_t k1Begin = 0, k1End = r.kernelHeight;
    while (k1Begin < k1End && r.firstRow + k1Begin * r.dilationHeight < 0)
      ++k1Begin;
    while (k1End > k1Begin && r.firstRow + (k1End - 1) * r.dilationHeight >= r.inHeight)
      --k1End;
    // Output columns [inside, insideEnd) have every tap inside the row.
    const int64_t span = (r.kernelWidth - 1) * r.dilationWidth;
    const int64_t inside = (r.padWidth + r.strideWidth - 1) / r.strideWidth;
    const int64_t lastInside = r.inWidth - 1 - span + r.padWidth;
    const int64_t insideEnd = lastInside < 0 ? 0 : lastInside / r.strideWidth + 1;
    for (int64_t o = 0; o < r.outWidth;) {
      if (o >= inside && o + kColumns <= insideEnd) {
        columns<kColumns>(r, o, k1Begin, k1End);
        o += kColumns;
      } else {
        columns<1>(r, o, k1Begin, k1End);
        ++o;
      }
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
