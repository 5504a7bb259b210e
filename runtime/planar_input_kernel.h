// Internal to the runtime: the row kernel of a channels-last convolution over planar input (a
// network's first layer: an image's few channels), written over the vector traits of
// gemm_kernel.h and compiled once per instruction set (isa_*.cpp, gemm.cpp). Everything here
// has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_PLANAR_INPUT_KERNEL_H
#define DLC_RUNTIME_PLANAR_INPUT_KERNEL_H

#include "gemm.h"
#include "nhwc_block.h"

namespace dlc {
namespace rt {

namespace {

// Vectors run along the output channels: each tap loads one vector of weights per vector of
// channels and broadcasts one input value per output column, so a block of columns and
// channels makes Columns x Count multiply-adds of Columns + Count loads, at any stride.
template <class V> struct PlanarInputRow {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes;
  static constexpr int64_t kRegisters = kLanes >= 16 ? 32 : 16;
  // Vectors of output channels a block takes at most, and its output columns for `count`
  // vectors: its sums, one tap's weights and the broadcast value fill the registers (24
  // columns of 16 channels, 14 of 32, 6 of 64 on AVX-512).
  static constexpr int64_t kMaxVectors = kLanes >= 16 ? 4 : 2;
  static constexpr int64_t columnsFor(int64_t count) {
    const int64_t columns = (kRegisters - count - 1) / count;
    return columns < 24 ? columns : 24;
  }

  // Output channels [c, c + Count * kLanes) of output columns [o, o + Columns). The sums add
  // the taps in order (input channel, tap row, tap column) from the bias, whatever the
  // blocking. Edge (one column only): taps outside the row are skipped. Not inlined: inlined
  // into the row walk, GCC kept the sums on the stack.
  template <int64_t Count, int64_t Columns, bool Partial, bool Edge>
  __attribute__((noinline)) static void block(const PlanarInputRowArgs &r, int64_t o, int64_t c,
                                              int64_t k1Begin, int64_t k1End,
                                              NhwcLanes<V, Count, Partial> m) {
    static_assert(!Edge || Columns == 1, "edge columns are computed one at a time");
    Vec acc[Columns][Count];
    startNhwcBlock(r.bias, c, m, acc);
    const int64_t firstColumn = o * r.strideWidth - r.padWidth, step = r.strideWidth;
    for (int64_t channel = 0; channel < r.channels; ++channel)
      for (int64_t k1 = k1Begin; k1 < k1End; ++k1) {
        const float *row =
            r.x + (channel * r.inHeight + r.firstRow + k1 * r.dilationHeight) * r.inWidth;
        const float *weights =
            r.weights + (channel * r.kernelHeight + k1) * r.kernelWidth * r.outChannels + c;
        for (int64_t k2 = 0; k2 < r.kernelWidth; ++k2) {
          const int64_t column = firstColumn + k2 * r.dilationWidth;
          if (Edge && (column < 0 || column >= r.inWidth))
            continue;
          Vec w[Count];
#pragma GCC unroll 4
          for (int64_t v = 0; v < Count; ++v)
            w[v] = m.load(weights + k2 * r.outChannels + v * kLanes, v);
#pragma GCC unroll 32
          for (int64_t col = 0; col < Columns; ++col) {
            const Vec x = V::broadcast(row[column + col * step]);
#pragma GCC unroll 4
            for (int64_t v = 0; v < Count; ++v)
              acc[col][v] = V::fma(w[v], x, acc[col][v]);
          }
        }
      }
    finishNhwcBlock(r, r.outChannels, o, c, m, acc);
  }

  // The row's output columns for channels [c, c + Count * kLanes): the columns with taps
  // outside the row ([0, first) and [end, outWidth)) one at a time, the rest in blocks of the
  // most columns, the last block moved back to end at `end` (it computes a few columns again,
  // to the same bits) rather than a tail of narrow blocks.
  template <int64_t Count, bool Partial>
  static void channelBlock(const PlanarInputRowArgs &r, int64_t c, int64_t first, int64_t end,
                           int64_t k1Begin, int64_t k1End, int64_t lanes) {
    constexpr int64_t kColumns = columnsFor(Count);
    const NhwcLanes<V, Count, Partial> m{lanes};
    int64_t o = 0;
    for (; o < first && o < r.outWidth; ++o)
      block<Count, 1, Partial, true>(r, o, c, k1Begin, k1End, m);
    for (; o + kColumns <= end; o += kColumns)
      block<Count, kColumns, Partial, false>(r, o, c, k1Begin, k1End, m);
    if (o < end && end - first >= kColumns) {
      block<Count, kColumns, Partial, false>(r, end - kColumns, c, k1Begin, k1End, m);
      o = end;
    }
    for (; o < end; ++o)
      block<Count, 1, Partial, false>(r, o, c, k1Begin, k1End, m);
    for (; o < r.outWidth; ++o)
      block<Count, 1, Partial, true>(r, o, c, k1Begin, k1End, m);
  }

  template <int64_t Count>
  static void lastChannels(const PlanarInputRowArgs &r, int64_t c, int64_t first, int64_t end,
                           int64_t k1Begin, int64_t k1End, int64_t lanes) {
    if (lanes == kLanes)
      channelBlock<Count, false>(r, c, first, end, k1Begin, k1End, lanes);
    else
      channelBlock<Count, true>(r, c, first, end, k1Begin, k1End, lanes);
  }

  static void run(const PlanarInputRowArgs &r) {
    // Tap rows inside the image: the same for every output column of the row.
    int64_t k1Begin = 0, k1End = r.kernelHeight;
    while (k1Begin < k1End && r.firstRow + k1Begin * r.dilationHeight < 0)
      ++k1Begin;
    while (k1End > k1Begin && r.firstRow + (k1End - 1) * r.dilationHeight >= r.inHeight)
      --k1End;
    // Output columns [first, end) have every tap inside the row (none where the row is
    // narrower than the window: end <= first).
    const int64_t span = (r.kernelWidth - 1) * r.dilationWidth;
    const int64_t first = (r.padWidth + r.strideWidth - 1) / r.strideWidth;
    const int64_t lastInside = r.inWidth - 1 - span + r.padWidth;
    int64_t end = lastInside < 0 ? 0 : lastInside / r.strideWidth + 1;
    end = end < first ? first : end;
    end = end < r.outWidth ? end : r.outWidth;
    // Blocks of kMaxVectors vectors of channels, then the rest (its last vector partial).
    constexpr int64_t kBlockChannels = kMaxVectors * kLanes;
    int64_t c = 0;
    for (; c + kBlockChannels <= r.outChannels; c += kBlockChannels)
      channelBlock<kMaxVectors, false>(r, c, first, end, k1Begin, k1End, kLanes);
    const int64_t rest = r.outChannels - c;
    if (rest == 0)
      return;
    const int64_t count = (rest + kLanes - 1) / kLanes, lanes = rest - (count - 1) * kLanes;
    if (count == 1)
      lastChannels<1>(r, c, first, end, k1Begin, k1End, lanes);
    else if (count == 2)
      lastChannels<2>(r, c, first, end, k1Begin, k1End, lanes);
    if constexpr (kMaxVectors == 4) {
      if (count == 3)
        lastChannels<3>(r, c, first, end, k1Begin, k1End, lanes);
      else if (count == 4)
        lastChannels<4>(r, c, first, end, k1Begin, k1End, lanes);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
