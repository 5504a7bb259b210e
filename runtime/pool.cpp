#include "dlc_kernels.h"
#include "gemm.h"
#include "parallel.h"
#include "window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace dlc {
namespace rt {

namespace {

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

// Calls f(index) for every in-input element of the window, index counting within the plane.
template <typename F>
void forEachTap(const WindowParams &p, const Span &s0, const Span &s1, const Span &s2, F f) {
  for (int64_t k0 = s0.lo; k0 < s0.hi; ++k0) {
    int64_t i0 = s0.start + k0 * p.dilation[0];
    for (int64_t k1 = s1.lo; k1 < s1.hi; ++k1) {
      int64_t row = (i0 * p.in[1] + s1.start + k1 * p.dilation[1]) * p.in[2];
      for (int64_t k2 = s2.lo; k2 < s2.hi; ++k2)
        f(row + s2.start + k2 * p.dilation[2]);
    }
  }
}

// Calls f(inPlaneIndex, outPlaneIndex) for each plane of batch x channels.
// Planes are independent (each reads and writes only its own), so they are split over the
// model's threads.
template <typename F> void forEachPlane(const WindowParams &p, F f) {
  const int64_t inPlane = p.in[0] * p.in[1] * p.in[2];
  const int64_t outPlane = p.out[0] * p.out[1] * p.out[2];
  parallelFor(p.batch * p.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c)
      f(c * inPlane, c * outPlane);
  });
}

// The element of the window max pooling picks (padding never wins), or -1 for a window
// entirely in padding. The first maximum wins and NaN inputs propagate; the gradient goes to
// the same element, as in PyTorch, which also sends it to the first tap when all are -inf.
int64_t windowArgMax(const WindowParams &p, const float *plane, const Span &s0, const Span &s1,
                     const Span &s2) {
  float best = 0.0f;
  int64_t arg = -1;
  forEachTap(p, s0, s1, s2, [&](int64_t i) {
    if (arg < 0 || plane[i] > best || std::isnan(plane[i])) {
      best = plane[i];
      arg = i;
    }
  });
  return arg;
}

// The number of elements avgPoolF32 divides a window's sum by.
int64_t avgCount(const Span &s0, const Span &s1, const Span &s2, bool countIncludePad) {
  return countIncludePad ? s0.counted * s1.counted * s2.counted
                         : (s0.hi - s0.lo) * (s1.hi - s1.lo) * (s2.hi - s2.lo);
}

// Eight partial sums vectorise and lose less precision than one running sum; term(i) is the
// i-th of n summands.
template <typename Term> float sum8(int64_t n, Term term) {
  float partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int64_t l = 0; l < 8; ++l)
      partial[l] += term(i + l);
  float sum = 0.0f;
  for (; i < n; ++i)
    sum += term(i);
  for (float v : partial)
    sum += v;
  return sum;
}

// y = x * a + b with (a, b) = coeffs(c) per channel: batch norm folded to one multiply-add per
// element.
template <typename Coeffs>
void affinePerChannel(const float *x, float *y, int64_t batch, int64_t channels, int64_t spatial,
                      Coeffs coeffs) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const auto [a, b] = coeffs(c);
      const float *src = x + (n * channels + c) * spatial;
      float *dst = y + (n * channels + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        dst[i] = src[i] * a + b;
    }
  }
}

// Sum of term(elementIndex) over channel c of a [batch, channels, spatial] tensor. Rows are
// summed in float, the rows' sums in double: a channel may span millions of elements.
template <typename Term>
double channelSum(int64_t batch, int64_t channels, int64_t spatial, int64_t c, Term term) {
  double total = 0.0;
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t row = (n * channels + c) * spatial;
    total += sum8(spatial, [&](int64_t i) { return term(row + i); });
  }
  return total;
}

// Per channel: the sum of dy and the sum of dy * (x - mean), from which both gradients follow.
struct GradSums {
  double dy, dyCentered;
};
GradSums gradSums(const float *dy, const float *x, float mean, int64_t batch, int64_t channels,
                  int64_t spatial, int64_t c) {
  return {
      channelSum(batch, channels, spatial, c, [dy](int64_t i) { return dy[i]; }),
      channelSum(batch, channels, spatial, c, [=](int64_t i) { return dy[i] * (x[i] - mean); })};
}

} // namespace

