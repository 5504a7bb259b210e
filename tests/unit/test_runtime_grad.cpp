// Tests for the CPU runtime's training kernels (convolution and pooling gradients are in
// test_runtime_grad_window.cpp): every gradient against central differences of its forward
// kernel and against a direct reference computed in double, the optimizer steps
// against a scalar restatement of torch.optim's update rules (and values PyTorch printed), and
// the statistics of the dropout mask.
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
// Elementwise
//===----------------------------------------------------------------------------------------===//

namespace {

struct UnaryGradCase {
  const char *name;
  UnaryKind kind;
  // What the reference derivative reads; the kind's record must say the same (GradFrom).
  bool savesOutput;
  // Inputs are drawn from [lo, hi], with random sign when isSigned, away from kinks and poles.
  float lo, hi;
  bool isSigned;
  double (*derivative)(double x);
};

double sigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const UnaryGradCase kUnaryGradCases[] = {
    {"relu", UnaryKind::Relu, true, 0.05f, 2.0f, true,
     [](double x) { return x > 0 ? 1.0 : 0.0; }},
    {"sigmoid", UnaryKind::Sigmoid, true, -3.0f, 3.0f, false,
     [](double x) { return sigmoidD(x) * (1 - sigmoidD(x)); }},
    {"tanh", UnaryKind::Tanh, true, -3.0f, 3.0f, false,
     [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
    {"exp", UnaryKind::Exp, true, -2.0f, 2.0f, false,
     [](double x) { return std::exp(x); }},
    {"sqrt", UnaryKind::Sqrt, true, 0.5f, 3.0f, false,
     [](double x) { return 0.5 / std::sqrt(x); }},
    {"reciprocal", UnaryKind::Reciprocal, true, 0.5f, 3.0f, true,
     [](double x) { return -1 / (x * x); }},
    {"log", UnaryKind::Log, false, 0.5f, 3.0f, false,
     [](double x) { return 1 / x; }},
    {"abs", UnaryKind::Abs, false, 0.05f, 2.0f, true,
     [](double x) { return x > 0 ? 1.0 : -1.0; }},
    {"erf", UnaryKind::Erf, false, -2.5f, 2.5f, false,
     [](double x) { return 2 / std::sqrt(std::acos(-1.0)) * std::exp(-x * x); }},
    {"softplus", UnaryKind::Softplus, false, -4.0f, 4.0f, false, sigmoidD},
    {"sin", UnaryKind::Sin, false, -3.0f, 3.0f, false,
     [](double x) { return std::cos(x); }},
    {"cos", UnaryKind::Cos, false, -3.0f, 3.0f, false,
     [](double x) { return -std::sin(x); }},
    {"tan", UnaryKind::Tan, true, -1.2f, 1.2f, false,
     [](double x) { return 1 + std::tan(x) * std::tan(x); }},
    {"asin", UnaryKind::Asin, false, -0.9f, 0.9f, false,
     [](double x) { return 1 / std::sqrt(1 - x * x); }},
    {"acos", UnaryKind::Acos, false, -0.9f, 0.9f, false,
     [](double x) { return -1 / std::sqrt(1 - x * x); }},
    {"atan", UnaryKind::Atan, false, -3.0f, 3.0f, false,
     [](double x) { return 1 / (1 + x * x); }},
    {"sinh", UnaryKind::Sinh, false, -2.0f, 2.0f, false,
     [](double x) { return std::cosh(x); }},
    {"cosh", UnaryKind::Cosh, false, -2.0f, 2.0f, false,
     [](double x) { return std::sinh(x); }},
    {"asinh", UnaryKind::Asinh, false, -3.0f, 3.0f, false,
     [](double x) { return 1 / std::sqrt(x * x + 1); }},
    {"acosh", UnaryKind::Acosh, false, 1.2f, 4.0f, false,
     [](double x) { return 1 / std::sqrt(x * x - 1); }},
    {"atanh", UnaryKind::Atanh, false, -0.9f, 0.9f, false,
     [](double x) { return 1 / (1 - x * x); }},
    {"softsign", UnaryKind::Softsign, false, 0.05f, 3.0f, true,
     [](double x) { return 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x))); }},
    {"hard_swish", UnaryKind::HardSwish, false, 0.05f, 2.9f, true,
     [](double x) { return (2 * x + 3) / 6; }},
    {"mish", UnaryKind::Mish, false, 0.05f, 4.0f, true,
     [](double x) {
       double t = std::tanh(std::log1p(std::exp(x)));
       return t + x * sigmoidD(x) * (1 - t * t);
     }},
};

} // namespace

