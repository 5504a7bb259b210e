// Tests for the convolution and pooling gradient kernels: against direct references computed
// in double (naive loops over every window), central differences of the forward kernels, and
// the forward kernels' own tie and padding rules.
#include "dlc_kernels.h"
#include "grad_test_util.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

using namespace dlc::rt;
using namespace grad_test;

//===----------------------------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------------------------===//

namespace {

// Workspaces with sentinels after them, which must survive the kernel.
struct Workspace {
  explicit Workspace(size_t bytes) : floats(bytes / sizeof(float)), data(floats + 16, 12345.0f) {
    REQUIRE(bytes % sizeof(float) == 0);
  }
  void requireIntact() const {
    for (size_t i = floats; i < data.size(); ++i)
      REQUIRE(data[i] == 12345.0f);
  }
  size_t floats;
  std::vector<float> data;
};

void requireWithinLimit(const ConvParams &p, size_t bytes) {
  const WindowParams &w = p.window;
  // A limit is kept unless one output row alone needs more.
  const size_t rowBytes = sizeof(float) * size_t(w.channels / p.groups) *
                          size_t(w.kernel[0] * w.kernel[1] * w.kernel[2] * w.out[2]);
  if (p.workspaceLimit > 0)
    REQUIRE(bytes <= std::max<size_t>(size_t(p.workspaceLimit), rowBytes));
}

// dx and dw of convF32 by definition, in double, with the magnitudes of their terms.
struct ConvGrads {
  std::vector<double> dx, dxScale, dw, dwScale;
};

ConvGrads convGradReference(const ConvParams &p, const std::vector<float> &x,
                            const std::vector<float> &weight, const std::vector<float> &dy) {
  const WindowParams &w = p.window;
  const int64_t cg = w.channels / p.groups, mg = p.outChannels / p.groups;
  ConvGrads r;
  r.dx.assign(x.size(), 0.0);
  r.dxScale.assign(x.size(), 0.0);
  r.dw.assign(weight.size(), 0.0);
  r.dwScale.assign(weight.size(), 0.0);
  for (int64_t n = 0; n < w.batch; ++n)
    for (int64_t m = 0; m < p.outChannels; ++m)
      for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
            double g =
                dy[(((n * p.outChannels + m) * w.out[0] + o0) * w.out[1] + o1) * w.out[2] + o2];
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
                for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
                  for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
                    int64_t i0 = tapPosition(w, 0, o0, k0), i1 = tapPosition(w, 1, o1, k1),
                            i2 = tapPosition(w, 2, o2, k2);
                    if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 ||
                        i2 >= w.in[2])
                      continue;
                    size_t xi = size_t(
                        (((n * w.channels + m / mg * cg + c) * w.in[0] + i0) * w.in[1] + i1) *
                            w.in[2] +
                        i2);
                    size_t wi = size_t(
                        (((m * cg + c) * w.kernel[0] + k0) * w.kernel[1] + k1) * w.kernel[2] + k2);
                    r.dx[xi] += g * weight[wi];
                    r.dxScale[xi] += std::fabs(g * weight[wi]);
                    r.dw[wi] += g * x[xi];
                    r.dwScale[wi] += std::fabs(g * x[xi]);
                  }
          }
  return r;
}

void checkConvBackward(std::mt19937 &rng, const ConvParams &p) {
  const WindowParams &w = p.window;
  const int64_t padEnd[3] = {0, 0, 0};
  INFO(describe(w, padEnd) << " M" << p.outChannels << " groups " << p.groups << " workspace limit "
                           << p.workspaceLimit);
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2], outPlane = w.out[0] * w.out[1] * w.out[2];
  const int64_t taps = w.kernel[0] * w.kernel[1] * w.kernel[2];
  std::vector<float> x = randomFloats(rng, w.batch * w.channels * inPlane);
  std::vector<float> weight = randomFloats(rng, p.outChannels * w.channels / p.groups * taps);
  std::vector<float> dy = randomFloats(rng, w.batch * p.outChannels * outPlane);
  // NaN fill: every element must be written, including those no window reads.
  std::vector<float> dx(x.size(), kNaN), dw(weight.size(), kNaN);

  const size_t dataBytes = convBackwardDataWorkspaceBytes(p);
  const size_t filterBytes = convBackwardFilterWorkspaceBytes(p);
  requireWithinLimit(p, dataBytes);
  requireWithinLimit(p, filterBytes);
  Workspace dataWs(dataBytes), filterWs(filterBytes);
  convBackwardDataF32(p, dy.data(), weight.data(), dx.data(), dataWs.data.data());
  convBackwardFilterF32(p, x.data(), dy.data(), dw.data(), filterWs.data.data());
  dataWs.requireIntact();
  filterWs.requireIntact();

  ConvGrads want = convGradReference(p, x, weight, dy);
  requireClose(dx, want.dx, 1e-4, 1e-6, &want.dxScale);
  requireClose(dw, want.dw, 1e-4, 1e-6, &want.dwScale);
}

} // namespace

