// Internal to the runtime: the channels-last pointwise convolution's kernel, written over the
// same vector traits as gemm_kernel.h and compiled once per instruction set (isa_*.cpp,
// gemm.cpp). Everything here has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_POINTWISE_KERNEL_H
#define DLC_RUNTIME_POINTWISE_KERNEL_H

#include "gemm.h"

namespace dlc {
namespace rt {
namespace {

// Pixels times the weights, one register tile (kRows pixels x two vectors of output channels)
// at a time, read straight from the pixels' rows: with few input channels a GEMM's packing
// and its separate pass for bias, residual and clamp cost more than the multiply-adds. The
// sums run over the input channels in order from zero, then add the bias and the residual:
// the GEMM-then-epilogue order, so the bits are those of that path.
template <class V> struct PointwiseNhwc {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes, kRows = V::kRows, kVectors = 2;
  static constexpr int64_t kTileColumns = kLanes * kVectors;
  static_assert(kPackCols % kTileColumns == 0, "a tile lies inside one weight panel");

  // Pixels [row, row + Rows), output channels [column, column + columns), columns <=
  // kTileColumns. The weight panel is zero-padded, so it is read whole.
  template <int64_t Rows, int64_t Vectors>
  static void tile(const PointwiseNhwcArgs &a, int64_t row, int64_t column, int64_t columns) {
    const float *weights = a.packedWeights + column / kPackCols * kPackCols * a.k +
                           column % kPackCols;
    Vec acc[Rows][Vectors];
    for (int64_t i = 0; i < Rows; ++i)
      for (int64_t v = 0; v < Vectors; ++v)
        acc[i][v] = V::zero();
    const float *x = a.x + row * a.k;
    for (int64_t p = 0; p < a.k; ++p) {
      Vec w[Vectors];
      for (int64_t v = 0; v < Vectors; ++v)
        w[v] = V::load(weights + p * kPackCols + v * kLanes);
      for (int64_t i = 0; i < Rows; ++i) {
        const Vec xi = V::broadcast(x[i * a.k + p]);
        for (int64_t v = 0; v < Vectors; ++v)
          acc[i][v] = V::fma(xi, w[v], acc[i][v]);
      }
    }
    // Lanes of vector v inside the output row.
    auto lanesOf = [columns](int64_t v) {
      return std::max<int64_t>(0, std::min(kLanes, columns - v * kLanes));
    };
    auto load = [&](const float *p, int64_t v) {
      return lanesOf(v) == kLanes ? V::load(p + v * kLanes)
                                  : V::loadPartial(p + v * kLanes, lanesOf(v));
    };
    Vec bias[Vectors];
    for (int64_t v = 0; v < Vectors; ++v)
      bias[v] = a.bias && lanesOf(v) ? load(a.bias + column, v) : V::zero();
    const Vec lo = V::broadcast(a.lo), hi = V::broadcast(a.hi);
    for (int64_t i = 0; i < Rows; ++i) {
      const int64_t offset = (row + i) * a.ld + column;
      for (int64_t v = 0; v < Vectors && lanesOf(v); ++v) {
        Vec value = acc[i][v];
        if (a.bias)
          value = value + bias[v];
        if (a.residual)
          value = value + load(a.residual + offset, v);
        // scalar::clampValue's order: a NaN passes both (max and min return their second
        // operand).
        if (a.clamp)
          value = V::min(hi, V::max(lo, value));
        if (lanesOf(v) == kLanes)
          V::store(a.y + offset + v * kLanes, value);
        else
          V::storePartial(a.y + offset + v * kLanes, value, lanesOf(v));
      }
    }
  }

  // The last rows, fewer than kRows.
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
  template <int64_t Vectors>
  static void columnTile(const PointwiseNhwcArgs &a, int64_t column, int64_t columns) {
    int64_t row = 0;
    for (; row + kRows <= a.rows; row += kRows)
      tile<kRows, Vectors>(a, row, column, columns);
    if (row < a.rows)
      lastRows<kRows - 1, Vectors>(a, row, a.rows - row, column, columns);
  }

  static void run(const PointwiseNhwcArgs &a) {
    // Output channels outside: a tile's weights stay in the first-level cache while every
    // pixel passes.
    for (int64_t column = 0; column < a.n; column += kTileColumns) {
      const int64_t columns = std::min(kTileColumns, a.n - column);
      if (columns <= kLanes)
        columnTile<1>(a, column, columns);
      else
        columnTile<kVectors>(a, column, columns);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