TEST_CASE("unary gradients match derivatives and central differences", "[grad]") {
  std::mt19937 rng(101);
  const int64_t n = 37; // not a multiple of the kernels' 8 lanes
  for (const UnaryGradCase &c : kUnaryGradCases) {
    INFO(c.name);
    std::vector<float> x = randomFloats(rng, n, c.lo, c.hi);
    if (c.isSigned)
      for (float &v : x)
        v = randomInt(rng, 0, 1) ? v : -v;
    std::vector<float> dy = randomFloats(rng, n, -2.0f, 2.0f), y(n), dx(n);
    CHECK((scalar::unaryGradFrom(c.kind) == GradFrom::Output) == c.savesOutput);
    unary(c.kind, x.data(), y.data(), n);
    unaryGradF32(c.kind, dy.data(), c.savesOutput ? y.data() : x.data(), dx.data(), n);

    // Saved outputs carry float rounding, which f' can amplify near saturation by a bounded
    // factor; tolerances are relative to |dy|.
    std::vector<double> want(n), scale(n);
    for (int64_t i = 0; i < n; ++i) {
      want[i] = dy[i] * c.derivative(x[i]);
      scale[i] = std::fabs(dy[i]);
    }
    requireClose(dx, want, 2e-5, 1e-6, &scale);

    Forward f = [&](const std::vector<float> &v) {
      std::vector<float> out(v.size());
      unary(c.kind, v.data(), out.data(), n);
      return out;
    };
    requireClose(dx, numericGrad(x, dy, f, 1e-2f), 1e-2, 1e-3);
  }
}

TEST_CASE("unary gradients at kinks follow PyTorch", "[grad]") {
  const float dy[4] = {3, 3, 3, 3};
  float dx[4];
  // Relu's saved output: 0 (from x <= 0) gets no gradient, NaN passes it on.
  const float reluY[4] = {0.0f, 2.0f, kNaN, 0.5f};
  unaryGradF32(UnaryKind::Relu, dy, reluY, dx, 4);
  CHECK(std::vector<float>(dx, dx + 4) == std::vector<float>{0, 3, 3, 3});
  const float absX[4] = {0.0f, -2.0f, 2.0f, -0.0f};
  unaryGradF32(UnaryKind::Abs, dy, absX, dx, 4);
  CHECK(std::vector<float>(dx, dx + 4) == std::vector<float>{0, -3, 3, 0});
  // Softplus far out saturates to 0 and 1 without overflow.
  const float softplusX[4] = {-200.0f, 200.0f, 0.0f, 100.0f};
  unaryGradF32(UnaryKind::Softplus, dy, softplusX, dx, 4);
  CHECK(std::vector<float>(dx, dx + 4) == std::vector<float>{0, 3, 1.5f, 3});
}

TEST_CASE("clip and leaky relu gradients", "[grad]") {
  // torch.clamp passes the gradient at the bounds, and none for NaN.
  const float x[7] = {-2.0f, -1.0f, -0.5f, 0.0f, 1.0f, 1.5f, kNaN};
  const float dy[7] = {1, 2, 3, 4, 5, 6, 7};
  float dx[7];
  clipGradF32(dy, x, dx, 7, -1.0f, 1.0f);
  CHECK(std::vector<float>(dx, dx + 7) == std::vector<float>{0, 2, 3, 4, 5, 0, 0});
  leakyReluGradF32(dy, x, dx, 7, 0.25f);
  CHECK(std::vector<float>(dx, dx + 6) == std::vector<float>{0.25f, 0.5f, 0.75f, 1, 5, 6});

  std::mt19937 rng(102);
  const int64_t n = 29;
  std::vector<float> xs = randomFloats(rng, n, -2.0f, 2.0f), dys = randomFloats(rng, n);
  // Keep central differences away from the kinks at -1, 0 and 1.
  for (float &v : xs)
    v = std::round(v * 4.0f) / 4.0f + 0.125f;
  auto clip = [&](const std::vector<float> &v) {
    std::vector<float> out(v.size());
    clipF32(v.data(), out.data(), n, -1.0f, 1.0f);
    return out;
  };
  auto leakyRelu = [&](const std::vector<float> &v) {
    std::vector<float> out(v.size());
    leakyReluF32(v.data(), out.data(), n, 0.1f);
    return out;
  };
  std::vector<float> got(n);
  clipGradF32(dys.data(), xs.data(), got.data(), n, -1.0f, 1.0f);
  requireClose(got, numericGrad(xs, dys, clip, 1e-2f), 1e-3, 1e-4);
  leakyReluGradF32(dys.data(), xs.data(), got.data(), n, 0.1f);
  requireClose(got, numericGrad(xs, dys, leakyRelu, 1e-2f), 1e-3, 1e-4);
}

