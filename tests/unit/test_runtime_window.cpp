// Tests for the CPU runtime's pooling kernels and batch norm against direct references
// computed in double, on random windows from fixed seeds.
#include "dlc_kernels.h"
#include "gemm.h"
#include "runtime_test_util.h"
#include "winograd.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

using namespace dlc::rt;

namespace {

enum class PoolKind { Max, AvgExclude, AvgInclude };

// Pooling by definition: walk every tap, classify it as inside the input, inside the padded
// extent [-padBegin, in + padEnd), or beyond.
std::vector<double> poolReference(const WindowParams &w, const int64_t padEnd[3], PoolKind kind,
                                  const std::vector<float> &x) {
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2];
  std::vector<double> y;
  for (int64_t c = 0; c < w.batch * w.channels; ++c)
    for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
                int64_t pos[3] = {tapPosition(w, 0, o0, k0), tapPosition(w, 1, o1, k1),
                                  tapPosition(w, 2, o2, k2)};
                bool inInput = true, inPadded = true;
                for (int d = 0; d < 3; ++d) {
                  inInput = inInput && pos[d] >= 0 && pos[d] < w.in[d];
                  inPadded = inPadded && pos[d] >= -w.padBegin[d] && pos[d] < w.in[d] + padEnd[d];
                }
                padded += inPadded;
                if (!inInput)
                  continue;
                double v = x[c * inPlane + (pos[0] * w.in[1] + pos[1]) * w.in[2] + pos[2]];
                best = std::max(best, v);
                sum += v;
                ++inside;
              }
          if (kind == PoolKind::Max)
            y.push_back(best);
          else {
            int64_t count = kind == PoolKind::AvgInclude ? padded : inside;
            y.push_back(count ? sum / count : 0.0);
          }
        }
  return y;
}

} // namespace

TEST_CASE("pooling matches the ONNX definition, with ceil mode and pads", "[pool]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 150; ++trial) {
    int spatialRank = static_cast<int>(randomInt(rng, 1, 3));
    bool ceilMode = trial % 2 == 1;
    int64_t padEnd[3];
    WindowParams w = randomWindow(rng, spatialRank, 9, 4, ceilMode, padEnd);
    INFO(describe(w, padEnd) << " ceil " << ceilMode);
    std::vector<float> x = randomFloats(rng, w.batch * w.channels * w.in[0] * w.in[1] * w.in[2]);
    std::vector<float> y(
        static_cast<size_t>(w.batch * w.channels * w.out[0] * w.out[1] * w.out[2]));

    maxPoolF32(w, x.data(), y.data());
    requireClose(y, poolReference(w, padEnd, PoolKind::Max, x), 0.0);

    // The indices point at the maxima, in the output's own plane; column-major ones are the
    // same positions.
    std::vector<int64_t> rowMajor(y.size()), columnMajor(y.size());
    maxPoolIndicesF32(w, x.data(), rowMajor.data(), false);
    maxPoolIndicesF32(w, x.data(), columnMajor.data(), true);
    const int64_t inPlane = w.in[0] * w.in[1] * w.in[2], outPlane = w.out[0] * w.out[1] * w.out[2];
    for (size_t o = 0; o < y.size(); ++o) {
      int64_t i = rowMajor[o], plane = static_cast<int64_t>(o) / outPlane;
      if (i == -1) { // a window entirely in padding
        CHECK(columnMajor[o] == -1);
        CHECK(y[o] == -std::numeric_limits<float>::infinity());
        continue;
      }
      REQUIRE(i / inPlane == plane);
      CHECK(x[static_cast<size_t>(i)] == y[o]);
      int64_t within = i % inPlane;
      int64_t i0 = within / (w.in[1] * w.in[2]), i1 = within / w.in[2] % w.in[1],
              i2 = within % w.in[2];
      CHECK(columnMajor[o] == plane * inPlane + i0 + i1 * w.in[0] + i2 * w.in[0] * w.in[1]);
    }

    avgPoolF32(w, padEnd, false, x.data(), y.data());
    requireClose(y, poolReference(w, padEnd, PoolKind::AvgExclude, x), 1e-5, 1e-6);
    avgPoolF32(w, padEnd, true, x.data(), y.data());
    requireClose(y, poolReference(w, padEnd, PoolKind::AvgInclude, x), 1e-5, 1e-6);
  }
}