TEST_CASE("conv backward matches direct gradients (random windows)", "[grad][conv]") {
  std::mt19937 rng(104);
  for (int trial = 0; trial < 60; ++trial) {
    int spatialRank = static_cast<int>(randomInt(rng, 1, 3));
    int64_t padEnd[3];
    ConvParams p{};
    p.window = randomWindow(rng, spatialRank, spatialRank == 3 ? 6 : 11, 3, false, padEnd);
    p.groups = randomInt(rng, 0, 2) ? 1 : randomInt(rng, 2, 3);
    if (p.window.channels % p.groups != 0)
      p.window.channels = p.groups * randomInt(rng, 1, 3);
    p.outChannels = p.groups * randomInt(rng, 1, 4);
    // Tiny workspace limits force im2col and col2im in chunks of one or a few output rows.
    p.workspaceLimit = trial % 2 ? randomInt(rng, 1, 2048) : 0;
    checkConvBackward(rng, p);
  }
}

TEST_CASE("conv backward: groups, stride 2, dilation 2, asymmetric pads", "[grad][conv]") {
  std::mt19937 rng(105);
  SECTION("1-D") { checkConvBackward(rng, convParams(2, 4, 6, 2, {13}, 3, 2, 2, 2, 1)); }
  SECTION("2-D") { checkConvBackward(rng, convParams(2, 4, 6, 2, {9, 8}, 3, 2, 2, 2, 1)); }
  SECTION("3-D") { checkConvBackward(rng, convParams(1, 4, 2, 2, {6, 7, 5}, 2, 2, 2, 1, 0)); }
  SECTION("one output row per chunk") {
    ConvParams p = convParams(2, 4, 6, 2, {9, 8}, 3, 2, 2, 2, 1);
    p.workspaceLimit = 1;
    const size_t rowBytes = sizeof(float) * 2 * 9 * p.window.out[2];
    CHECK(convBackwardDataWorkspaceBytes(p) == rowBytes);
    CHECK(convBackwardFilterWorkspaceBytes(p) == rowBytes);
    checkConvBackward(rng, p);
  }
  SECTION("pointwise convolution needs no workspace") {
    ConvParams p = convParams(2, 6, 4, 2, {5, 3}, 1, 1, 1, 0, 0);
    CHECK(convBackwardDataWorkspaceBytes(p) == 0);
    CHECK(convBackwardFilterWorkspaceBytes(p) == 0);
    checkConvBackward(rng, p);
  }
  SECTION("stride larger than the window leaves inputs unread") {
    checkConvBackward(rng, convParams(1, 2, 3, 1, {10, 10}, 2, 3, 1, 0, 0));
  }
  SECTION("windows that tile the input (ConvTranspose 2x2 stride 2) store each element once") {
    // The input's NaN fill must be overwritten everywhere without the zero fill; in chunks of
    // rows too; an odd size leaves a row unread, which takes the zero fill again.
    checkConvBackward(rng, convParams(2, 3, 5, 1, {8, 6}, 2, 2, 1, 0, 0));
    ConvParams chunked = convParams(1, 4, 6, 1, {12, 10}, 2, 2, 1, 0, 0);
    chunked.workspaceLimit = 1024;
    checkConvBackward(rng, chunked);
    checkConvBackward(rng, convParams(1, 2, 4, 1, {4, 6, 2}, 2, 2, 1, 0, 0));
    checkConvBackward(rng, convParams(1, 3, 4, 1, {7, 6}, 2, 2, 1, 0, 0));
    // Three entries side by side per output column, and groups.
    checkConvBackward(rng, convParams(1, 2, 3, 1, {9, 6}, 3, 3, 1, 0, 0));
    checkConvBackward(rng, convParams(2, 4, 6, 2, {8, 6}, 2, 2, 1, 0, 0));
    // Threads take the chunks of rows, each in its own slot of the workspace.
    ThreadPool *pool = createThreadPool(2);
    {
      ThreadScope scope(pool);
      ConvParams threaded = convParams(2, 8, 6, 2, {32, 24}, 2, 2, 1, 0, 0);
      threaded.workspaceLimit = 4096;
      checkConvBackward(rng, threaded);
      checkConvBackward(rng, convParams(1, 16, 16, 1, {64, 64}, 2, 2, 1, 0, 0));
    }
    destroyThreadPool(pool);
  }
}