TEST_CASE("broadcast matches index arithmetic", "[grad]") {
  std::mt19937 rng(103);
  for (int trial = 0; trial < 100; ++trial) {
    Shape out(static_cast<size_t>(randomInt(rng, 0, 4)));
    for (int64_t &d : out)
      d = randomInt(rng, 1, 5);
    // x has the trailing xRank dims of out, each kept or 1.
    const size_t xRank = static_cast<size_t>(randomInt(rng, 0, int64_t(out.size())));
    Shape xShape(out.end() - xRank, out.end());
    for (int64_t &d : xShape)
      if (randomInt(rng, 0, 1))
        d = 1;
    Shape strides(out.size(), 0);
    int64_t stride = 1;
    for (size_t k = 0; k < xRank; ++k) {
      size_t d = xShape.size() - 1 - k;
      if (xShape[d] != 1)
        strides[out.size() - 1 - k] = stride;
      stride *= xShape[d];
    }
    INFO("out " << describe(out) << " x " << describe(xShape));
    std::vector<float> x = randomFloats(rng, numElements(xShape));
    std::vector<float> y(static_cast<size_t>(numElements(out)), kNaN);
    broadcastF32(x.data(), strides.data(), y.data(), out.data(), static_cast<int>(out.size()));
    std::vector<float> want(y.size());
    for (int64_t i = 0; i < numElements(out); ++i) {
      Shape idx = unravel(i, out);
      int64_t src = 0;
      for (size_t d = 0; d < out.size(); ++d)
        src += idx[d] * strides[d];
      want[i] = x[src];
    }
    requireEqual(y, want);
  }
}

//===----------------------------------------------------------------------------------------===//
// Softmax and NLL loss
//===----------------------------------------------------------------------------------------===//

TEST_CASE("softmax gradient matches derivatives and central differences", "[grad][softmax]") {
  std::mt19937 rng(110);
  // The last shape spans two column blocks of the kernel.
  const int64_t shapes[][3] = {{1, 7, 1}, {2, 5, 3}, {2, 4, 70}};
  for (const auto &s : shapes) {
    for (bool log : {false, true}) {
      const int64_t outer = s[0], n = s[1], inner = s[2], count = outer * n * inner;
      INFO("outer " << outer << " n " << n << " inner " << inner << " log " << log);
      std::vector<float> x = randomFloats(rng, count, -2.0f, 2.0f), dy = randomFloats(rng, count);
      auto forward = [&](const std::vector<float> &v) {
        std::vector<float> y(v.size());
        softmax(v.data(), y.data(), outer, n, inner, log);
        return y;
      };
      std::vector<float> y = forward(x), dx(count, kNaN);
      softmaxGradF32(dy.data(), y.data(), dx.data(), outer, n, inner, log);

      // dx_j = sum_k dy_k dy_k/dx_j with the Jacobian of softmax p: p_k (delta_jk - p_j), or of
      // log-softmax: delta_jk - p_j; p from x in double.
      std::vector<double> want(count), scale(count);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t l = 0; l < inner; ++l) {
          auto at = [&](int64_t j) { return (o * n + j) * inner + l; };
          double maxv = -INFINITY, sum = 0, dySum = 0, dyP = 0, dyAbs = 0;
          for (int64_t j = 0; j < n; ++j)
            maxv = std::max(maxv, double(x[at(j)]));
          for (int64_t j = 0; j < n; ++j)
            sum += std::exp(x[at(j)] - maxv);
          std::vector<double> p(n);
          for (int64_t j = 0; j < n; ++j) {
            p[j] = std::exp(x[at(j)] - maxv) / sum;
            dySum += dy[at(j)];
            dyP += dy[at(j)] * p[j];
            dyAbs += std::fabs(dy[at(j)]);
          }
          for (int64_t j = 0; j < n; ++j) {
            want[at(j)] = log ? dy[at(j)] - p[j] * dySum : p[j] * (dy[at(j)] - dyP);
            scale[at(j)] = dyAbs;
          }
        }
      requireClose(dx, want, 1e-5, 1e-6, &scale);
      requireClose(dx, numericGrad(x, dy, forward, 1e-2f), 1e-2, 1e-3);
    }
  }
}