// One plane, one spatial dim: `in` elements, windows of `window` elements taken `window` apart.
static WindowParams window1d(int64_t in, int64_t out, int64_t window) {
  WindowParams w{};
  w.batch = w.channels = 1;
  for (int d = 0; d < 3; ++d)
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
  w.in[2] = in;
  w.out[2] = out;
  w.kernel[2] = w.stride[2] = window;
  return w;
}

TEST_CASE("ceil-mode average pooling counts only the padded extent", "[pool]") {
  // in 5, kernel 2, stride 2, no pads, ceil mode: windows [0,2) [2,4) [4,6); the last holds one
  // element and, with no end pad, its overhang is not counted even with count_include_pad.
  WindowParams w = window1d(5, 3, 2);
  const float x[5] = {1, 2, 3, 4, 5};
  float y[3];
  const int64_t noEndPad[3] = {0, 0, 0}, oneEndPad[3] = {0, 0, 1};
  avgPoolF32(w, noEndPad, true, x, y);
  CHECK(y[2] == 5.0f);
  avgPoolF32(w, oneEndPad, true, x, y);
  CHECK(y[2] == 2.5f);
  avgPoolF32(w, oneEndPad, false, x, y);
  CHECK(y[2] == 5.0f);
  CHECK(y[0] == 1.5f);
}

TEST_CASE("max pooling propagates NaN", "[pool]") {
  WindowParams w = window1d(4, 2, 2);
  const float x[4] = {std::numeric_limits<float>::quiet_NaN(), 1, 2, 3};
  float y[2];
  maxPoolF32(w, x, y);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 3.0f);
  // A NaN after the maximum wins too.
  const float later[4] = {5, std::numeric_limits<float>::quiet_NaN(), 2, 3};
  maxPoolF32(w, later, y);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 3.0f);
}

TEST_CASE("planar max pooling matches the definition on every instruction set", "[pool]") {
  // Rows of up to 70: full vectors and partial tails of every width; some NaNs.
  std::mt19937 rng(12);
  for (CpuIsa isa : runnableIsas()) {
    INFO(cpuIsaName(isa));
    for (int trial = 0; trial < 60; ++trial) {
      int64_t padEnd[3];
      WindowParams w = randomWindow(rng, 2, trial % 3 ? 70 : 12, 5, trial % 2 == 1, padEnd);
      INFO(describe(w, padEnd));
      std::vector<float> x = randomFloats(rng, w.batch * w.channels * w.in[1] * w.in[2]);
      for (float &v : x)
        if (trial % 4 == 0 && randomInt(rng, 0, 40) == 0)
          v = std::numeric_limits<float>::quiet_NaN();
      const int64_t planes = w.batch * w.channels, outPlane = w.out[1] * w.out[2];
      std::vector<float> y(static_cast<size_t>(planes * outPlane));
      const int64_t padded = (w.out[2] - 1) * w.stride[2] + (w.kernel[2] - 1) * w.dilation[2] + 1;
      std::vector<float> scratch(size_t(2 * (padded + kMaxPoolRowSlack)));
      std::vector<const float *> sources(size_t(std::max(w.kernel[1], w.kernel[2])));
      maxPoolPlanesOn(isa, {&w, x.data(), y.data(), 0, planes, scratch.data(),
                            scratch.data() + padded + kMaxPoolRowSlack, sources.data()});
      // The reference's max drops NaN: compare the windows that hold none, and check that
      // each window that holds one gives NaN.
      std::vector<double> expected = poolReference(w, padEnd, PoolKind::Max, x);
      std::vector<float> nanFree = x;
      for (float &v : nanFree)
        if (std::isnan(v))
          v = 1e30f;
      std::vector<double> marked = poolReference(w, padEnd, PoolKind::Max, nanFree);
      for (size_t o = 0; o < y.size(); ++o) {
        INFO("output " << o);
        if (marked[o] == 1e30f)
          CHECK(std::isnan(y[o]));
        else
          CHECK(double(y[o]) == expected[o]);
      }
    }
  }
}