TEST_CASE("conv backward is the gradient of convF32", "[grad][conv]") {
  std::mt19937 rng(106);
  ConvParams p = convParams(2, 4, 4, 2, {5, 6}, 3, 2, 1, 1, 1);
  p.workspaceLimit = 64;
  const WindowParams &w = p.window;
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2], outPlane = w.out[0] * w.out[1] * w.out[2];
  std::vector<float> x = randomFloats(rng, w.batch * w.channels * inPlane);
  std::vector<float> weight = randomFloats(rng, p.outChannels * 2 * 9);
  std::vector<float> dy = randomFloats(rng, w.batch * p.outChannels * outPlane);
  std::vector<float> workspace(convWorkspaceBytes(p) / sizeof(float));
  auto conv = [&](const std::vector<float> &xv, const std::vector<float> &wv) {
    std::vector<float> y(dy.size());
    convF32(p, xv.data(), wv.data(), nullptr, nullptr, y.data(), workspace.data());
    return y;
  };
  std::vector<float> dx(x.size()), dw(weight.size());
  std::vector<float> dataWs(convBackwardDataWorkspaceBytes(p) / sizeof(float));
  std::vector<float> filterWs(convBackwardFilterWorkspaceBytes(p) / sizeof(float));
  convBackwardDataF32(p, dy.data(), weight.data(), dx.data(), dataWs.data());
  convBackwardFilterF32(p, x.data(), dy.data(), dw.data(), filterWs.data());
  // The convolution is linear in each argument, so differences are exact up to rounding.
  auto convOfX = [&](const std::vector<float> &v) { return conv(v, weight); };
  auto convOfW = [&](const std::vector<float> &v) { return conv(x, v); };
  requireClose(dx, numericGrad(x, dy, convOfX, 0.25f), 1e-3, 1e-4);
  requireClose(dw, numericGrad(weight, dy, convOfW, 0.25f), 1e-3, 1e-4);
}

//===----------------------------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------------------------===//

namespace {

// One plane, one spatial dim: `in` elements, windows of `window` elements taken `stride` apart.
WindowParams window1d(int64_t in, int64_t out, int64_t window, int64_t stride) {
  WindowParams w{};
  w.batch = w.channels = 1;
  for (int d = 0; d < 3; ++d)
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
  w.in[2] = in;
  w.out[2] = out;
  w.kernel[2] = window;
  w.stride[2] = stride;
  return w;
}

int64_t planeSize(const int64_t *dims) { return dims[0] * dims[1] * dims[2]; }

// Max pooling's gradient by definition: each dy goes to the first in-input tap holding the
// window's maximum (inputs here hold no NaN).
std::vector<double> maxPoolGradReference(const WindowParams &w, const std::vector<float> &x,
                                         const std::vector<float> &dy) {
  std::vector<double> dx(x.size(), 0.0);
  const int64_t inPlane = planeSize(w.in);
  int64_t o = 0;
  for (int64_t c = 0; c < w.batch * w.channels; ++c)
    for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < w.out[2]; ++o2, ++o) {
          int64_t best = -1;
          for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
                int64_t i0 = tapPosition(w, 0, o0, k0), i1 = tapPosition(w, 1, o1, k1),
                        i2 = tapPosition(w, 2, o2, k2);
                if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 || i2 >= w.in[2])
                  continue;
                int64_t i = c * inPlane + (i0 * w.in[1] + i1) * w.in[2] + i2;
                if (best < 0 || x[i] > x[best])
                  best = i;
              }
          if (best >= 0)
            dx[best] += dy[o];
        }
  return dx;
}

} // namespace

TEST_CASE("max pool gradient routes to the first maximum", "[grad][pool]") {
  std::mt19937 rng(107);
  for (int trial = 0; trial < 100; ++trial) {
    int spatialRank = static_cast<int>(randomInt(rng, 1, 3));
    bool ceilMode = trial % 2 == 1;
    int64_t padEnd[3];
    WindowParams w = randomWindow(rng, spatialRank, 8, 3, ceilMode, padEnd);
    INFO(describe(w, padEnd) << " ceil " << ceilMode);
    const int64_t inCount = w.batch * w.channels * planeSize(w.in);
    const int64_t outCount = w.batch * w.channels * planeSize(w.out);
    // A few distinct values make ties common.
    std::vector<float> x(inCount);
    for (float &v : x)
      v = static_cast<float>(randomInt(rng, 0, 3));
    std::vector<float> dy = randomFloats(rng, outCount), dx(x.size(), kNaN);
    maxPoolGradF32(w, x.data(), dy.data(), dx.data());
    requireClose(dx, maxPoolGradReference(w, x, dy), 1e-6, 1e-6);
  }
}

