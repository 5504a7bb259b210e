#include "dlc_runtime.h"

#include <algorithm>

namespace dlc {
namespace rt {

namespace {

int64_t product3(const int64_t *v) { return v[0] * v[1] * v[2]; }

// Smallest q with q * den >= num, for den > 0 and num of either sign.
int64_t ceilDiv(int64_t num, int64_t den) {
  return num >= 0 ? (num + den - 1) / den : -((-num) / den);
}

// A 1x1 window with unit stride and no padding reads each input pixel exactly once in order,
// so the input itself is the im2col matrix.
bool isPointwise(const WindowParams &w) {
  for (int d = 0; d < 3; ++d)
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.padBegin[d] != 0 || w.dilation[d] != 1 ||
        w.out[d] != w.in[d])
      return false;
  return true;
}

// Output positions [lo, hi) along one dim whose input index o * stride - pad + offset lies in
// [0, in); positions outside read padding.
void validRange(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t offset, int64_t &lo,
                int64_t &hi) {
  lo = std::clamp<int64_t>(ceilDiv(pad - offset, stride), 0, out);
  hi = std::clamp<int64_t>(ceilDiv(in + pad - offset, stride), lo, out);
}

// Expands `channels` input planes into rows (channel, k0, k1, k2) of output-position columns,
// for output rows [rowBegin, rowEnd) (a row is one (o0, o1) pair, out[2] positions long).
void im2col(const WindowParams &w, const float *x, int64_t channels, int64_t rowBegin,
            int64_t rowEnd, float *cols) {
  const int64_t inPlane = product3(w.in);
  const int64_t out1 = w.out[1], out2 = w.out[2];
  for (int64_t c = 0; c < channels; ++c) {
    const float *plane = x + c * inPlane;
    for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
      int64_t lo0, hi0;
      validRange(w.in[0], w.out[0], w.stride[0], w.padBegin[0], k0 * w.dilation[0], lo0, hi0);
      for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
        int64_t lo1, hi1;
        validRange(w.in[1], out1, w.stride[1], w.padBegin[1], k1 * w.dilation[1], lo1, hi1);
        for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
          int64_t off2 = k2 * w.dilation[2] - w.padBegin[2];
          int64_t lo2, hi2;
          validRange(w.in[2], out2, w.stride[2], w.padBegin[2], k2 * w.dilation[2], lo2, hi2);
          for (int64_t row = rowBegin; row < rowEnd; ++row, cols += out2) {
            int64_t o0 = row / out1, o1 = row % out1;
            if (o0 < lo0 || o0 >= hi0 || o1 < lo1 || o1 >= hi1) {
              std::fill(cols, cols + out2, 0.0f);
              continue;
            }
            int64_t i0 = o0 * w.stride[0] - w.padBegin[0] + k0 * w.dilation[0];
            int64_t i1 = o1 * w.stride[1] - w.padBegin[1] + k1 * w.dilation[1];
            // Index of the input element under o2 == 0 (possibly outside the row).
            int64_t base = (i0 * w.in[1] + i1) * w.in[2] + off2;
            std::fill(cols, cols + lo2, 0.0f);
            if (w.stride[2] == 1) {
              std::copy(plane + (base + lo2), plane + (base + hi2), cols + lo2);
            } else {
              for (int64_t o2 = lo2; o2 < hi2; ++o2)
                cols[o2] = plane[base + o2 * w.stride[2]];
            }
            std::fill(cols + hi2, cols + out2, 0.0f);
          }
        }
      }
    }
  }
}

// Output rows per im2col chunk: as many as fit the workspace limit, at least one.
int64_t rowsPerChunk(const ConvParams &p) {
  const WindowParams &w = p.window;
  const int64_t limit = p.workspaceLimit > 0 ? p.workspaceLimit : int64_t(1) << 20;
  const int64_t rowBytes =
      w.channels / p.groups * product3(w.kernel) * w.out[2] * int64_t(sizeof(float));
  const int64_t rows = w.out[0] * w.out[1];
  return std::clamp<int64_t>(rowBytes ? limit / rowBytes : rows, 1, std::max<int64_t>(rows, 1));
}

} // namespace

size_t convWorkspaceBytes(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (isPointwise(w))
    return 0;
  int64_t k = w.channels / p.groups * product3(w.kernel);
  return static_cast<size_t>(k * rowsPerChunk(p) * w.out[2]) * sizeof(float);
}

void convF32(const ConvParams &p, const float *x, const float *w, const float *bias, float *y,
             float *workspace) {
  const WindowParams &win = p.window;
  const int64_t inPlane = product3(win.in), outPlane = product3(win.out);
  const int64_t inPerGroup = win.channels / p.groups, outPerGroup = p.outChannels / p.groups;
  const int64_t k = inPerGroup * product3(win.kernel);
  const bool pointwise = isPointwise(win);
  for (int64_t n = 0; n < win.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float *xg = x + (n * win.channels + g * inPerGroup) * inPlane;
      float *yg = y + (n * p.outChannels + g * outPerGroup) * outPlane;
      const float *wg = w + g * outPerGroup * k;
      if (pointwise) {
        sgemm(false, false, outPerGroup, outPlane, k, 1.0f, wg, k, xg, outPlane, 0.0f, yg,
              outPlane);
      } else {
        // Each chunk of output rows is one im2col block and one product into y's columns.
        const int64_t rows = win.out[0] * win.out[1], chunk = rowsPerChunk(p);
        for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
          const int64_t r1 = std::min(rows, r0 + chunk), cols = (r1 - r0) * win.out[2];
          im2col(win, xg, inPerGroup, r0, r1, workspace);
          sgemm(false, false, outPerGroup, cols, k, 1.0f, wg, k, workspace, cols, 0.0f,
                yg + r0 * win.out[2], outPlane);
        }
      }
      if (bias) {
        for (int64_t m = 0; m < outPerGroup; ++m) {
          float b = bias[g * outPerGroup + m];
          float *row = yg + m * outPlane;
          for (int64_t i = 0; i < outPlane; ++i)
            row[i] += b;
        }
      }
    }
  }
}

} // namespace rt
} // namespace dlc