TEST_CASE("global average pooling and batch norm", "[pool]") {
  std::mt19937 rng(12);
  const int64_t batch = 3, channels = 5, spatial = 77;
  std::vector<float> x = randomFloats(rng, batch * channels * spatial, -2.0f, 2.0f);

  std::vector<float> pooled(batch * channels);
  globalAvgPoolF32(x.data(), pooled.data(), batch * channels, spatial);
  std::vector<double> want(pooled.size());
  for (int64_t c = 0; c < batch * channels; ++c) {
    double sum = 0;
    for (int64_t i = 0; i < spatial; ++i)
      sum += x[c * spatial + i];
    want[c] = sum / spatial;
  }
  requireClose(pooled, want, 1e-5, 1e-6);

  std::vector<float> scale = randomFloats(rng, channels), bias = randomFloats(rng, channels);
  std::vector<float> mean = randomFloats(rng, channels);
  std::vector<float> var = randomFloats(rng, channels, 0.1f, 3.0f);
  const float eps = 1e-3f;
  std::vector<float> y(x.size());
  batchNormF32(x.data(), scale.data(), bias.data(), mean.data(), var.data(), eps, y.data(), batch,
               channels, spatial);
  std::vector<double> wantY(y.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < spatial; ++i) {
        size_t idx = static_cast<size_t>((n * channels + c) * spatial + i);
        wantY[idx] =
            (x[idx] - double(mean[c])) / std::sqrt(double(var[c]) + eps) * scale[c] + bias[c];
      }
  requireClose(y, wantY, 1e-5, 1e-5);
}

TEST_CASE("roiAlignF32: constant maps, bilinear ramps, refused regions", "[pool]") {
  // One image, two channels of 6 x 8: channel 0 constant 3, channel 1 the ramp 2x + y, which
  // bilinear sampling reproduces exactly inside the map.
  RoiAlignParams p{1, 2, 6, 8, 1, 2, 2, 2, 1.0f, true, false};
  std::vector<float> x(2 * 6 * 8);
  for (int64_t yy = 0; yy < 6; ++yy)
    for (int64_t xx = 0; xx < 8; ++xx) {
      x[yy * 8 + xx] = 3.0f;
      x[48 + yy * 8 + xx] = float(2 * xx + yy);
    }
  // Region x 1.5..5.5, y 1.5..3.5 (with the half-pixel shift: 1..5, 1..3): bins 2 pixels wide
  // and 1 high, two samples each way (bin 0 at x 1.5, 2.5 and y 1.25, 1.75).
  const float rois[4] = {1.5f, 1.5f, 5.5f, 3.5f};
  const int64_t batch[1] = {0};
  std::vector<float> y(2 * 4, -1.0f);
  REQUIRE(roiAlignF32(p, x.data(), rois, batch, y.data()));
  for (int i = 0; i < 4; ++i)
    CHECK(y[i] == Approx(3.0f));
  // Bin (row r, column c): mean x = 2 + 2c, mean y = 1.5 + r.
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      CHECK(y[4 + r * 2 + c] == Approx(2 * (2 + 2 * c) + (1.5 + r)));

  const int64_t badBatch[1] = {1};
  std::vector<float> untouched(8, -1.0f);
  CHECK_FALSE(roiAlignF32(p, x.data(), rois, badBatch, untouched.data()));
  const float infinite[4] = {0.0f, 0.0f, std::numeric_limits<float>::infinity(), 2.0f};
  CHECK_FALSE(roiAlignF32(p, x.data(), infinite, batch, untouched.data()));
  CHECK(untouched == std::vector<float>(8, -1.0f));
  // Adaptive sampling of a huge region would take billions of samples per bin: refused.
  p.samplingRatio = 0;
  const float huge[4] = {0.0f, 0.0f, 1e12f, 1e12f};
  CHECK_FALSE(roiAlignF32(p, x.data(), huge, batch, untouched.data()));
}
