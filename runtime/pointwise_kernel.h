// Internal to the runtime: the channels-last pointwise convolution's kernel, written over the
// same vector traits as gemm_kernel.h and compiled once per instruction set (isa_*.cpp,
// gemm.cpp). Everything here has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_POINTWISE_KERNEL_H
#define DLC_RUNTIME_POINTWISE_KERNEL_H

#include "gemm.h"

namespace dlc {
namespace rt {
namespace {

// Pixels times the weights, one register tile (pixels x vectors of output channels) at a time,
// read straight from the pixels' rows: with few input channels a GEMM's packing
// and its separate pass for bias, residual and clamp cost more than the multiply-adds. The
// sums run over the input channels in order from zero, then add the bias and the residual:
// the GEMM-then-epilogue order, so the bits are those of that path.
template <class V> struct PointwiseNhwc {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes, kVectors = 2;
  static constexpr int64_t kTileColumns = kLanes * kVectors;
  static_assert(kPackCols % kTileColumns == 0, "a tile lies inside one weight panel");
  // With up to kStoreBoundDepth input channels a tile's stores bound it (16 multiply-add
  // steps, then 24 stores), and tiles of whole 64-channel pixels (AVX-512: 6 pixels x 4
  // vectors, across two weight panels) store each pixel's lines together instead of half a
  // pixel per tile: a 16 -> 64 conv on 112x112 ran 24% faster, on 320x320 14%. Where the
  // sums are longer the stores are not the bound, and MobileNetV2 ran no faster (4-9% slower
  // in one two-thread comparison, within the noise in a longer one): kept to short sums.
  static constexpr int64_t kStoreBoundDepth = 16, kWideVectors = kLanes >= 16 ? 4 : kVectors;
  static_assert(kWideVectors == kVectors || kWideVectors * kLanes % kPackCols == 0,
                "wide tiles start at a panel");
  static constexpr int64_t rowsFor(int64_t vectors) {
    return vectors <= kVectors ? V::kRows : V::kRows * kVectors / vectors;
  }

  // Pixels [row, row + Rows), output channels [column, column + columns), columns <=
  // Vectors * kLanes. The weight panels are zero-padded, so they are read whole; a wide tile
  // reads its vectors past the first panel from the next one. With `prefetch`, the tile also
  // asks for a panel it does not read (the next one), kPackCols floats a step.
  template <int64_t Rows, int64_t Vectors, bool Prefetch = false>
  static void tile(const PointwiseNhwcArgs &a, int64_t row, int64_t column, int64_t columns,
                   const float *prefetch = nullptr) {
    const float *weights = a.packedWeights + column / kPackCols * kPackCols * a.k +
                           column % kPackCols;
    const int64_t panelFloats = kPackCols * a.k;
    Vec acc[Rows][Vectors];
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < Vectors; ++v)
        acc[i][v] = V::zero();
    const float *x = a.x + row * a.k;
    for (int64_t p = 0; p < a.k; ++p) {
      if constexpr (Prefetch)
        for (int64_t line = 0; line < kPackCols; line += kFloatsPerLine)
          __builtin_prefetch(prefetch + p * kPackCols + line, 0, 2);
      Vec w[Vectors];
#pragma GCC unroll 4
      for (int64_t v = 0; v < Vectors; ++v)
        w[v] = V::load(weights + v * kLanes / kPackCols * panelFloats + v * kLanes % kPackCols +
                       p * kPackCols);
#pragma GCC unroll 16
      for (int64_t i = 0; i < Rows; ++i) {
        const Vec xi = V::broadcast(x[i * a.k + p]);
#pragma GCC unroll 4
        for (int64_t v = 0; v < Vectors; ++v)
          acc[i][v] = V::fma(xi, w[v], acc[i][v]);
      }
    }
    // Loops of constant length the compiler unrolls, the accumulators kept in registers and
    // the arguments read once (loops it did not unroll spilled every accumulator and reread
    // the arguments after each store: K = 16 ran at half the speed of K = 256 per
    // multiply-add, in cache). Vector v holds lanes[v] output channels (a partial vector at
    // the row's end, none past it).
    int64_t lanes[Vectors];
#pragma GCC unroll 4
    for (int64_t v = 0; v < Vectors; ++v)
      lanes[v] = std::max<int64_t>(0, std::min(kLanes, columns - v * kLanes));
    auto load = [&lanes](const float *p, int64_t v) {
      return lanes[v] == kLanes ? V::load(p) : V::loadPartial(p, lanes[v]);
    };
    float *const y = a.y + row * a.ld + column;
    const float *const residual = a.residual ? a.residual + row * a.ld + column : nullptr;
    const int64_t ld = a.ld;
    const bool clamp = a.clamp;
    const Vec lo = V::broadcast(a.lo), hi = V::broadcast(a.hi);
    Vec bias[Vectors];
#pragma GCC unroll 4
    for (int64_t v = 0; v < Vectors; ++v)
      bias[v] = a.bias && lanes[v] ? load(a.bias + column + v * kLanes, v) : V::zero();
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < Vectors; ++v) {
        if (lanes[v] == 0)
          continue;
        Vec value = acc[i][v];
        if (a.bias)
          value = value + bias[v];
        if (residual)
          value = value + load(residual + i * ld + v * kLanes, v);
        // scalar::clampValue's order: a NaN passes both (max and min return their second
        // operand).
        if (clamp)
          value = V::min(hi, V::max(lo, value));
        if (lanes[v] == kLanes)
          V::store(y + i * ld + v * kLanes, value);
        else
          V::storePartial(y + i * ld + v * kLanes, value, lanes[v]);
      }
  }