void maxPoolF32(const WindowParams &p, const float *x, float *y) {
  if (isPlanar(p)) {
    // Separably, on contiguous rows, by the selected instruction set's kernel. Equal values
    // to the general path (padding never wins, an all-padding window stays -inf, NaN
    // propagates); only a tie of -0 and +0 may take the other sign.
    if (p.out[1] * p.out[2] == 0)
      return;
    const int64_t padded = (p.out[2] - 1) * p.stride[2] + (p.kernel[2] - 1) * p.dilation[2] + 1;
    parallelFor(p.batch * p.channels, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(2 * (padded + kMaxPoolRowSlack));
      std::vector<const float *> sources(std::max(p.kernel[1], p.kernel[2]));
      float *rows = scratch.data(), *windows = rows + padded + kMaxPoolRowSlack;
      maxPoolPlanes({&p, x, y, begin, end, rows, windows, sources.data()});
    });
    return;
  }
  forEachPlane(p, [&](int64_t in, int64_t out) {
    const float *plane = x + in;
    forEachWindow(p, nullptr, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      int64_t arg = windowArgMax(p, plane, s0, s1, s2);
      y[out + o] = arg >= 0 ? plane[arg] : -std::numeric_limits<float>::infinity();
    });
  });
}

void maxPoolIndicesF32(const WindowParams &p, const float *x, int64_t *indices, bool columnMajor) {
  forEachPlane(p, [&](int64_t in, int64_t out) {
    forEachWindow(p, nullptr, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      int64_t arg = windowArgMax(p, x + in, s0, s1, s2);
      if (arg >= 0 && columnMajor) {
        int64_t i2 = arg % p.in[2], i1 = arg / p.in[2] % p.in[1], i0 = arg / (p.in[2] * p.in[1]);
        arg = i0 + (i1 + i2 * p.in[1]) * p.in[0];
      }
      indices[out + o] = arg >= 0 ? in + arg : -1;
    });
  });
}

bool roiAlignF32(const RoiAlignParams &p, const float *x, const float *rois,
                 const int64_t *batchIndices, float *y) {
  const int64_t bins = p.outHeight * p.outWidth;
  for (int64_t r = 0; r < p.rois; ++r) {
    if (batchIndices[r] < 0 || batchIndices[r] >= p.batch)
      return false;
    const double offset = p.halfPixel ? 0.5 : 0.0;
    double box[4];
    for (int k = 0; k < 4; ++k) {
      box[k] = double(rois[r * 4 + k]) * p.spatialScale - offset;
      if (!std::isfinite(box[k]))
        return false;
    }
    double roiWidth = box[2] - box[0], roiHeight = box[3] - box[1];
    if (!p.halfPixel) { // malformed regions become 1 x 1
      roiWidth = std::max(roiWidth, 1.0);
      roiHeight = std::max(roiHeight, 1.0);
    }
    const double binHeight = roiHeight / p.outHeight, binWidth = roiWidth / p.outWidth;
    // Samples per bin: sampling_ratio, or enough to cover each bin at unit spacing (none for
    // an inverted region, which then pools to 0).
    auto grid = [&](double extent) {
      double n = p.samplingRatio > 0 ? double(p.samplingRatio) : std::ceil(extent);
      return n > double(kMaxRoiSamplesPerAxis) ? int64_t(-1) : int64_t(std::max(n, 0.0));
    };
    const int64_t gridH = grid(binHeight), gridW = grid(binWidth);
    if (gridH < 0 || gridW < 0)
      return false;
    const double count = double(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t c = 0; c < p.channels; ++c) {
      const float *plane = x + (batchIndices[r] * p.channels + c) * p.height * p.width;
      float *out = y + (r * p.channels + c) * bins;
      for (int64_t ph = 0; ph < p.outHeight; ++ph)
        for (int64_t pw = 0; pw < p.outWidth; ++pw) {
          double acc = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gridH; ++iy)
            for (int64_t ix = 0; ix < gridW; ++ix) {
              double sy = box[1] + ph * binHeight + (iy + 0.5) * binHeight / gridH;
              double sx = box[0] + pw * binWidth + (ix + 0.5) * binWidth / gridW;
              // The four bilinear taps, weighted; a sample off the map contributes zeros.
              double taps[4] = {0, 0, 0, 0};
              if (sy >= -1.0 && sy <= p.height && sx >= -1.0 && sx <= p.width) {
                sy = std::max(sy, 0.0);
                sx = std::max(sx, 0.0);
                int64_t y0 = int64_t(sy), x0 = int64_t(sx), y1 = y0 + 1, x1 = x0 + 1;
                if (y0 >= p.height - 1)
                  sy = double(y0 = y1 = p.height - 1);
                if (x0 >= p.width - 1)
                  sx = double(x0 = x1 = p.width - 1);
                double ly = sy - y0, lx = sx - x0, hy = 1.0 - ly, hx = 1.0 - lx;
                taps[0] = hy * hx * plane[y0 * p.width + x0];
                taps[1] = hy * lx * plane[y0 * p.width + x1];
                taps[2] = ly * hx * plane[y1 * p.width + x0];
                taps[3] = ly * lx * plane[y1 * p.width + x1];
              }
              if (!p.max) {
                acc += taps[0] + taps[1] + taps[2] + taps[3];
                continue;
              }
              // ONNX's max mode: the largest weighted tap over all samples.
              double best = std::max(std::max(taps[0], taps[1]), std::max(taps[2], taps[3]));
              acc = first ? best : std::max(acc, best);
              first = false;
            }
          out[ph * p.outWidth + pw] = static_cast<float>(p.max ? acc : acc / count);
        }
    }
  }
  return true;
}

