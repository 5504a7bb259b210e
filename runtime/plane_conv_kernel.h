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

// y[o] at position p = sum over channels c, then taps t, of weights(o, c, t) * input[c *
// channelStride + tapOffsets[t] + p], for p in [0, output.rows * phaseCols rounded up to a
// whole block): the product of a convolution whose im2col rows are shifted views of its padded
// input, never built. A register tile holds Rows output channels by kVectors vectors of
// positions; each step loads the vectors once for all rows and broadcasts one weight per row.
// The sums run over k = c * taps + t in order from zero, as the im2col GEMM's do. The tile is
// finished (bias, residual, clamp) and stored straight into y's rows, the padding columns
// dropped: the products never go through memory (a 3-channel stem's 27 steps a tile made that
// pass a third of its time).
template <class V> struct PlaneConv {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes, kVectors = 3;
  // Rows of a tile: a divisor of kPlaneConvRows (the packed panel) that leaves registers for
  // the vectors and a broadcast.
  static constexpr int64_t kRows = kLanes >= 16 ? 8 : 4;
  static_assert(kPlaneConvRows % kRows == 0, "tiles divide the packed panels");

  // Where one vector of positions lands in an output channel: runs of lanes [lane, lane +
  // length) at y + offset, one per output row it covers (padding columns and positions past
  // the last row dropped). The vector starts at (row, col) of the padded rows.
  struct Destination {
    int64_t runs, lane[kLanes], offset[kLanes], length[kLanes];
  };
  static void locate(const PlaneConvOutput &f, int64_t row, int64_t col, Destination &d) {
    d.runs = 0;
    for (int64_t lane = 0; lane < kLanes && row < f.rows; ++row, col = 0) {
      const int64_t span = f.phaseCols - col < kLanes - lane ? f.phaseCols - col : kLanes - lane;
      const int64_t length = col >= f.cols ? 0 : f.cols - col < span ? f.cols - col : span;
      if (length > 0) {
        d.lane[d.runs] = lane;
        d.offset[d.runs] = row * f.cols + col;
        d.length[d.runs++] = length;
      }
      lane += span;
    }
  }

  // Output channel o's products v at d: plus bias, plus the residual, clamped (the GEMM
  // epilogue's order; a NaN passes the clamp: max and min return their second operand).
  static void store(const PlaneConvOutput &f, int64_t o, const Destination &d, Vec v) {
    if (d.runs == 0)
      return;
    float *y = f.y + o * f.channelStride;
    const float *residual = f.residual ? f.residual + o * f.channelStride : nullptr;
    if (f.bias)
      v = v + V::broadcast(f.bias[o]);
    if (residual) {
      Vec added = V::zero();
      for (int64_t r = 0; r < d.runs; ++r)
        added = V::loadLanes(added, residual + d.offset[r], d.lane[r], d.length[r]);
      v = v + added;
    }
    if (f.clamp)
      v = V::min(V::broadcast(f.hi), V::max(V::broadcast(f.lo), v));
    for (int64_t r = 0; r < d.runs; ++r)
      V::storeLanes(y + d.offset[r], v, d.lane[r], d.length[r]);
  }

  // The tile's rows of products at one whole vector of positions (offset in every output
  // channel), as store does; the tile's bias, residual and clamp are the same for every
  // vector, so they are read once (a 3-channel stem's tile of 27 steps spent 40% of its time
  // here, per store deciding each again). Its own copy of store's steps: with the bounds
  // passed by reference, each float store to y could alias them, and they were reloaded for
  // every vector (a shared helper made the stems 5% slower).
  template <int64_t Rows, int64_t Vectors>
  static void storeWhole(const PlaneConvOutput &f, int64_t row, int64_t offset,
                         Vec (&acc)[Rows][Vectors], int64_t v, const Vec (&bias)[Rows]) {
    float *y = f.y + row * f.channelStride + offset;
    const float *residual = f.residual ? f.residual + row * f.channelStride + offset : nullptr;
    const Vec lo = V::broadcast(f.lo), hi = V::broadcast(f.hi);
    for (int64_t r = 0; r < Rows; ++r) {
      Vec x = acc[r][v];
      if (f.bias)
        x = x + bias[r];
      if (residual)
        x = x + V::load(residual + r * f.channelStride);
      if (f.clamp)
        x = V::min(hi, V::max(lo, x));
      V::store(y + r * f.channelStride, x);
    }
  }

  // NextPanel: the tile also brings the next panel of weights (the next rows', or the next
  // group's) into cache, a half line per step: see run.
  template <int64_t Rows, int64_t Vectors, bool NextPanel>
  static void tile(const PlaneConvArgs &a, const float *panel, int64_t row, int64_t p) {
    Vec acc[Rows][Vectors];
    for (int64_t r = 0; r < Rows; ++r)
      for (int64_t v = 0; v < Vectors; ++v)
        acc[r][v] = V::zero();
    const float *w = panel;
    const int64_t panelFloats = a.channels * a.taps * kPlaneConvRows;
    for (int64_t c = 0; c < a.channels; ++c) {
      const float *channel = a.input + c * a.channelStride + p;
      for (int64_t t = 0; t < a.taps; ++t, w += kPlaneConvRows) {
        if constexpr (NextPanel)
          __builtin_prefetch(w + panelFloats);
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
    const PlaneConvOutput &f = a.output;
    Vec bias[Rows];
    for (int64_t r = 0; r < Rows; ++r)
      bias[r] = f.bias ? V::broadcast(f.bias[row + r]) : V::zero();
    // One division for the tile: each vector's row and column follow from the first's.
    int64_t outRow = p / f.phaseCols, col = p - outRow * f.phaseCols;
    for (int64_t v = 0; v < Vectors; ++v) {
      if (outRow < f.rows && col + kLanes <= f.cols) {
        storeWhole(f, row, outRow * f.cols + col, acc, v, bias);
      } else {
        Destination d;
        locate(f, outRow, col, d);
        for (int64_t r = 0; r < Rows; ++r)
          store(f, row + r, d, acc[r][v]);
      }
      for (col += kLanes; col >= f.phaseCols; col -= f.phaseCols)
        ++outRow;
    }
  }

  // Positions [p, p + vectors * kLanes): a short last block of a small map (7 x 9 padded
  // positions) takes fewer vectors rather than a whole block of padding.
  template <int64_t Rows, bool NextPanel = false>
  static void positions(const PlaneConvArgs &a, const float *panel, int64_t row, int64_t p,
                        int64_t vectors) {
    if (vectors >= kVectors)
      tile<Rows, kVectors, NextPanel>(a, panel, row, p);
    else if (vectors == 2)
      tile<Rows, 2, NextPanel>(a, panel, row, p);
    else
      tile<Rows, 1, NextPanel>(a, panel, row, p);
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

  static void run(const PlaneConvArgs &a) {
    const int64_t panelFloats = a.channels * a.taps * kPlaneConvRows;
    const int64_t positionCount = a.output.rows * a.output.phaseCols;
    for (int64_t row = 0; row < a.outChannels; row += kRows) {
      const float *panel = a.packedWeights + row / kPlaneConvRows * panelFloats +
                           row % kPlaneConvRows;
      const int64_t rows = a.outChannels - row;
      for (int64_t p = 0; p < positionCount; p += kVectors * kLanes) {
        const int64_t vectors = (positionCount - p + kLanes - 1) / kLanes;
        // A network's weights outgrow L2, and a small map's few blocks of positions each
        // waited on the panel's lines from L3 (RegNet's 7x7 grouped convs took 1.4x their
        // time in isolation after a 784-channel 1x1 conv; the hardware prefetcher did not
        // hide it). The first block asks for the next panel; the others read this one from
        // L1, where a prefetch per step would take load slots the tile needs.
        if (rows >= kRows && p == 0)
          positions<kRows, true>(a, panel, row, p, vectors);
        else if (rows >= kRows)
          positions<kRows>(a, panel, row, p, vectors);
        else
          lastRows<kRows - 1>(a, panel, row, rows, p, vectors);
      }
    }
  }
};

// planePhases (gemm.h): whole vectors through registers, each input row read once. A stride-2
// row is split into its even and odd columns (V::deinterleave), each a row of one of its two
// phases. Copied element by element, a phase row at a time, the phases took 40% of RegNet's
// strided grouped convolutions (14 columns a row: the loop's setup and tail cost more than
// its copying).
template <class V> struct PlanePhases {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes;

  static void fillZero(float *p, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      V::store(p + i, V::zero());
    if (i < n)
      V::storePartial(p + i, V::zero(), n - i);
  }

  static void copy(const float *from, float *to, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      V::store(to + i, V::load(from + i));
    if (i < n)
      V::storePartial(to + i, V::loadPartial(from + i, n - i), n - i);
  }

  static void storeUpTo(float *p, Vec v, int64_t n) {
    if (n >= kLanes)
      V::store(p, v);
    else if (n > 0)
      V::storePartial(p, v, n);
  }

  // Columns first then second split into their even ones (the first evens of them to even)
  // and odd ones (odds to odd).
  static void splitBlock(Vec first, Vec second, float *even, int64_t evens, float *odd,
                         int64_t odds) {
    Vec evenColumns, oddColumns;
    V::deinterleave(first, second, evenColumns, oddColumns);
    storeUpTo(even, evenColumns, evens);
    storeUpTo(odd, oddColumns, odds);
  }

  // Of `rows` rows (rowStride apart), column 2k to even[k] for k < evens, column 2k + 1 to
  // odd[k] for k < odds (even and odd rows dstStride apart); a row holds the columns read, no
  // more. Rows of one block (most strided maps past the stem) take its partial loads and
  // stores with the masks made once for all rows.
  static void split(const float *row, int64_t rowStride, int64_t rows, int64_t evens,
                    int64_t odds, float *even, float *odd, int64_t dstStride) {
    const int64_t pairs = evens > odds ? evens : odds;
    const int64_t floats = evens > odds ? 2 * evens - 1 : 2 * odds;
    if (pairs <= kLanes) {
      const int64_t low = floats < kLanes ? floats : kLanes, high = floats - low;
      for (int64_t r = 0; r < rows; ++r, row += rowStride, even += dstStride, odd += dstStride)
        splitBlock(V::loadPartial(row, low),
                   high > 0 ? V::loadPartial(row + kLanes, high) : V::zero(), even, evens, odd,
                   odds);
      return;
    }
    for (int64_t r = 0; r < rows; ++r, row += rowStride, even += dstStride, odd += dstStride)
      for (int64_t k = 0; k < pairs; k += kLanes) {
        const float *from = row + 2 * k;
        const int64_t left = floats - 2 * k;
        Vec first, second;
        if (left >= 2 * kLanes) {
          first = V::load(from);
          second = V::load(from + kLanes);
        } else {
          first = V::loadPartial(from, left < kLanes ? left : kLanes);
          second = left > kLanes ? V::loadPartial(from + kLanes, left - kLanes) : V::zero();
        }
        splitBlock(first, second, even + k, evens - k, odd + k, odds - k);
      }
  }

  static void run(const PlanePhasesArgs &a) {
    const int64_t s = a.stride;
    auto phaseRow = [&](float *planes, int64_t py, int64_t px, int64_t qy) {
      return planes + (py * s + px) * a.phaseFloats + qy * a.phaseCols;
    };
    // Input columns s * k + r, r < s, land in phase column k + shift[r] of phase px[r], for
    // k < count[r] (the row's columns, and the phase's).
    int64_t px[2], shift[2], count[2];
    for (int64_t r = 0; r < s; ++r) {
      px[r] = (r + a.padLeft) % s;
      shift[r] = (r + a.padLeft) / s;
      const int64_t columns = (a.inCols - r + s - 1) / s, room = a.phaseCols - shift[r];
      count[r] = columns < room ? columns : room;
      count[r] = count[r] > 0 ? count[r] : 0;
    }
    for (int64_t c = 0; c < a.channels; ++c) {
      const float *plane = a.x + c * a.inPlane;
      float *planes = a.planes + c * a.channelFloats;
      for (int64_t py = 0; py < s; ++py) {
        // Phase rows qy in [top, bottom) read input row first + qy * s.
        const int64_t first = a.firstRow + py, last = a.inRows - 1 - first;
        int64_t top = first >= 0 ? 0 : (s - 1 - first) / s;
        top = top < a.phaseRows ? top : a.phaseRows;
        int64_t bottom = last < 0 ? top : last / s + 1;
        bottom = bottom < a.phaseRows ? bottom : a.phaseRows;
        bottom = bottom > top ? bottom : top;
        for (int64_t x = 0; x < s; ++x) {
          fillZero(phaseRow(planes, py, x, 0), top * a.phaseCols);
          fillZero(phaseRow(planes, py, x, bottom), (a.phaseRows - bottom) * a.phaseCols);
        }
        const float *row = plane + (first + top * s) * a.inCols;
        if (s == 1)
          for (int64_t qy = top; qy < bottom; ++qy, row += a.inCols)
            copy(row, phaseRow(planes, py, 0, qy) + shift[0], count[0]);
        else
          split(row, 2 * a.inCols, bottom - top, count[0], count[1],
                phaseRow(planes, py, px[0], top) + shift[0],
                phaseRow(planes, py, px[1], top) + shift[1], a.phaseCols);
      }
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
