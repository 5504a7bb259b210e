// Internal to the runtime: the grouped convolution's kernel over zero-padded input planes
// (conv.cpp, "padded planes"), written over the same vector traits as gemm_kernel.h and
// compiled once per instruction set (isa_*.cpp, gemm.cpp). Everything here has internal
// linkage, for the reason gemm_kernel.h gives; no standard library (see pool_kernel.h).
#ifndef DLC_RUNTIME_PLANE_CONV_KERNEL_H
#define DLC_RUNTIME_PLANE_CONV_KERNEL_H

#include "gemm.h"

namespace dlc {
namespace rt {
namespace {

// out[o][p] = sum over channels c, then taps t, of weights(o, c, t) * input[c * channelStride
// + tapOffsets[t] + p], for p in [0, positions rounded up to a whole block): the product of a
// convolution whose im2col rows are shifted views of its padded input, never built. A register
// tile holds Rows output channels by kVectors vectors of positions; each step loads the
// vectors once for all rows and broadcasts one weight per row. The sums run over k = c * taps
// + t in order from zero, as the im2col GEMM's do.
template <class V> struct PlaneConv {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes, kVectors = 3;
  // Rows of a tile: a divisor of kPlaneConvRows (the packed panel) that leaves registers for
  // the vectors and a broadcast.
  static constexpr int64_t kRows = kLanes >= 16 ? 8 : 4;
  static_assert(kPlaneConvRows % kRows == 0, "tiles divide the packed panels");

  template <int64_t Rows, int64_t Vectors>
  static void tile(const PlaneConvArgs &a, const float *panel, int64_t row, int64_t p) {
    Vec acc[Rows][Vectors];
    for (int64_t r = 0; r < Rows; ++r)
      for (int64_t v = 0; v < Vectors; ++v)
        acc[r][v] = V::zero();
    const float *w = panel;
    for (int64_t c = 0; c < a.channels; ++c) {
      const float *channel = a.input + c * a.channelStride + p;
      for (int64_t t = 0; t < a.taps; ++t, w += kPlaneConvRows) {
        const float *src = channel + a.tapOffsets[t];
        Vec x[Vectors];
        for (int64_t v = 0; v < Vectors; ++v)
          x[v] = V::load(src + v * kLanes);
        for (int64_t r = 0; r < Rows; ++r) {
          const Vec weight = V::broadcast(w[r]);
          for (int64_t v = 0; v < Vectors; ++v)
            acc[r][v] = V::fma(weight, x[v], acc[r][v]);
        }
      }
    }
    for (int64_t r = 0; r < Rows; ++r)
      for (int64_t v = 0; v < Vectors; ++v)
        V::store(a.out + (row + r) * a.outStride + p + v * kLanes, acc[r][v]);
  }

  // Positions [p, p + vectors * kLanes): a short last block of a small map (7 x 9 padded
  // positions) takes fewer vectors rather than a whole block of padding.
  template <int64_t Rows>
  static void positions(const PlaneConvArgs &a, const float *panel, int64_t row, int64_t p,
                        int64_t vectors) {
    if (vectors >= kVectors)
      tile<Rows, kVectors>(a, panel, row, p);
    else if (vectors == 2)
      tile<Rows, 2>(a, panel, row, p);
    else
      tile<Rows, 1>(a, panel, row, p);
  }

  // The last rows of a panel, fewer than kRows.
  template <int64_t Rows>
  static void lastRows(const PlaneConvArgs &a, const float *panel, int64_t row, int64_t rows,
                       int64_t p, int64_t vectors) {
    if constexpr (Rows > 1)
      if (rows < Rows)
        return lastRows<Rows - 1>(a, panel, row, rows, p, vectors);
    positions<Rows>(a, panel, row, p, vectors);
  }

  // Output channel o's products into y (PlaneConvOutput), while they are in cache; the
  // padding columns past `cols` in each row are dropped.
  static void finish(const PlaneConvArgs &a, int64_t o) {
    const PlaneConvOutput &f = a.output;
    const float *products = a.out + o * a.outStride;
    float *y = f.y + o * f.channelStride;
    const float *residual = f.residual ? f.residual + o * f.channelStride : nullptr;
    const Vec bias = V::broadcast(f.bias ? f.bias[o] : 0.0f);
    const Vec lo = V::broadcast(f.lo), hi = V::broadcast(f.hi);
    for (int64_t r = 0; r < f.rows; ++r)
      for (int64_t c = 0; c < f.cols; c += kLanes) {
        const int64_t lanes = f.cols - c < kLanes ? f.cols - c : kLanes;
        auto load = [lanes](const float *p) {
          return lanes == kLanes ? V::load(p) : V::loadPartial(p, lanes);
        };
        Vec v = load(products + r * f.phaseCols + c);
        if (f.bias)
          v = v + bias;
        if (residual)
          v = v + load(residual + r * f.cols + c);
        // scalar::clampValue's order: a NaN passes both (max and min return their second
        // operand).
        if (f.clamp)
          v = V::min(hi, V::max(lo, v));
        if (lanes == kLanes)
          V::store(y + r * f.cols + c, v);
        else
          V::storePartial(y + r * f.cols + c, v, lanes);
      }
  }

  static void run(const PlaneConvArgs &a) {
    const int64_t panelFloats = a.channels * a.taps * kPlaneConvRows;
    for (int64_t row = 0; row < a.outChannels; row += kRows) {
      const float *panel = a.packedWeights + row / kPlaneConvRows * panelFloats +
                           row % kPlaneConvRows;
      const int64_t rows = a.outChannels - row;
      for (int64_t p = 0; p < a.positions; p += kVectors * kLanes) {
        const int64_t vectors = (a.positions - p + kLanes - 1) / kLanes;
        if (rows >= kRows)
          positions<kRows>(a, panel, row, p, vectors);
        else
          lastRows<kRows - 1>(a, panel, row, rows, p, vectors);
      }
      for (int64_t o = row; o < row + kRows && o < a.outChannels; ++o)
        finish(a, o);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