void maxPoolGradF32(const WindowParams &p, const float *x, const float *dy, float *dx) {
  std::fill(dx, dx + p.batch * p.channels * p.in[0] * p.in[1] * p.in[2], 0.0f);
  forEachPlane(p, [&](int64_t in, int64_t out) {
    forEachWindow(p, nullptr, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      // An all-padding window's -inf output is a constant; its gradient has nowhere to go.
      int64_t arg = windowArgMax(p, x + in, s0, s1, s2);
      if (arg >= 0)
        dx[in + arg] += dy[out + o];
    });
  });
}

void avgPoolF32(const WindowParams &p, const int64_t *padEnd, bool countIncludePad, const float *x,
                float *y) {
  forEachPlane(p, [&](int64_t in, int64_t out) {
    forEachWindow(p, padEnd, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      float sum = 0.0f;
      forEachTap(p, s0, s1, s2, [&](int64_t i) { sum += x[in + i]; });
      int64_t count = avgCount(s0, s1, s2, countIncludePad);
      // A window entirely in padding averages nothing; 0 beats 0/0.
      y[out + o] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    });
  });
}

void avgPoolGradF32(const WindowParams &p, const int64_t *padEnd, bool countIncludePad,
                    const float *dy, float *dx) {
  std::fill(dx, dx + p.batch * p.channels * p.in[0] * p.in[1] * p.in[2], 0.0f);
  forEachPlane(p, [&](int64_t in, int64_t out) {
    forEachWindow(p, padEnd, [&](int64_t o, const Span &s0, const Span &s1, const Span &s2) {
      int64_t count = avgCount(s0, s1, s2, countIncludePad);
      float share = count > 0 ? dy[out + o] / static_cast<float>(count) : 0.0f;
      forEachTap(p, s0, s1, s2, [&](int64_t i) { dx[in + i] += share; });
    });
  });
}

// Threads take whole planes, as the elementwise kernels before them split the same memory:
// each reads what it wrote (a plane read on another core costs far more than its sum).
void globalAvgPoolF32(const float *x, float *y, int64_t batchChannels, int64_t spatial) {
  parallelForWork(batchChannels, spatial, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c) {
      const float *plane = x + c * spatial;
      float sum = sum8(spatial, [plane](int64_t i) { return plane[i]; });
      y[c] = spatial > 0 ? sum / static_cast<float>(spatial) : 0.0f;
    }
  });
}