TEST_CASE("NLL loss and its gradient", "[grad][nll]") {
  std::mt19937 rng(111);
  const int64_t outer = 3, classes = 5, inner = 4, count = outer * classes * inner;
  std::vector<float> logp = randomFloats(rng, count, -4.0f, 0.0f);
  std::vector<int64_t> labels(outer * inner);
  for (int64_t &l : labels)
    l = randomInt(rng, 0, classes - 1);

  float loss = kNaN;
  REQUIRE(nllLossF32(logp.data(), labels.data(), &loss, outer, classes, inner));
  double want = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      want -= logp[(o * classes + labels[o * inner + i]) * inner + i];
  want /= outer * inner;
  CHECK(loss == Approx(want).epsilon(1e-6));

  const float dloss = 1.5f;
  std::vector<float> dlogp(count, kNaN);
  REQUIRE(nllLossGradF32(&dloss, labels.data(), dlogp.data(), outer, classes, inner));
  auto nll = [&](const std::vector<float> &v) {
    float l = 0;
    REQUIRE(nllLossF32(v.data(), labels.data(), &l, outer, classes, inner));
    return std::vector<float>{l};
  };
  requireClose(dlogp, numericGrad(logp, {dloss}, nll, 0.25f), 1e-4, 1e-6);
  std::vector<float> expected(count, 0.0f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      expected[(o * classes + labels[o * inner + i]) * inner + i] = -dloss / (outer * inner);
  requireEqual(dlogp, expected);
}

TEST_CASE("NLL loss refuses labels outside 0..classes-1 and writes nothing", "[grad][nll]") {
  const float logp[6] = {-1, -2, -3, -4, -5, -6}; // [2, 3], inner 1
  for (int64_t bad : {int64_t(-1), int64_t(3), INT64_MAX, INT64_MIN}) {
    const int64_t labels[2] = {1, bad};
    float loss = 42.0f;
    CHECK_FALSE(nllLossF32(logp, labels, &loss, 2, 3, 1));
    CHECK(loss == 42.0f);
    const float dloss = 1.0f;
    float dlogp[6] = {7, 7, 7, 7, 7, 7};
    CHECK_FALSE(nllLossGradF32(&dloss, labels, dlogp, 2, 3, 1));
    CHECK(std::vector<float>(dlogp, dlogp + 6) == std::vector<float>(6, 7));
  }
  const int64_t good[2] = {0, 2};
  float loss = 0;
  REQUIRE(nllLossF32(logp, good, &loss, 2, 3, 1));
  CHECK(loss == 3.5f);
}

//===----------------------------------------------------------------------------------------===//
// Batch norm in training mode
//===----------------------------------------------------------------------------------------===//

namespace {

struct BatchNormCase {
  int64_t batch, channels, spatial;
  float offset; // added to x: a large mean breaks one-pass variance formulas
};

} // namespace

TEST_CASE("batch norm training: statistics, apply, gradients", "[grad][batchnorm]") {
  std::mt19937 rng(112);
  const float eps = 1e-3f;
  for (BatchNormCase c : {BatchNormCase{3, 2, 5, 0.0f}, BatchNormCase{2, 3, 77, 100.0f},
                          BatchNormCase{4, 1, 1, -3.0f}}) {
    const int64_t batch = c.batch, channels = c.channels, spatial = c.spatial;
    const int64_t count = batch * channels * spatial, perChannel = batch * spatial;
    INFO("batch " << batch << " channels " << channels << " spatial " << spatial);
    std::vector<float> x = randomFloats(rng, count, -2.0f, 2.0f);
    for (float &v : x)
      v += c.offset;
    std::vector<float> scale = randomFloats(rng, channels, 0.5f, 2.0f);
    std::vector<float> bias = randomFloats(rng, channels), dy = randomFloats(rng, count);
    auto at = [&](int64_t n, int64_t ch, int64_t i) { return (n * channels + ch) * spatial + i; };

    std::vector<float> stats(3 * channels);
    batchNormStatsF32(x.data(), eps, stats.data(), batch, channels, spatial);
    std::vector<double> mean(channels), var(channels), wantStats(3 * channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < spatial; ++i)
          mean[ch] += x[at(n, ch, i)];
      mean[ch] /= perChannel;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < spatial; ++i)
          var[ch] += (x[at(n, ch, i)] - mean[ch]) * (x[at(n, ch, i)] - mean[ch]);
      var[ch] /= perChannel;
      wantStats[ch] = mean[ch];
      wantStats[channels + ch] = 1 / std::sqrt(var[ch] + eps);
      wantStats[2 * channels + ch] = var[ch];
    }
    // The mean is relative to the spread of x, not to its own (possibly tiny) size.
    std::vector<double> statScale(3 * channels, 0.0);
    for (int64_t ch = 0; ch < channels; ++ch)
      statScale[ch] = 1.0;
    requireClose(stats, wantStats, 1e-5, 1e-6, &statScale);

    auto apply = [&](const std::vector<float> &xv, const std::vector<float> &sv,
                     const std::vector<float> &bv) {
      std::vector<float> s(3 * channels), y(xv.size());
      batchNormStatsF32(xv.data(), eps, s.data(), batch, channels, spatial);
      batchNormApplyF32(xv.data(), s.data(), sv.data(), bv.data(), y.data(), batch, channels,
                        spatial);
      return y;
    };
    std::vector<float> y = apply(x, scale, bias);
    std::vector<double> wantY(count), xhat(count);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t i = 0; i < spatial; ++i) {
          int64_t k = at(n, ch, i);
          xhat[k] = (x[k] - mean[ch]) * wantStats[channels + ch];
          wantY[k] = xhat[k] * scale[ch] + bias[ch];
        }
    requireClose(y, wantY, 1e-4, 1e-4);

    // dx = scale * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)); dscale = sum(dy * xhat),
    // dbias = sum(dy).
    std::vector<double> wantDx(count), wantParams(2 * channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      double dySum = 0, dyXhat = 0;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < spatial; ++i) {
          dySum += dy[at(n, ch, i)];
          dyXhat += dy[at(n, ch, i)] * xhat[at(n, ch, i)];
        }
      wantParams[ch] = dyXhat;
      wantParams[channels + ch] = dySum;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < spatial; ++i) {
          int64_t k = at(n, ch, i);
          wantDx[k] = scale[ch] * wantStats[channels + ch] *
                      (dy[k] - dySum / perChannel - xhat[k] * dyXhat / perChannel);
        }
    }
    std::vector<float> dx(count, kNaN), params(2 * channels, kNaN);
    batchNormGradInputF32(dy.data(), x.data(), stats.data(), scale.data(), dx.data(), batch,
                          channels, spatial);
    batchNormGradParamsF32(dy.data(), x.data(), stats.data(), params.data(), batch, channels,
                           spatial);
    requireClose(dx, wantDx, 1e-3, 1e-4);
    requireClose(params, wantParams, 1e-4, 1e-4);

    // Central differences of the kernels' own forward pass, statistics recomputed from the
    // perturbed x; the step grows with the offset, as x's float resolution coarsens.
    const float h = 1e-2f * (1.0f + std::fabs(c.offset) / 50.0f);
    auto ofX = [&](const std::vector<float> &v) { return apply(v, scale, bias); };
    auto ofScale = [&](const std::vector<float> &v) { return apply(x, v, bias); };
    auto ofBias = [&](const std::vector<float> &v) { return apply(x, scale, v); };
    requireClose(dx, numericGrad(x, dy, ofX, h), 2e-2, 2e-3);
    std::vector<double> numeric = numericGrad(scale, dy, ofScale, 0.25f);
    std::vector<double> numericBias = numericGrad(bias, dy, ofBias, 0.25f);
    numeric.insert(numeric.end(), numericBias.begin(), numericBias.end());
    requireClose(params, numeric, 1e-3, 1e-3);
  }
}

