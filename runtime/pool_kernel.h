// Internal to the runtime: max pooling of planar (at most 2-D) windows, separably on
// contiguous rows, for one vector type V (the structs of gemm.cpp and isa_*.cpp; included
// where V's instructions are enabled). Like gemm_kernel.h it uses no standard library: a
// template instantiated here would be compiled for the wide target and could be linked into
// every caller; the caller provides the scratch rows.
#ifndef DLC_RUNTIME_POOL_KERNEL_H
#define DLC_RUNTIME_POOL_KERNEL_H

#include "gemm.h"

namespace dlc {
namespace rt {
namespace {

template <typename V> struct MaxPoolPlanar {
  using Vec = typename V::Vec;
  static constexpr int64_t kLanes = V::kLanes;

  // out[q] = the maximum over t of sources[t][q] (NaN propagates), for q in [0, count).
  static void foldMax(const float *const *sources, int64_t n, float *out, int64_t count) {
    int64_t q = 0;
    for (; q + kLanes <= count; q += kLanes) {
      Vec m = V::load(sources[0] + q);
      for (int64_t t = 1; t < n; ++t)
        m = V::maxOrNan(m, V::load(sources[t] + q));
      V::store(out + q, m);
    }
    if (q < count) {
      const int64_t rest = count - q;
      Vec m = V::loadPartial(sources[0] + q, rest);
      for (int64_t t = 1; t < n; ++t)
        m = V::maxOrNan(m, V::loadPartial(sources[t] + q, rest));
      V::storePartial(out + q, m, rest);
    }
  }

  // even[j] = row[2 j], odd[j] = row[2 j + 1] for 2 j < n, by shuffles of whole vectors: reads
  // up to two vectors past n and writes up to one past n / 2, in the slack.
  static void deinterleave(const float *row, int64_t n, float *even, float *odd) {
    for (int64_t j = 0; 2 * j < n; j += kLanes) {
      const Vec a = V::load(row + 2 * j), b = V::load(row + 2 * j + kLanes);
      if constexpr (kLanes == 4) {
        V::store(even + j, __builtin_shufflevector(a, b, 0, 2, 4, 6));
        V::store(odd + j, __builtin_shufflevector(a, b, 1, 3, 5, 7));
      } else if constexpr (kLanes == 8) {
        V::store(even + j, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
        V::store(odd + j, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15));
      } else {
        static_assert(kLanes == 16, "4, 8 or 16 lanes");
        V::store(even + j, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                                   22, 24, 26, 28, 30));
        V::store(odd + j, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21,
                                                  23, 25, 27, 29, 31));
      }
    }
  }

  // Per output row: the element-wise maximum of its window's input rows, laid out on the
  // padded row (padding stays -inf, so it never wins); then for each window start on that
  // row the maximum of the kernel's columns from there, written straight to the output row
  // at unit stride; at stride 2 from the row's even and odd columns (each window's taps then
  // at unit stride again), otherwise every stride-th of them picked.
  static void run(const MaxPoolPlanesArgs &a) {
    const WindowParams &p = *a.window;
    const int64_t in2 = p.in[2], out2 = p.out[2], pad2 = p.padBegin[2];
    const int64_t span2 = (p.kernel[2] - 1) * p.dilation[2];
    const int64_t padded = (out2 - 1) * p.stride[2] + span2 + 1, starts = padded - span2;
    // Input column i sits at padded column pad2 + i; a padding wider than the windows' reach
    // leaves nothing inside.
    const int64_t firstInside = pad2 < padded ? pad2 : padded;
    const int64_t endInside = padded < pad2 + in2 ? padded : pad2 + in2;
    const int64_t inPlane = p.in[1] * in2, outPlane = p.out[1] * out2;
    const float minusInf = -__builtin_inff();
    float *rows = a.rows, *windows = a.windows;
    const float **sources = a.sources;
    for (int64_t q = 0; q < padded; ++q)
      rows[q] = minusInf;
    for (int64_t c = a.planeBegin; c < a.planeEnd; ++c) {
      const float *plane = a.x + c * inPlane;
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
        int64_t taps = 0;
        for (int64_t k1 = 0; k1 < p.kernel[1]; ++k1) {
          const int64_t i1 = o1 * p.stride[1] - p.padBegin[1] + k1 * p.dilation[1];
          if (i1 >= 0 && i1 < p.in[1])
            sources[taps++] = plane + i1 * in2;
        }
        float *yrow = a.y + c * outPlane + o1 * out2;
        if (taps == 0) {
          for (int64_t o2 = 0; o2 < out2; ++o2)
            yrow[o2] = minusInf;
          continue;
        }
        foldMax(sources, taps, rows + firstInside, endInside - firstInside);
        for (int64_t k2 = 0; k2 < p.kernel[2]; ++k2)
          sources[k2] = rows + k2 * p.dilation[2];
        if (p.stride[2] == 1) {
          foldMax(sources, p.kernel[2], yrow, out2);
          continue;
        }
        if (p.stride[2] == 2) {
          // Tap k2 of window o2 reads padded column 2 o2 + k2 d: column o2 + k2 d / 2 of
          // the even or the odd columns, which the row splits into.
          float *even = windows, *odd = windows + (padded + kMaxPoolRowSlack) / 2;
          deinterleave(rows, padded, even, odd);
          for (int64_t k2 = 0; k2 < p.kernel[2]; ++k2) {
            const int64_t column = k2 * p.dilation[2];
            sources[k2] = (column % 2 ? odd : even) + column / 2;
          }
          foldMax(sources, p.kernel[2], yrow, out2);
          continue;
        }
        foldMax(sources, p.kernel[2], windows, starts);
        for (int64_t o2 = 0; o2 < out2; ++o2)
          yrow[o2] = windows[o2 * p.stride[2]];
      }
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
