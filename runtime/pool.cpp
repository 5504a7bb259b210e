#include "dlc_runtime.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dlc {
namespace rt {

namespace {

// Smallest q with q * den >= num, for den > 0 and num of either sign.
int64_t ceilDiv(int64_t num, int64_t den) {
  return num >= 0 ? (num + den - 1) / den : -((-num) / den);
}

// The window of output index `o` along one dim: input index `start + k * dilation` for kernel
// taps k in [lo, hi) lies inside the input; `counted` taps lie inside the padded extent.
struct Span {
  int64_t start, lo, hi, counted;
};

Span span(const WindowParams &p, int d, int64_t o, const int64_t *padEnd) {
  Span s;
  const int64_t kernel = p.kernel[d], dil = p.dilation[d], in = p.in[d];
  s.start = o * p.stride[d] - p.padBegin[d];
  s.lo = std::min(kernel, s.start >= 0 ? 0 : ceilDiv(-s.start, dil));
  s.hi = std::clamp<int64_t>(ceilDiv(in - s.start, dil), s.lo, kernel);
  // Taps never fall before -padBegin, so only the end of the padded extent can clip them.
  s.counted =
      padEnd ? std::clamp<int64_t>(ceilDiv(in + padEnd[d] - s.start, dil), 0, kernel) : kernel;
  return s;
}

// Calls visit(outIndex, span0, span1, span2) for every output position of one plane.
template <typename Visit>
void forEachWindow(const WindowParams &p, const int64_t *padEnd, Visit visit) {
  int64_t outIndex = 0;
  for (int64_t o0 = 0; o0 < p.out[0]; ++o0) {
    Span s0 = span(p, 0, o0, padEnd);
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
      Span s1 = span(p, 1, o1, padEnd);
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2)
        visit(outIndex++, s0, s1, span(p, 2, o2, padEnd));
    }
  }
}

// Calls f(value) for every in-input element of the window.
template <typename F>
void forEachTap(const WindowParams &p, const float *plane, const Span &s0, const Span &s1,
                const Span &s2, F f) {
  for (int64_t k0 = s0.lo; k0 < s0.hi; ++k0) {
    int64_t i0 = s0.start + k0 * p.dilation[0];
    for (int64_t k1 = s1.lo; k1 < s1.hi; ++k1) {
      const float *row = plane + (i0 * p.in[1] + s1.start + k1 * p.dilation[1]) * p.in[2];
      for (int64_t k2 = s2.lo; k2 < s2.hi; ++k2)
        f(row[s2.start + k2 * p.dilation[2]]);
    }
  }
}

void avgPool(const WindowParams &p, const int64_t *padEnd, bool countIncludePad, const float *x,
             float *y) {
  const int64_t inPlane = p.in[0] * p.in[1] * p.in[2];
  const int64_t outPlane = p.out[0] * p.out[1] * p.out[2];
  for (int64_t c = 0; c < p.batch * p.channels; ++c) {
    const float *plane = x + c * inPlane;
    float *out = y + c * outPlane;
    forEachWindow(p, padEnd, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      float sum = 0.0f;
      forEachTap(p, plane, s0, s1, s2, [&sum](float v) { sum += v; });
      int64_t count = countIncludePad ? s0.counted * s1.counted * s2.counted
                                      : (s0.hi - s0.lo) * (s1.hi - s1.lo) * (s2.hi - s2.lo);
      // A window entirely in padding averages nothing; 0 beats 0/0.
      out[o] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    });
  }
}

} // namespace

void maxPoolF32(const WindowParams &p, const float *x, float *y) {
  const int64_t inPlane = p.in[0] * p.in[1] * p.in[2];
  const int64_t outPlane = p.out[0] * p.out[1] * p.out[2];
  for (int64_t c = 0; c < p.batch * p.channels; ++c) {
    const float *plane = x + c * inPlane;
    float *out = y + c * outPlane;
    forEachWindow(p, nullptr, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      // Padding never wins, so the empty max is -inf; NaN inputs propagate.
      float best = -std::numeric_limits<float>::infinity();
      forEachTap(p, plane, s0, s1, s2, [&best](float v) {
        if (v > best || std::isnan(v))
          best = v;
      });
      out[o] = best;
    });
  }
}

void avgPoolF32(const WindowParams &p, const int64_t *padEnd, bool countIncludePad, const float *x,
                float *y) {
  avgPool(p, padEnd, countIncludePad, x, y);
}

void globalAvgPoolF32(const float *x, float *y, int64_t batchChannels, int64_t spatial) {
  for (int64_t c = 0; c < batchChannels; ++c) {
    const float *plane = x + c * spatial;
    // Eight partial sums vectorise and lose less precision than one running sum.
    float partial[8] = {};
    int64_t i = 0;
    for (; i + 8 <= spatial; i += 8)
      for (int64_t l = 0; l < 8; ++l)
        partial[l] += plane[i + l];
    float sum = 0.0f;
    for (; i < spatial; ++i)
      sum += plane[i];
    for (float v : partial)
      sum += v;
    y[c] = spatial > 0 ? sum / static_cast<float>(spatial) : 0.0f;
  }
}

void batchNormF32(const float *x, const float *scale, const float *bias, const float *mean,
                  const float *var, float epsilon, float *y, int64_t batch, int64_t channels,
                  int64_t spatial) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      // Folding the statistics into y = a * x + b leaves one multiply-add per element.
      float a = scale[c] / std::sqrt(var[c] + epsilon);
      float b = bias[c] - mean[c] * a;
      const float *src = x + (n * channels + c) * spatial;
      float *dst = y + (n * channels + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        dst[i] = src[i] * a + b;
    }
  }
}

} // namespace rt
} // namespace dlc