  // The last rows, fewer than a whole tile's.
  template <int64_t Rows, int64_t Vectors>
  static void lastRows(const PointwiseNhwcArgs &a, int64_t row, int64_t rows, int64_t column,
                       int64_t columns) {
    if constexpr (Rows > 1)
      if (rows < Rows)
        return lastRows<Rows - 1, Vectors>(a, row, rows, column, columns);
    tile<Rows, Vectors>(a, row, column, columns);
  }

  // Output channels [column, column + columns) of every pixel; a column tile of one vector
  // where the rest fits one (16 of 16 or 80 channels), not two half empty.
  // The first row tile asks for the panel that starts at column `next`, where there is one:
  // a layer's weights come from memory at every run (EfficientNet's and MobileNetV3's
  // expansions of 7x7 and 14x14 maps, 0.5-1 MB each, ran 40% slower than with the weights in
  // cache), and the hardware prefetcher alone started on a panel only once the tile waited on
  // it.
  template <int64_t Vectors>
  static void columnTile(const PointwiseNhwcArgs &a, int64_t column, int64_t columns,
                         int64_t next) {
    constexpr int64_t kRows = rowsFor(Vectors);
    int64_t row = 0;
    if (next < a.n && kRows <= a.rows) {
      tile<kRows, Vectors, true>(a, row, column, columns,
                                 a.packedWeights + next / kPackCols * kPackCols * a.k);
      row += kRows;
    }
    for (; row + kRows <= a.rows; row += kRows)
      tile<kRows, Vectors>(a, row, column, columns);
    if (row < a.rows)
      lastRows<kRows - 1, Vectors>(a, row, a.rows - row, column, columns);
  }

  static void run(const PointwiseNhwcArgs &a) {
    // Output channels outside: a tile's weights stay in the first-level cache while every
    // pixel passes.
    int64_t first = 0;
    if constexpr (kWideVectors > kVectors)
      for (; a.k <= kStoreBoundDepth && first + kWideVectors * kLanes <= a.n;
           first += kWideVectors * kLanes)
        columnTile<kWideVectors>(a, first, kWideVectors * kLanes, first + kWideVectors * kLanes);
    for (int64_t column = first; column < a.n; column += kTileColumns) {
      const int64_t columns = std::min(kTileColumns, a.n - column);
      // The next panel, asked for by the panel's first tile (a panel holds two AVX2 tiles).
      const int64_t next = column % kPackCols == 0 ? column + kPackCols : a.n;
      if (columns <= kLanes)
        columnTile<1>(a, column, columns, next);
      else
        columnTile<kVectors>(a, column, columns, next);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