void globalAvgPoolGradF32(const float *dy, float *dx, int64_t batchChannels, int64_t spatial) {
  parallelForWork(batchChannels, spatial, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c)
      std::fill(dx + c * spatial, dx + (c + 1) * spatial, dy[c] / static_cast<float>(spatial));
  });
}

void batchNormF32(const float *x, const float *scale, const float *bias, const float *mean,
                  const float *var, float epsilon, float *y, int64_t batch, int64_t channels,
                  int64_t spatial) {
  affinePerChannel(x, y, batch, channels, spatial, [=](int64_t c) {
    float a = scale[c] / std::sqrt(var[c] + epsilon);
    return std::pair<float, float>(a, bias[c] - mean[c] * a);
  });
}

void batchNormStatsF32(const float *x, float epsilon, float *stats, int64_t batch, int64_t channels,
                       int64_t spatial) {
  const double count = static_cast<double>(batch * spatial);
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = static_cast<float>(
        channelSum(batch, channels, spatial, c, [x](int64_t i) { return x[i]; }) / count);
    // Two passes: E[x^2] - E[x]^2 cancels catastrophically when the mean is large.
    const double var = channelSum(batch, channels, spatial, c,
                                  [=](int64_t i) {
                                    float d = x[i] - mean;
                                    return d * d;
                                  }) /
                       count;
    stats[c] = mean;
    stats[channels + c] = static_cast<float>(1.0 / std::sqrt(var + epsilon));
    stats[2 * channels + c] = static_cast<float>(var);
  }
}

void batchNormApplyF32(const float *x, const float *stats, const float *scale, const float *bias,
                       float *y, int64_t batch, int64_t channels, int64_t spatial) {
  affinePerChannel(x, y, batch, channels, spatial, [=](int64_t c) {
    float a = scale[c] * stats[channels + c];
    return std::pair<float, float>(a, bias[c] - stats[c] * a);
  });
}

void batchNormGradInputF32(const float *dy, const float *x, const float *stats, const float *scale,
                           float *dx, int64_t batch, int64_t channels, int64_t spatial) {
  const double count = static_cast<double>(batch * spatial);
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = stats[c], invStd = stats[channels + c];
    const GradSums sums = gradSums(dy, x, mean, batch, channels, spatial, c);
    // dx = scale * invStd * (dy - mean(dy) - xhat * mean(dy * xhat)), xhat = (x - mean) * invStd:
    // the last two terms are the gradient through the batch mean and variance.
    const float dyMean = static_cast<float>(sums.dy / count);
    const float k = static_cast<float>(sums.dyCentered / count * invStd * invStd);
    const float a = scale[c] * invStd;
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t row = (n * channels + c) * spatial;
      for (int64_t i = row; i < row + spatial; ++i)
        dx[i] = (dy[i] - dyMean - (x[i] - mean) * k) * a;
    }
  }
}

void batchNormGradParamsF32(const float *dy, const float *x, const float *stats, float *out,
                            int64_t batch, int64_t channels, int64_t spatial) {
  for (int64_t c = 0; c < channels; ++c) {
    const GradSums sums = gradSums(dy, x, stats[c], batch, channels, spatial, c);
    out[c] = static_cast<float>(sums.dyCentered * stats[channels + c]);
    out[channels + c] = static_cast<float>(sums.dy);
  }
}

void batchNormRunningUpdateF32(float *runningMean, float *runningVar, const float *stats,
                               float momentum, int64_t channels, int64_t count) {
  // PyTorch tracks the unbiased variance though it normalises with the biased one.
  const double correction = count > 1 ? double(count) / double(count - 1) : 1.0;
  const double keep = 1.0 - double(momentum);
  for (int64_t c = 0; c < channels; ++c) {
    runningMean[c] = static_cast<float>(keep * runningMean[c] + momentum * double(stats[c]));
    runningVar[c] = static_cast<float>(keep * runningVar[c] +
                                       momentum * double(stats[2 * channels + c]) * correction);
  }
}

} // namespace rt
} // namespace dlc