TEST_CASE("batch norm running statistics use the unbiased variance", "[grad][batchnorm]") {
  // stats: means {1, -2}, inverse std (unused), biased variances {0.5, 2}.
  const float stats[6] = {1.0f, -2.0f, 9.0f, 9.0f, 0.5f, 2.0f};
  float mean[2] = {0.0f, 1.0f}, var[2] = {1.0f, 1.0f};
  batchNormRunningUpdateF32(mean, var, stats, 0.1f, 2, 5);
  CHECK(mean[0] == Approx(0.1).epsilon(1e-6));
  CHECK(mean[1] == Approx(0.9 * 1 + 0.1 * -2).epsilon(1e-6));
  CHECK(var[0] == Approx(0.9 + 0.1 * 0.5 * 5 / 4).epsilon(1e-6));
  CHECK(var[1] == Approx(0.9 + 0.1 * 2.0 * 5 / 4).epsilon(1e-6));
  // One value per channel has no unbiased variance; PyTorch keeps the biased one.
  batchNormRunningUpdateF32(mean, var, stats, 1.0f, 2, 1);
  CHECK(std::vector<float>(mean, mean + 2) == std::vector<float>{1.0f, -2.0f});
  CHECK(std::vector<float>(var, var + 2) == std::vector<float>{0.5f, 2.0f});
}

