// Internal to the runtime: index arithmetic shared by the windowed kernels (conv.cpp,
// pool.cpp).
#ifndef DLC_RUNTIME_WINDOW_H
#define DLC_RUNTIME_WINDOW_H

#include "dlc_kernels.h"

#include <algorithm>

namespace dlc {
namespace rt {
namespace {

// Smallest q with q * den >= num, for den > 0 and num of either sign.
inline int64_t ceilDiv(int64_t num, int64_t den) {
  return num >= 0 ? (num + den - 1) / den : -((-num) / den);
}

// Output positions [lo, hi) along one dim whose input index o * stride - pad + offset lies in
// [0, in); positions outside read padding.
inline void validRange(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t offset,
                       int64_t &lo, int64_t &hi) {
  lo = std::clamp<int64_t>(ceilDiv(pad - offset, stride), 0, out);
  hi = std::clamp<int64_t>(ceilDiv(in + pad - offset, stride), lo, out);
}

// Whether a window over w is at most 2-D (the outer spatial slot unused: its one tap reads
// the one input position), as the row walk below requires.
inline bool isPlanar(const WindowParams &w) {
  return w.in[0] == 1 && w.kernel[0] == 1 && w.out[0] == 1 && w.padBegin[0] == 0;
}

// The taps of a planar window, as runs along output rows: for each output row o1 and each tap
// (k1, k2) in order whose input row exists, calls run(tap, o1, base, lo, hi): for output
// positions o2 in [lo, hi) the tap reads input element base + o2 * stride[2] of the plane
// (the others read padding). The depthwise convolution's fallback for wide rows combines its
// taps this way, looping over o2 inside run while the output row stays in L1.
template <typename Run> void forEachTapRun(const WindowParams &w, Run run) {
  for (int64_t o1 = 0; o1 < w.out[1]; ++o1) {
    for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
      const int64_t i1 = o1 * w.stride[1] - w.padBegin[1] + k1 * w.dilation[1];
      if (i1 < 0 || i1 >= w.in[1])
        continue;
      for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
        int64_t lo2, hi2;
        validRange(w.in[2], w.out[2], w.stride[2], w.padBegin[2], k2 * w.dilation[2], lo2, hi2);
        run(k1 * w.kernel[2] + k2, o1, i1 * w.in[2] + k2 * w.dilation[2] - w.padBegin[2], lo2,
            hi2);
      }
    }
  }
}

} // namespace
} // namespace rt
} // namespace dlc

#endif