TEST_CASE("max pool gradient is the gradient of maxPoolF32", "[grad][pool]") {
  std::mt19937 rng(108);
  for (int trial = 0; trial < 20; ++trial) {
    int64_t padEnd[3];
    WindowParams w =
        randomWindow(rng, static_cast<int>(randomInt(rng, 1, 3)), 6, 3, trial % 2 == 1, padEnd);
    INFO(describe(w, padEnd));
    // Distinct values 0.1 apart: a perturbation of 0.01 never changes a window's maximum.
    std::vector<float> x(static_cast<size_t>(w.batch * w.channels * planeSize(w.in)));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = 0.1f * static_cast<float>(i);
    std::shuffle(x.begin(), x.end(), rng);
    std::vector<float> dy = randomFloats(rng, w.batch * w.channels * planeSize(w.out));
    auto maxPool = [&](const std::vector<float> &v) {
      std::vector<float> y(dy.size());
      maxPoolF32(w, v.data(), y.data());
      return y;
    };
    // A window entirely in padding outputs a constant -inf.
    std::vector<float> y = maxPool(x);
    for (size_t o = 0; o < y.size(); ++o)
      if (std::isinf(y[o]))
        dy[o] = 0.0f;
    std::vector<float> dx(x.size());
    maxPoolGradF32(w, x.data(), dy.data(), dx.data());
    requireClose(dx, numericGrad(x, dy, maxPool, 1e-2f), 1e-3, 1e-4);
  }
}

TEST_CASE("max pool gradient with NaN, ties and all -inf windows", "[grad][pool]") {
  // Windows [0,2) [2,4) [4,6): NaN wins its window, a tie goes to the first, an all -inf
  // window sends its gradient to its first element (as PyTorch does).
  WindowParams w = window1d(6, 3, 2, 2);
  const float x[6] = {1, kNaN, 5, 5, -kInf, -kInf};
  const float dy[3] = {10, 20, 30};
  float dx[6];
  maxPoolGradF32(w, x, dy, dx);
  CHECK(std::vector<float>(dx, dx + 6) == std::vector<float>{0, 10, 20, 0, 30, 0});
  // Overlapping windows both choosing one element add up.
  WindowParams overlap = window1d(3, 2, 2, 1);
  const float y[3] = {0, 9, 1};
  maxPoolGradF32(overlap, y, dy, dx);
  CHECK(std::vector<float>(dx, dx + 3) == std::vector<float>{0, 30, 0});
}

TEST_CASE("average pool gradient is the adjoint of avgPoolF32", "[grad][pool]") {
  std::mt19937 rng(109);
  for (int trial = 0; trial < 80; ++trial) {
    int spatialRank = static_cast<int>(randomInt(rng, 1, 3));
    bool ceilMode = trial % 2 == 1, includePad = trial % 4 >= 2;
    int64_t padEnd[3];
    WindowParams w = randomWindow(rng, spatialRank, 7, 3, ceilMode, padEnd);
    INFO(describe(w, padEnd) << " ceil " << ceilMode << " include pad " << includePad);
    std::vector<float> x = randomFloats(rng, w.batch * w.channels * planeSize(w.in));
    std::vector<float> dy = randomFloats(rng, w.batch * w.channels * planeSize(w.out));
    auto avgPool = [&](const std::vector<float> &v) {
      std::vector<float> y(dy.size());
      avgPoolF32(w, padEnd, includePad, v.data(), y.data());
      return y;
    };
    std::vector<float> dx(x.size(), kNaN);
    avgPoolGradF32(w, padEnd, includePad, dy.data(), dx.data());
    // Average pooling is linear, so differences of any step recover it exactly.
    requireClose(dx, numericGrad(x, dy, avgPool, 0.5f), 1e-4, 1e-5);
  }
}

TEST_CASE("average pool gradient divides by the forward's counts", "[grad][pool]") {
  // in 5, kernel 2, stride 2, ceil mode, one end pad: windows [0,2) [2,4) [4,6).
  WindowParams w = window1d(5, 3, 2, 2);
  const int64_t oneEndPad[3] = {0, 0, 1};
  const float dy[3] = {2, 4, 6};
  float dx[5];
  avgPoolGradF32(w, oneEndPad, true, dy, dx);
  CHECK(std::vector<float>(dx, dx + 5) == std::vector<float>{1, 1, 2, 2, 3});
  avgPoolGradF32(w, oneEndPad, false, dy, dx);
  CHECK(std::vector<float>(dx, dx + 5) == std::vector<float>{1, 1, 2, 2, 6});

  const float gdy[2] = {8, -4};
  float gdx[8];
  globalAvgPoolGradF32(gdy, gdx, 2, 4);
  CHECK(std::vector<float>(gdx, gdx + 8) == std::vector<float>{2, 2, 2, 2, -1, -1, -1, -1});
}