//===----------------------------------------------------------------------------------------===//
// Slice and gather
//===----------------------------------------------------------------------------------------===//

TEST_CASE("slice gradient scatters dy into zeros", "[grad][data]") {
  std::mt19937 rng(113);
  for (int trial = 0; trial < 150; ++trial) {
    SliceSpec s = randomSlice(rng);
    if (trial == 0)
      s.outShape[0] = 0;
    INFO(describe(s));
    std::vector<float> dy = randomFloats(rng, numElements(s.outShape));
    std::vector<float> dx(static_cast<size_t>(numElements(s.inShape)), kNaN);
    sliceGrad(dy.data(), dx.data(), s.inShape.data(), s.starts.data(), s.steps.data(),
              s.outShape.data(), static_cast<int>(s.inShape.size()));
    std::vector<float> want(dx.size(), 0.0f);
    for (int64_t i = 0; i < numElements(s.outShape); ++i)
      want[sliceSource(s, i)] = dy[i];
    requireEqual(dx, want);
  }
}

namespace {

template <typename Index> void checkGatherGrad(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t outer = randomInt(rng, 1, 3), axisDim = randomInt(rng, 1, 5);
    const int64_t inner = randomInt(rng, 1, 4), numIndices = randomInt(rng, 0, 8);
    INFO("outer " << outer << " axis " << axisDim << " inner " << inner << " indices "
                  << numIndices);
    // Few indices over a short axis repeat often; negative ones count from the end.
    std::vector<Index> indices(numIndices);
    for (Index &i : indices)
      i = static_cast<Index>(randomInt(rng, -axisDim, axisDim - 1));
    std::vector<float> dy = randomFloats(rng, outer * numIndices * inner);
    std::vector<float> dx(static_cast<size_t>(outer * axisDim * inner), kNaN);
    gatherGradF32<Index>(dy.data(), indices.data(), numIndices, dx.data(), outer, axisDim, inner);
    std::vector<double> want(dx.size(), 0.0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < numIndices; ++j) {
        int64_t row = indices[j] < 0 ? indices[j] + axisDim : indices[j];
        for (int64_t i = 0; i < inner; ++i)
          want[(o * axisDim + row) * inner + i] += dy[(o * numIndices + j) * inner + i];
      }
    requireClose(dx, want, 1e-6, 1e-7);
  }
}

} // namespace

