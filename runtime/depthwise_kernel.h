// Internal to the runtime: the depthwise convolution's row kernels (planar and channels-last),
// written over the same
// vector traits as gemm_kernel.h and compiled once per instruction set (isa_*.cpp, gemm.cpp).
// Everything here has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_DEPTHWISE_KERNEL_H
#define DLC_RUNTIME_DEPTHWISE_KERNEL_H

#include "gemm.h"
#include "nhwc_block.h"
#include "vector_math.h"

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
  static constexpr int64_t kLanes = V::kLanes;
  static constexpr int64_t kRegisters = kLanes >= 16 ? 32 : 16;

  // Vectors of channels a block takes at most, and output columns per block for `count`
  // vectors: a block keeps its sums and one tap row's weights in registers (KernelWidth 0:
  // the generic path, one tap's weights), with two to spare for loads.
  static constexpr int64_t maxVectors(int64_t kernelWidth) {
    return kernelWidth == 5 || kLanes < 16 ? 2 : 4;
  }
  static constexpr int64_t columnsFor(int64_t count, int64_t kernelWidth) {
    const int64_t weights = (kernelWidth ? kernelWidth : 1) * count;
    int64_t columns = 1;
    while (columns < 16 && weights + 2 * columns * count + 2 <= kRegisters)
      columns *= 2;
    return columns;
  }

  template <int64_t Count, bool Partial> using Lanes = NhwcLanes<V, Count, Partial>;

  // Channels [c, c + Count * kLanes) of output columns [o, o + Columns) at stride 1, the
  // kernel's width unrolled: each input vector of a tap row is loaded once for all the columns
  // whose window holds it (a load per multiply-add, as one tap at a time for all columns
  // does, made a 3x3 map run at under half the multiply-add rate). Input columns outside the
  // row are skipped (Edge: the block reaches past an end of the row; checking every block
  // cost wide rows 15%), so the edge columns need no blocks of their own (a 14x14 map's 5x5
  // window has four of its fourteen columns at the edges).
  template <int64_t Count, int64_t Columns, int64_t KernelWidth, bool Partial, bool Edge>
  static void slide(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, int64_t k1Begin,
                    int64_t k1End, Lanes<Count, Partial> m) {
    Vec acc[Columns][Count];
    // The sums add the taps in order, tap row by tap row and left to right, whatever the
    // blocking: the bits do not depend on it.
    startNhwcBlock(r.bias, c, m, acc);
    constexpr int64_t kInputs = Columns - 1 + KernelWidth;
    const int64_t firstColumn = o - r.padWidth;
    const int64_t jBegin = firstColumn < 0 ? -firstColumn : 0, jEnd = r.inWidth - firstColumn;
    for (int64_t k1 = k1Begin; k1 < k1End; ++k1) {
      const float *row = r.x + (r.firstRow + k1 * r.dilationHeight) * r.inWidth * r.channels + c;
      const float *weights = r.weights + k1 * KernelWidth * r.channels + c;
      Vec w[KernelWidth][Count];
#pragma GCC unroll 8
      for (int64_t k2 = 0; k2 < KernelWidth; ++k2)
#pragma GCC unroll 4
        for (int64_t v = 0; v < Count; ++v)
          w[k2][v] = m.load(weights + k2 * r.channels + v * kLanes, v);
#pragma GCC unroll 64
      for (int64_t j = 0; j < kInputs; ++j) {
        if (Edge && (j < jBegin || j >= jEnd))
          continue;
#pragma GCC unroll 4
        for (int64_t v = 0; v < Count; ++v) {
          const Vec x = m.load(row + (firstColumn + j) * r.channels + v * kLanes, v);
#pragma GCC unroll 8
          for (int64_t k2 = 0; k2 < KernelWidth; ++k2)
            if (j >= k2 && j - k2 < Columns)
              acc[j - k2][v] = V::fma(w[k2][v], x, acc[j - k2][v]);
        }
      }
    }
    finishNhwcBlock(r, r.channels, o, c, m, acc);
  }

  // The same for any kernel, one tap at a time; a single column skips the taps outside the
  // row.
  template <int64_t Count, int64_t Columns, bool Partial>
  static void taps(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, int64_t k1Begin,
                   int64_t k1End, Lanes<Count, Partial> m) {
    Vec acc[Columns][Count];
    startNhwcBlock(r.bias, c, m, acc);
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
          w[v] = m.load(weights + k2 * r.channels + v * kLanes, v);
        for (int64_t col = 0; col < Columns; ++col)
          for (int64_t v = 0; v < Count; ++v)
            acc[col][v] = V::fma(w[v], m.load(src + col * columnStep + v * kLanes, v), acc[col][v]);
      }
    }
    finishNhwcBlock(r, r.channels, o, c, m, acc);
  }

  template <int64_t Count, int64_t Columns, int64_t KernelWidth, bool Partial>
  static void slideBlock(const DepthwiseNhwcRowArgs &r, int64_t o, int64_t c, int64_t first,
                         int64_t end, int64_t k1Begin, int64_t k1End, Lanes<Count, Partial> m) {
    if (o >= first && o + Columns <= end)
      slide<Count, Columns, KernelWidth, Partial, false>(r, o, c, k1Begin, k1End, m);
    else
      slide<Count, Columns, KernelWidth, Partial, true>(r, o, c, k1Begin, k1End, m);
  }

  // Output columns [o, oEnd) of channels [c, c + Count * kLanes) in blocks of as many
  // columns as the registers allow, then fewer. Tap by tap (KernelWidth 0), a block's taps
  // must all lie inside the row: the columns with taps outside it (outside [first, end)) are
  // computed alone. The descent is written out for each path: one helper taking the block as
  // a lambda made both 20% slower (GCC inlined the blocks differently).
  template <int64_t Count, int64_t KernelWidth, bool Partial>
  static void channelBlock(const DepthwiseNhwcRowArgs &r, int64_t c, int64_t o, int64_t oEnd,
                           int64_t first, int64_t end, int64_t k1Begin, int64_t k1End,
                           int64_t lanes) {
    constexpr int64_t kColumns = columnsFor(Count, KernelWidth);
    const Lanes<Count, Partial> m{lanes};
    if constexpr (KernelWidth > 0) {
      for (; o + kColumns <= oEnd; o += kColumns)
        slideBlock<Count, kColumns, KernelWidth, Partial>(r, o, c, first, end, k1Begin, k1End, m);
      if constexpr (kColumns > 4)
        for (; o + 4 <= oEnd; o += 4)
          slideBlock<Count, 4, KernelWidth, Partial>(r, o, c, first, end, k1Begin, k1End, m);
      if constexpr (kColumns > 2)
        for (; o + 2 <= oEnd; o += 2)
          slideBlock<Count, 2, KernelWidth, Partial>(r, o, c, first, end, k1Begin, k1End, m);
      for (; o < oEnd; ++o)
        slideBlock<Count, 1, KernelWidth, Partial>(r, o, c, first, end, k1Begin, k1End, m);
    } else {
      const int64_t insideEnd = end < oEnd ? end : oEnd;
      for (; o < oEnd && o < first; ++o)
        taps<Count, 1, Partial>(r, o, c, k1Begin, k1End, m);
      for (; o + kColumns <= insideEnd; o += kColumns)
        taps<Count, kColumns, Partial>(r, o, c, k1Begin, k1End, m);
      if constexpr (kColumns > 4)
        for (; o + 4 <= insideEnd; o += 4)
          taps<Count, 4, Partial>(r, o, c, k1Begin, k1End, m);
      if constexpr (kColumns > 2)
        for (; o + 2 <= insideEnd; o += 2)
          taps<Count, 2, Partial>(r, o, c, k1Begin, k1End, m);
      for (; o < oEnd; ++o)
        taps<Count, 1, Partial>(r, o, c, k1Begin, k1End, m);
    }
  }

  template <int64_t Count, int64_t KernelWidth>
  static void lastChannels(const DepthwiseNhwcRowArgs &r, int64_t c, int64_t o, int64_t oEnd,
                           int64_t first, int64_t end, int64_t k1Begin, int64_t k1End,
                           int64_t lanes) {
    if (lanes == kLanes)
      channelBlock<Count, KernelWidth, false>(r, c, o, oEnd, first, end, k1Begin, k1End, lanes);
    else
      channelBlock<Count, KernelWidth, true>(r, c, o, oEnd, first, end, k1Begin, k1End, lanes);
  }

  // The row's channels [channelBegin, channelEnd) in chunks of output columns whose input
  // stays in L1 while every block of channels reads it (it comes from L2 once for all of
  // them): whole blocks of the most vectors, then the rest in one block (its last vector
  // partial where the channels do not fill it, or the block moved back to whole vectors).
  template <int64_t KernelWidth>
  static void channels(const DepthwiseNhwcRowArgs &r, int64_t first, int64_t end, int64_t k1Begin,
                       int64_t k1End) {
    constexpr int64_t kVectors = maxVectors(KernelWidth);
    constexpr int64_t kL1Floats = 6 * 1024;
    const int64_t width = r.channelEnd - r.channelBegin;
    if (width <= 0)
      return;
    const int64_t kernelWidth = KernelWidth ? KernelWidth : r.kernelWidth;
    const int64_t rest =
        width % (kVectors * kLanes) ? width % (kVectors * kLanes) : kVectors * kLanes;
    const int64_t count = (rest + kLanes - 1) / kLanes;
    int64_t chunk = columnsFor(kVectors, KernelWidth);
    while (chunk < 16 &&
           r.kernelHeight * (2 * chunk * r.strideWidth + kernelWidth) * width <= kL1Floats)
      chunk *= 2;
    const int64_t whole = r.channelEnd - rest;
    // A partial last vector is read and written through masks, which cost the unrolled blocks
    // their folded loads and registers (72 channels ran slower than 80): where the part has
    // channels enough before it, the last block moves back to end at channelEnd with whole
    // vectors instead, computing a few channels again, to the same bits.
    const bool movedBack = rest % kLanes != 0 && r.channelEnd - count * kLanes >= r.channelBegin;
    const int64_t last = movedBack ? r.channelEnd - count * kLanes : whole;
    const int64_t lanes = movedBack ? kLanes : rest - (count - 1) * kLanes;
    // Tap by tap, chunks start at the first column inside the row, so that only the edge
    // columns are computed alone.
    const int64_t chunksFrom = KernelWidth > 0 ? 0 : first;
    for (int64_t o = 0; o < r.outWidth;) {
      int64_t oEnd = o < chunksFrom ? chunksFrom : o + chunk;
      oEnd = oEnd < r.outWidth ? oEnd : r.outWidth;
      for (int64_t c = r.channelBegin; c < whole; c += kVectors * kLanes)
        channelBlock<kVectors, KernelWidth, false>(r, c, o, oEnd, first, end, k1Begin, k1End,
                                                   kLanes);
      if (count == 1)
        lastChannels<1, KernelWidth>(r, last, o, oEnd, first, end, k1Begin, k1End, lanes);
      else if (count == 2)
        lastChannels<2, KernelWidth>(r, last, o, oEnd, first, end, k1Begin, k1End, lanes);
      if constexpr (kVectors == 4) {
        if (count == 3)
          lastChannels<3, KernelWidth>(r, last, o, oEnd, first, end, k1Begin, k1End, lanes);
        else if (count == 4)
          lastChannels<4, KernelWidth>(r, last, o, oEnd, first, end, k1Begin, k1End, lanes);
      }
      o = oEnd;
    }
  }

  static void run(const DepthwiseNhwcRowArgs &r) {
    // Tap rows inside the image: the same for every output column of the row.
    int64_t k1Begin = 0, k1End = r.kernelHeight;
    while (k1Begin < k1End && r.firstRow + k1Begin * r.dilationHeight < 0)
      ++k1Begin;
    while (k1End > k1Begin && r.firstRow + (k1End - 1) * r.dilationHeight >= r.inHeight)
      --k1End;
    // Output columns [first, end) have every tap inside the row.
    const int64_t span = (r.kernelWidth - 1) * r.dilationWidth;
    const int64_t first = (r.padWidth + r.strideWidth - 1) / r.strideWidth;
    const int64_t lastInside = r.inWidth - 1 - span + r.padWidth;
    const int64_t end = lastInside < 0 ? 0 : lastInside / r.strideWidth + 1;
    // The windows networks use most (MobileNets' and EfficientNets' 3x3 and 5x5) unrolled at
    // stride 1; the rest tap by tap (at stride 2, where an input column serves fewer outputs,
    // the unrolled blocks ran 5-10% slower on wide maps).
    const bool unrolled = r.dilationWidth == 1 && r.strideWidth == 1;
    if (unrolled && r.kernelWidth == 3)
      channels<3>(r, first, end, k1Begin, k1End);
    else if (unrolled && r.kernelWidth == 5)
      channels<5>(r, first, end, k1Begin, k1End);
    else
      channels<0>(r, first, end, k1Begin, k1End);
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