TEST_CASE("gather gradient adds rows for repeated and negative indices", "[grad][data]") {
  checkGatherGrad<int32_t>(114);
  checkGatherGrad<int64_t>(115);
  const float dy[4] = {1, 2, 3, 4}; // [4] gathered from [3] at {0, -3, 2, -1}
  const int64_t indices[4] = {0, -3, 2, -1};
  float dx[3];
  gatherGradF32<int64_t>(dy, indices, 4, dx, 1, 3, 1);
  CHECK(std::vector<float>(dx, dx + 3) == std::vector<float>{3, 0, 7});
}

//===----------------------------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------------------------===//

namespace {

// torch.optim.SGD's single-tensor step for one element, in double.
struct SgdReference {
  double w, buf = 0;
  void step(double g, int t, double lr, double momentum, double weightDecay, bool nesterov) {
    double d = g;
    if (weightDecay != 0)
      d += weightDecay * w;
    if (momentum != 0) {
      buf = t == 1 ? d : buf * momentum + d;
      d = nesterov ? d + momentum * buf : buf;
    }
    w -= lr * d;
  }
};

// torch.optim.Adam / AdamW (amsgrad off) for one element, in double.
struct AdamReference {
  double w, m = 0, v = 0;
  void step(double g, int t, double lr, double beta1, double beta2, double eps, double weightDecay,
            bool decoupled) {
    if (decoupled)
      w *= 1 - lr * weightDecay;
    else
      g += weightDecay * w;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    w -= lr / bc1 * m / (std::sqrt(v) / std::sqrt(bc2) + eps);
  }
};

struct SgdCase {
  float lr, momentum, weightDecay;
  bool nesterov;
};

struct AdamCase {
  float lr, beta1, beta2, eps, weightDecay;
  bool decoupled;
};

} // namespace

TEST_CASE("SGD matches torch.optim.SGD over three steps", "[grad][optim]") {
  std::mt19937 rng(116);
  const int64_t n = 19;
  for (SgdCase c : {SgdCase{0.1f, 0.0f, 0.0f, false}, SgdCase{0.1f, 0.0f, 0.01f, false},
                    SgdCase{0.05f, 0.9f, 0.0f, false}, SgdCase{0.05f, 0.9f, 0.01f, true}}) {
    INFO("lr " << c.lr << " momentum " << c.momentum << " wd " << c.weightDecay << " nesterov "
               << c.nesterov);
    std::vector<float> w = randomFloats(rng, n), buf(n, kNaN);
    std::vector<SgdReference> ref;
    for (float v : w)
      ref.push_back({v});
    for (int t = 1; t <= 3; ++t) {
      std::vector<float> g = randomFloats(rng, n);
      // The buffer is never read on the first step, nor at all without momentum.
      sgdUpdateF32(w.data(), g.data(), c.momentum != 0 ? buf.data() : nullptr, n, c.lr, c.momentum,
                   c.weightDecay, c.nesterov, t == 1);
      std::vector<double> want;
      for (int64_t i = 0; i < n; ++i) {
        ref[i].step(g[i], t, c.lr, c.momentum, c.weightDecay, c.nesterov);
        want.push_back(ref[i].w);
      }
      requireClose(w, want, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Adam and AdamW match torch.optim over three steps", "[grad][optim]") {
  std::mt19937 rng(117);
  const int64_t n = 19;
  for (AdamCase c : {AdamCase{1e-2f, 0.9f, 0.999f, 1e-8f, 0.0f, false},
                     AdamCase{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, false},
                     AdamCase{1e-2f, 0.8f, 0.99f, 1e-6f, 0.1f, true}}) {
    INFO("beta1 " << c.beta1 << " wd " << c.weightDecay << " decoupled " << c.decoupled);
    std::vector<float> w = randomFloats(rng, n), m(n, 0.0f), v(n, 0.0f);
    std::vector<AdamReference> ref;
    for (float x : w)
      ref.push_back({x});
    for (int t = 1; t <= 3; ++t) {
      std::vector<float> g = randomFloats(rng, n);
      adamUpdateF32(w.data(), g.data(), m.data(), v.data(), n, c.lr, c.beta1, c.beta2, c.eps,
                    c.weightDecay, c.decoupled,
                    static_cast<float>(1 - std::pow(double(c.beta1), t)),
                    static_cast<float>(1 - std::pow(double(c.beta2), t)));
      std::vector<double> want;
      for (int64_t i = 0; i < n; ++i) {
        ref[i].step(g[i], t, c.lr, c.beta1, c.beta2, c.eps, c.weightDecay, c.decoupled);
        want.push_back(ref[i].w);
      }
      requireClose(w, want, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("optimizer steps reproduce values printed by PyTorch", "[grad][optim]") {
  // torch 1.13: w = [0.5, -1.0], grads [0.1, 0.2], [-0.3, 0.4], [0.05, -0.6] over three steps.
  const float grads[3][2] = {{0.1f, 0.2f}, {-0.3f, 0.4f}, {0.05f, -0.6f}};
  SECTION("SGD(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)") {
    float w[2] = {0.5f, -1.0f}, buf[2];
    for (int t = 0; t < 3; ++t)
      sgdUpdateF32(w, grads[t], buf, 2, 0.1f, 0.9f, 0.01f, true, t == 0);
    CHECK(w[0] == Approx(0.533387065).epsilon(1e-6));
    CHECK(w[1] == Approx(-1.05479467).epsilon(1e-6));
  }
  auto adam = [&](bool decoupled, float w[2]) {
    float m[2] = {}, v[2] = {};
    for (int t = 1; t <= 3; ++t)
      adamUpdateF32(w, grads[t - 1], m, v, 2, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, decoupled,
                    static_cast<float>(1 - std::pow(0.9, t)),
                    static_cast<float>(1 - std::pow(0.999, t)));
  };
  SECTION("Adam(lr=0.01, weight_decay=0.1)") {
    float w[2] = {0.5f, -1.0f};
    adam(false, w);
    CHECK(w[0] == Approx(0.493058115).epsilon(1e-6));
    CHECK(w[1] == Approx(-1.01626074).epsilon(1e-6));
  }
  SECTION("AdamW(lr=0.01, weight_decay=0.1)") {
    float w[2] = {0.5f, -1.0f};
    adam(true, w);
    CHECK(w[0] == Approx(0.496233463).epsilon(1e-6));
    CHECK(w[1] == Approx(-1.01595926).epsilon(1e-6));
  }
}

//===----------------------------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------------------------===//

TEST_CASE("dropout mask is reproducible, fresh per counter, and keeps 1 - ratio",
          "[grad][dropout]") {
  const int64_t n = 100000;
  const float ratio = 0.3f, keep = 1.0f / (1.0f - ratio);
  std::vector<float> a(n), b(n), c(n), d(n);
  dropoutMaskF32(42, 7, ratio, a.data(), n);
  dropoutMaskF32(42, 7, ratio, b.data(), n);
  dropoutMaskF32(42, 8, ratio, c.data(), n);
  dropoutMaskF32(43, 7, ratio, d.data(), n);
  requireEqual(a, b);

  int64_t kept = 0, bothDropped = 0, differsCounter = 0, differsSeed = 0;
  for (int64_t i = 0; i < n; ++i) {
    REQUIRE((a[i] == 0.0f || a[i] == keep));
    kept += a[i] != 0.0f;
    bothDropped += i > 0 && a[i] == 0.0f && a[i - 1] == 0.0f;
    differsCounter += a[i] != c[i];
    differsSeed += a[i] != d[i];
  }
  // Six standard deviations of a binomial count: a correct mask fails about once in 10^9 runs.
  auto within = [&](double count, double p) {
    return std::fabs(count - n * p) <= 6 * std::sqrt(n * p * (1 - p));
  };
  CHECK(within(kept, 0.7));
  // Neighbours are independent: both dropped with probability ratio^2.
  CHECK(within(bothDropped, 0.09));
  // Independent masks disagree with probability 2 * 0.3 * 0.7.
  CHECK(within(differsCounter, 0.42));
  CHECK(within(differsSeed, 0.42));

  // Each element depends only on its index, not on n.
  std::vector<float> prefix(10);
  dropoutMaskF32(42, 7, ratio, prefix.data(), 10);
  requireEqual(prefix, std::vector<float>(a.begin(), a.begin() + 10));

  dropoutMaskF32(42, 7, 0.0f, a.data(), n);
  requireEqual(a, std::vector<float>(n, 1.0f));
}
