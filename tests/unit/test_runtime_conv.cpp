// Tests for the CPU runtime's convolutions (im2col, Winograd, depthwise, channels-last,
// padded planes) against direct references computed in double, on
// random windows from fixed seeds.
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

// (batch, channels, plane) to (batch, plane, channels), or back with toChannelsFirst.
std::vector<float> swapLayout(const std::vector<float> &x, int64_t batch, int64_t channels,
                              bool toChannelsFirst = false) {
  const int64_t plane = int64_t(x.size()) / (batch * channels);
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t first = (n * channels + c) * plane + i, last = (n * plane + i) * channels + c;
        y[toChannelsFirst ? first : last] = x[toChannelsFirst ? last : first];
      }
  return y;
}

// p run channels-last (x, the residual and y transposed around it; x not with planarInput)
// with weights packed for it.
std::vector<float> channelsLastConv(const ConvParams &p, const std::vector<float> &x,
                                    const std::vector<float> &weight, const float *bias,
                                    const std::vector<float> *residual, size_t ySize) {
  ConvParams last = p;
  last.channelsLast = last.packedWeights = true;
  REQUIRE(convPacksWeights(last));
  REQUIRE(convWorkspaceBytes(last) == 0);
  std::vector<float> packed(packedConvWeightBytes(last) / sizeof(float), 12345.0f);
  packConvWeights(last, weight.data(), packed.data());
  const int64_t n = p.window.batch;
  std::vector<float> xLast = p.planarInput ? x : swapLayout(x, n, p.window.channels);
  std::vector<float> yLast(ySize);
  std::vector<float> residualLast;
  if (residual)
    residualLast = swapLayout(*residual, n, p.outChannels);
  convF32(last, xLast.data(), packed.data(), bias, residual ? residualLast.data() : nullptr,
          yLast.data(), nullptr);
  return swapLayout(yLast, n, p.outChannels, /*toChannelsFirst=*/true);
}

void checkConv(std::mt19937 &rng, const ConvParams &p, const int64_t padEnd[3], bool withBias) {
  const WindowParams &w = p.window;
  INFO(describe(w, padEnd) << " M" << p.outChannels << " groups " << p.groups << " bias "
                           << withBias << " workspace limit " << p.workspaceLimit);
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2], outPlane = w.out[0] * w.out[1] * w.out[2];
  const int64_t taps = w.kernel[0] * w.kernel[1] * w.kernel[2];
  const int64_t cg = w.channels / p.groups, mg = p.outChannels / p.groups;
  std::vector<float> x = randomFloats(rng, w.batch * w.channels * inPlane);
  std::vector<float> weight = randomFloats(rng, p.outChannels * cg * taps);
  std::vector<float> bias = randomFloats(rng, p.outChannels);
  std::vector<float> y(static_cast<size_t>(w.batch * p.outChannels * outPlane));

  size_t wsBytes = convWorkspaceBytes(p);
  REQUIRE(wsBytes % sizeof(float) == 0);
  // A limit is kept unless one output row (or one Winograd tile) alone needs more.
  const size_t rowBytes = sizeof(float) * cg * taps * w.out[2];
  const size_t tileBytes =
      sizeof(float) * winogradPositions(p) * (w.channels + p.outChannels);
  if (p.workspaceLimit > 0)
    REQUIRE(wsBytes <= std::max<size_t>({size_t(p.workspaceLimit), rowBytes, tileBytes}));
  // Sentinels after the workspace detect writes past the size it asked for.
  const size_t wsFloats = wsBytes / sizeof(float);
  std::vector<float> workspace(wsFloats + 16, 12345.0f);
  convF32(p, x.data(), weight.data(), withBias ? bias.data() : nullptr, nullptr, y.data(),
          workspace.data());
  for (size_t i = wsFloats; i < workspace.size(); ++i)
    REQUIRE(workspace[i] == 12345.0f);

  std::vector<double> want(y.size()), scale(y.size());
  for (int64_t n = 0; n < w.batch; ++n)
    for (int64_t m = 0; m < p.outChannels; ++m)
      for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
            double sum = withBias ? bias[m] : 0.0, mag = std::fabs(sum);
            int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
                for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
                  for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
                    int64_t i0 = tapPosition(w, 0, o0, k0), i1 = tapPosition(w, 1, o1, k1),
                            i2 = tapPosition(w, 2, o2, k2);
                    if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 ||
                        i2 >= w.in[2])
                      continue;
                    double xv = x[(((n * w.channels + g * cg + c) * w.in[0] + i0) * w.in[1] + i1) *
                                      w.in[2] +
                                  i2];
                    double wv = weight[(((m * cg + c) * w.kernel[0] + k0) * w.kernel[1] + k1) *
                                           w.kernel[2] +
                                       k2];
                    sum += xv * wv;
                    mag += std::fabs(xv * wv);
                  }
            size_t idx = static_cast<size_t>(((n * p.outChannels + m) * w.out[0] + o0) * w.out[1] *
                                                 w.out[2] +
                                             o1 * w.out[2] + o2);
            want[idx] = sum;
            scale[idx] = mag;
          }
  requireClose(y, want, 1e-4, 1e-6, &scale);
  // Weights packed ahead of time, as the compiler embeds constant ones (3x3 stride-1 ones
  // Winograd-transformed).
  std::vector<float> packed;
  if (convPacksWeights(p)) {
    packed.assign(packedConvWeightBytes(p) / sizeof(float), 12345.0f);
    packConvWeights(p, weight.data(), packed.data());
  }
  // Fused residual adds and activations (dlc-fuse-epilogues) apply after the bias, in that
  // order.
  const std::vector<float> residual = randomFloats(rng, y.size());
  for (Epilogue epilogue : {Epilogue{Activation::None, 0.0f, 0.0f, 0.0f},
                            Epilogue{Activation::Relu, 0.0f, 0.0f, 0.0f},
                            Epilogue{Activation::Clip, -0.5f, 0.7f, 0.0f},
                            Epilogue{Activation::LeakyRelu, 0.0f, 0.0f, 0.1f},
                            Epilogue{Activation::Sigmoid, 0.0f, 0.0f, 0.0f},
                            Epilogue{Activation::Tanh, 0.0f, 0.0f, 0.0f},
                            Epilogue{Activation::Silu, 0.0f, 0.0f, 0.0f},
                            Epilogue{Activation::HardSwish, 0.0f, 0.0f, 0.0f}}) {
    for (bool withResidual : {false, true}) {
      std::vector<double> expected(want.size()), expectedScale(want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const double v = want[i] + (withResidual ? residual[i] : 0.0);
        expectedScale[i] = scale[i] + (withResidual ? std::fabs(residual[i]) : 0.0);
        switch (epilogue.activation) {
        case Activation::None:
          expected[i] = v;
          break;
        case Activation::Relu:
          expected[i] = std::max(v, 0.0);
          break;
        case Activation::Clip:
          expected[i] = std::min(std::max(v, double(epilogue.min)), double(epilogue.max));
          break;
        case Activation::LeakyRelu:
          expected[i] = v < 0.0 ? epilogue.alpha * v : v;
          break;
        case Activation::Sigmoid:
          expected[i] = 1.0 / (1.0 + std::exp(-v));
          break;
        case Activation::Tanh:
          expected[i] = std::tanh(v);
          break;
        case Activation::Silu:
          expected[i] = v / (1.0 + std::exp(-v));
          break;
        case Activation::HardSwish:
          expected[i] = v * std::min(std::max(v / 6.0 + 0.5, 0.0), 1.0);
          break;
        }
      }
      for (bool packedWeights : {false, true}) {
        if (packedWeights && packed.empty())
          continue;
        INFO("epilogue " << int(epilogue.activation) << " residual " << withResidual
                         << " packed weights " << packedWeights);
        ConvParams fused = p;
        fused.epilogue = epilogue;
        fused.packedWeights = packedWeights;
        std::vector<float> yFused(y.size());
        convF32(fused, x.data(), packedWeights ? packed.data() : weight.data(),
                withBias ? bias.data() : nullptr, withResidual ? residual.data() : nullptr,
                yFused.data(), workspace.data());
        requireClose(yFused, expected, 1e-4, 1e-6, &expectedScale);
        for (size_t i = wsFloats; i < workspace.size(); ++i)
          REQUIRE(workspace[i] == 12345.0f);
      }
      if (channelsLastApplies(p)) {
        INFO("channels-last, epilogue " << int(epilogue.activation) << " residual "
                                        << withResidual);
        ConvParams fused = p;
        fused.epilogue = epilogue;
        requireClose(channelsLastConv(fused, x, weight, withBias ? bias.data() : nullptr,
                                      withResidual ? &residual : nullptr, y.size()),
                     expected, 1e-4, 1e-6, &expectedScale);
      }
    }
  }
}

} // namespace

TEST_CASE("conv matches direct convolution (grouped, dilated, strided, padded)", "[conv]") {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 60; ++trial) {
    int spatialRank = static_cast<int>(randomInt(rng, 1, 3));
    int64_t padEnd[3];
    ConvParams p{};
    p.window = randomWindow(rng, spatialRank, spatialRank == 3 ? 6 : 11, 3, false, padEnd);
    switch (randomInt(rng, 0, 3)) {
    case 0:
      p.groups = 1;
      break;
    case 1:
      // Four groups or more run a batch of groups at a time (threads take whole groups).
      p.groups = randomInt(rng, 2, trial % 4 ? 3 : 8);
      break;
    default:
      // Depthwise, with a channel multiplier of 1 or 2.
      p.groups = p.window.channels = randomInt(rng, 1, 5);
      break;
    }
    if (p.window.channels % p.groups != 0)
      p.window.channels = p.groups * randomInt(rng, 1, 3);
    p.outChannels = p.groups * randomInt(rng, 1, 2 + (p.groups == 1 ? 10 : 0));
    // Tiny workspace limits force im2col in chunks of one or a few output rows.
    p.workspaceLimit = trial % 2 ? randomInt(rng, 1, 2048) : 0;
    checkConv(rng, p, padEnd, trial % 3 != 0);
  }
}

TEST_CASE("conv special shapes", "[conv]") {
  std::mt19937 rng(10);
  const int64_t noPad[3] = {0, 0, 0};
  auto window = [](int64_t n, int64_t c, std::initializer_list<int64_t> in) {
    WindowParams w{};
    w.batch = n;
    w.channels = c;
    for (int d = 0; d < 3; ++d)
      w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    int d = 3 - static_cast<int>(in.size());
    for (int64_t v : in) {
      w.in[d] = w.out[d] = v;
      ++d;
    }
    return w;
  };

  SECTION("pointwise convolution needs no workspace") {
    ConvParams p{window(2, 24, {7, 9}), 40, 1};
    CHECK(convWorkspaceBytes(p) == 0);
    checkConv(rng, p, noPad, true);
    ConvParams grouped{window(1, 12, {5, 5}), 8, 4};
    CHECK(convWorkspaceBytes(grouped) == 0);
    checkConv(rng, grouped, noPad, false);
  }
  SECTION("a pointwise convolution scales its input per image and channel") {
    // The fused Mul (squeeze-and-excitation's gate) gives the bits of the Mul then the
    // convolution. Channels-last through the pointwise kernel (40 channels) and the GEMM
    // (300: packed rows, and one pixel per image: a row times the packed weights; 303: a depth
    // the packing's register transposes do not divide); channels-first through the GEMM's
    // packing of its input, where the weights are packed (dlc-fuse-input-scale fuses only
    // there: one pixel takes a dot product per output, summed in another order); two images,
    // with an epilogue.
    for (bool channelsLast : {true, false})
      for (int64_t channels : {40, 300, 303})
        for (int64_t side : {1, 7}) {
          if (!channelsLast && side == 1)
            continue;
          ConvParams p{window(2, channels, {side, side}), 24, 1};
          p.channelsLast = channelsLast;
          p.packedWeights = convPacksWeights(p);
          p.epilogue = Epilogue{Activation::Silu, 0.0f, 0.0f, 0.0f};
          const int64_t plane = side * side;
          const std::vector<float> x = randomFloats(rng, 2 * channels * plane);
          const std::vector<float> scale = randomFloats(rng, 2 * channels);
          const std::vector<float> weight = randomFloats(rng, 24 * channels);
          const std::vector<float> bias = randomFloats(rng, 24);
          std::vector<float> packed = weight;
          if (p.packedWeights) {
            packed.resize(packedConvWeightBytes(p) / sizeof(float));
            packConvWeights(p, weight.data(), packed.data());
          }
          std::vector<float> scaled(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            const size_t image = i / size_t(channels * plane);
            const size_t channel =
                channelsLast ? i % size_t(channels) : i / size_t(plane) % size_t(channels);
            scaled[i] = x[i] * scale[image * size_t(channels) + channel];
          }
          std::vector<float> fused(size_t(2 * 24 * plane)), unfused(fused.size());
          convF32(p, x.data(), packed.data(), bias.data(), nullptr, fused.data(), nullptr,
                  scale.data());
          convF32(p, scaled.data(), packed.data(), bias.data(), nullptr, unfused.data(),
                  nullptr);
          INFO("channels-last " << channelsLast << ", channels " << channels << ", side "
                                << side);
          REQUIRE(std::memcmp(fused.data(), unfused.data(), fused.size() * sizeof(float)) == 0);
        }
  }
  SECTION("grouped convolutions run over padded input planes") {
    // RegNet-like groups of 16 channels (two panels of output rows), then 6 (one partial
    // panel): 3x3 with stride 1 and 2, 5x5 with stride 2 and uneven padding, on maps whose
    // padded rows are not whole vectors, every epilogue (checkConv).
    struct Case {
      int64_t channels, groups, side, kernel, stride, padBegin, padEnd;
    };
    for (const Case &c : {Case{48, 3, 9, 3, 1, 1, 1}, Case{32, 2, 11, 3, 2, 1, 1},
                          Case{18, 3, 13, 5, 2, 2, 1}, Case{12, 2, 7, 3, 1, 0, 0}}) {
      const ConvParams p = convParams(2, c.channels, c.channels, c.groups, {c.side, c.side},
                                      c.kernel, c.stride, 1, c.padBegin, c.padEnd);
      const int64_t padEnd[3] = {0, c.padEnd, c.padEnd};
      CHECK(paddedPlanesApply(p));
      checkConv(rng, p, padEnd, true);
    }
  }
  SECTION("convolutions of few channels run over padded planes in bands of rows") {
    // Ungrouped (detectors' early layers, ResNet's stem): 3x3 stride 1 and 2 and 7x7 stride 2
    // with uneven padding; with the default limit (bands for the threads) and limits that
    // leave bands of one or a few rows, the last one shorter; every epilogue (checkConv).
    struct Case {
      int64_t channels, outChannels, side, kernel, stride, padBegin, padEnd, workspaceLimit;
    };
    for (const Case &c :
         {Case{16, 24, 21, 3, 1, 1, 1, 0}, Case{16, 24, 21, 3, 1, 1, 1, 40000},
          Case{8, 16, 23, 3, 2, 1, 0, 0}, Case{8, 16, 23, 3, 2, 1, 0, 20000},
          Case{3, 16, 19, 7, 2, 3, 3, 0}, Case{3, 16, 19, 7, 2, 3, 2, 12000}}) {
      ConvParams p = convParams(2, c.channels, c.outChannels, 1, {c.side, c.side}, c.kernel,
                                c.stride, 1, c.padBegin, c.padEnd);
      p.workspaceLimit = c.workspaceLimit;
      const int64_t padEnd[3] = {0, c.padEnd, c.padEnd};
      CHECK(paddedPlanesApply(p));
      CHECK_FALSE(winogradApplies(p));
      checkConv(rng, p, padEnd, true);
    }
    // Outputs enough for Winograd's GEMMs (64) or inputs enough for im2col's panels keep them.
    ConvParams wide = conv3x3(64, 64, 28);
    CHECK_FALSE(paddedPlanesApply(wide));
    wide.window.stride[1] = wide.window.stride[2] = 2;
    wide.window.out[1] = wide.window.out[2] = 14;
    CHECK(paddedPlanesApply(wide));
    // Nor where two slots would outgrow the whole im2col matrix (a small map: the arena
    // stays as im2col sized it).
    wide.window.in[1] = wide.window.in[2] = 14;
    wide.window.out[1] = wide.window.out[2] = 7;
    CHECK_FALSE(paddedPlanesApply(wide));
    // Nor a strided 1x1 window (ResNet's projection shortcuts): no taps to share.
    ConvParams shortcut = conv3x3(64, 128, 56);
    shortcut.window.kernel[1] = shortcut.window.kernel[2] = 1;
    shortcut.window.padBegin[1] = shortcut.window.padBegin[2] = 0;
    shortcut.window.stride[1] = shortcut.window.stride[2] = 2;
    shortcut.window.out[1] = shortcut.window.out[2] = 28;
    CHECK_FALSE(paddedPlanesApply(shortcut));
    wide.window.channels = 128;
    CHECK_FALSE(paddedPlanesApply(wide));
  }
  SECTION("convolutions over small maps") {
    // 7x7 maps (ResNet's last stage): 3x3 padded (one image: too few tiles for Winograd),
    // 3x3 with stride 2 from 14x14 and pointwise, 64 output channels, sums over 1152 or 1024
    // products (several k blocks), every epilogue (checkConv): 49 positions end in a column
    // tile of 17, written with partial vectors.
    for (int64_t kernel : {3, 1})
      for (int64_t stride : {1, 2}) {
        ConvParams p{window(kernel == 3 && stride == 1 ? 1 : 2, kernel == 3 ? 128 : 1024,
                            {7 * stride, 7 * stride}),
                     64, 1};
        for (int d = 1; d < 3; ++d) {
          p.window.kernel[d] = kernel;
          p.window.stride[d] = stride;
          p.window.padBegin[d] = kernel / 2;
          p.window.out[d] = 7;
        }
        const int64_t padEnd[3] = {0, kernel / 2 - (stride - 1), kernel / 2 - (stride - 1)};
        INFO("kernel " << kernel << " stride " << stride);
        checkConv(rng, p, padEnd, true);
      }
  }
  SECTION("depthwise convolutions with short rows run channels-last in blocks of channels") {
    // 150 channels: two full blocks of 64 and a partial one; 5x5 taps on 7x7 maps padded by
    // 2 (EfficientNet's last stages), then 3x3 with stride 2 on 14x14, two images each.
    ConvParams late{window(2, 150, {7, 7}), 150, 150};
    late.window.kernel[1] = late.window.kernel[2] = 5;
    late.window.padBegin[1] = late.window.padBegin[2] = 2;
    const int64_t pad2[3] = {0, 2, 2};
    CHECK(convWorkspaceBytes(late) > 0);
    checkConv(rng, late, pad2, true);
    ConvParams strided{window(2, 150, {14, 14}), 150, 150};
    strided.window.kernel[1] = strided.window.kernel[2] = 3;
    strided.window.stride[1] = strided.window.stride[2] = 2;
    strided.window.padBegin[1] = strided.window.padBegin[2] = 1;
    strided.window.out[1] = strided.window.out[2] = 7;
    const int64_t pad1[3] = {0, 0, 0};
    checkConv(rng, strided, pad1, false);
    // A small workspace limit: one block's slot at a time.
    late.workspaceLimit = 64 * (49 + 49 + 25) * int64_t(sizeof(float));
    CHECK(convWorkspaceBytes(late) == size_t(late.workspaceLimit));
    checkConv(rng, late, pad2, true);
  }
  SECTION("a 1x1 window with end padding still needs im2col") {
    ConvParams p{window(1, 3, {4, 5}), 2, 1};
    p.window.out[1] = 5;
    p.window.out[2] = 7;
    const int64_t padEnd[3] = {0, 1, 2};
    CHECK(convWorkspaceBytes(p) == sizeof(float) * 3 * 5 * 7);
    checkConv(rng, p, padEnd, true);
  }
  SECTION("a depth-padded window of depth 1 reads only padding, also depthwise") {
    // One depth position, padded before and strided past: every tap is padding, y = bias.
    ConvParams p{window(1, 2, {1, 4, 4}), 2, 2};
    p.window.padBegin[0] = 1;
    p.window.stride[0] = 2;
    checkConv(rng, p, noPad, true);
  }
  SECTION("1-D convolution uses the last spatial slot") {
    ConvParams p{window(2, 3, {50}), 16, 1};
    p.window.kernel[2] = 5;
    p.window.padBegin[2] = 2;
    p.window.stride[2] = 2;
    p.window.out[2] = (50 + 2 + 1 - 5) / 2 + 1;
    const int64_t padEnd[3] = {0, 0, 1};
    CHECK(convWorkspaceBytes(p) == sizeof(float) * 3 * 5 * p.window.out[2]);
    checkConv(rng, p, padEnd, true);
  }
  SECTION("depthwise rows too wide for the row kernel's buffer take the tap-run loop") {
    ConvParams p{window(1, 2, {9000}), 4, 2};
    p.window.kernel[2] = 3;
    p.window.padBegin[2] = 1;
    const int64_t padEnd[3] = {0, 0, 1};
    checkConv(rng, p, padEnd, true);
  }
  SECTION("depthwise 3x3 stride 2") {
    ConvParams p{window(1, 32, {17, 17}), 32, 32};
    for (int d = 1; d < 3; ++d) {
      p.window.kernel[d] = 3;
      p.window.stride[d] = 2;
      p.window.padBegin[d] = 1;
      p.window.out[d] = 9;
    }
    const int64_t padEnd[3] = {0, 1, 1};
    checkConv(rng, p, padEnd, true);
  }
  SECTION("larger 2-D convolution exercising gemm blocking") {
    ConvParams p{window(1, 40, {12, 12}), 72, 1};
    for (int d = 1; d < 3; ++d) {
      p.window.kernel[d] = 3;
      p.window.padBegin[d] = 1;
    }
    const int64_t padEnd[3] = {0, 1, 1};
    checkConv(rng, p, padEnd, true);
  }
  SECTION("3-D convolution") {
    ConvParams p{window(1, 4, {5, 6, 7}), 6, 2};
    for (int d = 0; d < 3; ++d) {
      p.window.kernel[d] = 2 + d % 2;
      p.window.out[d] = p.window.in[d] - p.window.kernel[d] + 1;
    }
    checkConv(rng, p, noPad, true);
  }
}

TEST_CASE("channels-last depthwise and pointwise convolutions match the direct one", "[conv]") {
  std::mt19937 rng(13);
  auto planar = [](int64_t n, int64_t c, int64_t h, int64_t w) {
    WindowParams win{};
    win.batch = n;
    win.channels = c;
    for (int d = 0; d < 3; ++d)
      win.in[d] = win.out[d] = win.kernel[d] = win.stride[d] = win.dilation[d] = 1;
    win.in[1] = win.out[1] = h;
    win.in[2] = win.out[2] = w;
    return win;
  };
  SECTION("only 2-d depthwise (one output channel each) and pointwise shapes qualify") {
    CHECK(channelsLastApplies({planar(1, 8, 5, 5), 8, 8}));
    CHECK(channelsLastApplies({planar(1, 8, 5, 5), 24, 1}));
    CHECK_FALSE(channelsLastApplies({planar(1, 8, 5, 5), 16, 8})); // channel multiplier 2
    CHECK_FALSE(channelsLastApplies({planar(1, 8, 5, 5), 8, 2}));  // grouped
    ConvParams threeByThree{planar(1, 8, 5, 5), 8, 1};
    threeByThree.window.kernel[1] = threeByThree.window.kernel[2] = 3;
    CHECK_FALSE(channelsLastApplies(threeByThree));
    ConvParams volume{planar(1, 8, 5, 5), 8, 8};
    volume.window.in[0] = volume.window.out[0] = 2;
    CHECK_FALSE(channelsLastApplies(volume));
  }
  SECTION("depthwise: channel counts around every vector width, strides, dilations, pads") {
    // 72 and 200 leave a half vector after the four-vector blocks of AVX-512, 13 and 37 a
    // ragged tail everywhere.
    for (int64_t channels : {1, 13, 16, 37, 72, 200}) {
      for (int trial = 0; trial < 4; ++trial) {
        int64_t padEnd[3];
        WindowParams win = randomWindow(rng, 2, 12, 7, false, padEnd);
        win.channels = channels;
        checkConv(rng, {win, channels, channels}, padEnd, trial % 2 == 0);
      }
    }
  }
  SECTION("planar input: an image's channels, output channels around every vector width") {
    // 16, 32 and 64 fill one to four AVX-512 vectors, 72 and 130 leave a tail after the
    // four-vector blocks, 5 and 24 a partial vector; strides 1 to 4, dilations, pads.
    for (int64_t outChannels : {1, 5, 16, 24, 32, 64, 72, 130})
      for (int trial = 0; trial < 3; ++trial) {
        int64_t padEnd[3];
        WindowParams win = randomWindow(rng, 2, 40, 7, false, padEnd);
        win.channels = randomInt(rng, 1, kMaxPlanarInputChannels);
        ConvParams p{win, outChannels, 1};
        p.planarInput = true;
        REQUIRE(channelsLastApplies(p));
        checkConv(rng, p, padEnd, trial % 2 == 0);
      }
    ConvParams grouped{planar(1, 4, 6, 6), 4, 2}, wide{planar(1, 5, 6, 6), 8, 1};
    grouped.planarInput = wide.planarInput = true;
    CHECK_FALSE(channelsLastApplies(grouped));
    CHECK_FALSE(channelsLastApplies(wide));
  }
  SECTION("pointwise: several pixel blocks, ragged channel counts") {
    // On 3 threads, too few pixel blocks (a 7x7 plane is one) have their output channels in
    // parts: on the pointwise kernel (96 or 200 input channels) and the GEMM (300), ragged
    // (250) or not, with every epilogue and residual checkConv tries.
    ThreadPool *pool = createThreadPool(3);
    for (bool pooled : {false, true})
      for (auto [n, c, m, h, w] : {std::array<int64_t, 5>{1, 16, 24, 10, 10},
                                   {2, 13, 37, 11, 9}, {1, 96, 160, 7, 7}, {1, 200, 250, 7, 7},
                                   {1, 300, 250, 7, 7}, {1, 3, 1, 20, 15}}) {
        INFO((pooled ? 3 : 1) << " threads");
        const int64_t noPad[3] = {0, 0, 0};
        if (!pooled) {
          checkConv(rng, {planar(n, c, h, w), m, 1}, noPad, true);
          continue;
        }
        ThreadScope scope(pool);
        checkConv(rng, {planar(n, c, h, w), m, 1}, noPad, true);
      }
    destroyThreadPool(pool);
  }
  SECTION("the same bits on any thread count") {
    // The 7x7 pointwise ones split their output channels on 3 threads (2 blocks) or on 2 and
    // 3 (1 block), through the pointwise kernel (40 input channels) and the GEMM (300); the
    // GEMM's 14x14 plane is 3 blocks on 3 threads and 4 on 2.
    for (ConvParams p : {ConvParams{planar(2, 40, 23, 19), 40, 40},
                         ConvParams{planar(2, 40, 23, 19), 56, 1},
                         ConvParams{planar(2, 40, 7, 7), 200, 1},
                         ConvParams{planar(1, 300, 7, 7), 250, 1},
                         ConvParams{planar(1, 300, 14, 14), 120, 1}}) {
      if (p.groups > 1)
        for (int d = 1; d < 3; ++d) {
          p.window.kernel[d] = 3;
          p.window.padBegin[d] = 1;
        }
      const int64_t images = p.window.batch, channels = p.window.channels;
      const int64_t planeIn = p.window.in[1] * p.window.in[2];
      std::vector<float> x = randomFloats(rng, images * channels * planeIn);
      std::vector<float> weight = randomFloats(rng, p.outChannels * channels / p.groups *
                                                        p.window.kernel[1] * p.window.kernel[2]);
      std::vector<float> bias = randomFloats(rng, p.outChannels);
      const size_t ySize = size_t(images * p.outChannels * planeIn);
      std::vector<float> serial = channelsLastConv(p, x, weight, bias.data(), nullptr, ySize);
      for (int threads : {2, 3}) {
        INFO(threads << " threads, groups " << p.groups << ", " << channels << " channels");
        ThreadPool *pool = createThreadPool(threads);
        std::vector<float> y;
        {
          ThreadScope scope(pool);
          y = channelsLastConv(p, x, weight, bias.data(), nullptr, ySize);
        }
        destroyThreadPool(pool);
        CHECK(y == serial);
      }
    }
  }
}

TEST_CASE("3x3 stride-1 convolutions with packed weights take Winograd", "[conv]") {
  std::mt19937 rng(11);
  // F(2x2, 3x3), then F(4x4, 3x3) on maps from 24 columns, in runs of tiles that fill the
  // widest vectors and a part of one.
  constexpr int kF2x2Trials = 24, kTrials = 36;
  for (int trial = 0; trial < kTrials; ++trial) {
    const bool wide = trial >= kF2x2Trials;
    ConvParams p{};
    int64_t padEnd[3] = {0, 0, 0};
    WindowParams &w = p.window;
    // Odd and even outputs (partial edge tiles), one-row outputs, asymmetric padding, and
    // enough tiles (32) for Winograd to apply.
    do {
      w.batch = wide ? 1 : randomInt(rng, 1, 4);
      // Fewer channels take the padded planes (paddedPlanesApply).
      w.channels = randomInt(rng, 64, 72);
      p.outChannels = randomInt(rng, 64, 72);
      p.groups = 1;
      for (int d = 0; d < 3; ++d)
        w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
      for (int d = 1; d < 3; ++d) {
        w.kernel[d] = 3;
        w.padBegin[d] = randomInt(rng, 0, 2);
        padEnd[d] = randomInt(rng, 0, 2);
        const int64_t least = std::max<int64_t>(1, 3 - w.padBegin[d] - padEnd[d]);
        w.in[d] = wide && d == 2 ? randomInt(rng, 26, 80) : randomInt(rng, least, wide ? 9 : 17);
        w.out[d] = w.in[d] + w.padBegin[d] + padEnd[d] - 2;
      }
    } while (!winogradApplies(p) || winogradPositions(p) != (wide ? 36 : 16));
    // Small limits: a few tiles per workspace chunk.
    p.workspaceLimit = trial % 2 ? randomInt(rng, 1, 16384) : 0;
    REQUIRE(winogradApplies(p));
    checkConv(rng, p, padEnd, trial % 3 != 0);
  }
  SECTION("few channels or tiles, strides and dilations keep im2col") {
    ConvParams p = conv3x3(64, 64, 14); // 49 tiles
    CHECK(winogradApplies(p));
    ConvParams small = p;
    small.window.in[1] = small.window.out[1] = small.window.in[2] = small.window.out[2] = 7;
    CHECK_FALSE(winogradApplies(small)); // 16 tiles
    ConvParams narrow = p;
    narrow.window.channels = 8;
    CHECK_FALSE(winogradApplies(narrow));
    ConvParams strided = p;
    strided.window.stride[2] = 2;
    CHECK_FALSE(winogradApplies(strided));
    ConvParams dilated = p;
    dilated.window.dilation[1] = 2;
    CHECK_FALSE(winogradApplies(dilated));
    ConvParams grouped = p;
    grouped.groups = 2;
    CHECK_FALSE(winogradApplies(grouped));
  }
}

TEST_CASE("Winograd F(4x4, 3x3) stays within 1e-4 of the output scale on ResNet-like layers",
          "[conv]") {
  // He-initialised weights over Relu outputs; the error against a double-precision reference
  // relative to the output's RMS (measured: 2.3e-5 at 64 channels, 3.5e-5 at 128, 5.8e-5 at
  // 256, against 1.6e-6 for F(2x2, 3x3) at 64). The smallest maps it takes are mostly edge
  // tiles.
  std::mt19937 rng(14);
  for (auto [channels, size] :
       {std::pair<int64_t, int64_t>{64, 56}, {128, 48}, {128, 28}, {64, 24}}) {
    ConvParams p = conv3x3(channels, channels, size);
    p.packedWeights = true;
    REQUIRE(winogradPositions(p) == 36);
    const WindowParams &w = p.window;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(size_t(channels * size * size)), weight(size_t(channels * channels * 9));
    for (float &v : x)
      v = std::max(0.0f, normal(rng));
    for (float &v : weight)
      v = normal(rng) * std::sqrt(2.0f / float(channels * 9));
    std::vector<float> packed(packedConvWeightBytes(p) / sizeof(float));
    packConvWeights(p, weight.data(), packed.data());
    std::vector<float> y(x.size()), workspace(convWorkspaceBytes(p) / sizeof(float));
    convF32(p, x.data(), packed.data(), nullptr, nullptr, y.data(), workspace.data());
    double worst = 0.0, squares = 0.0;
    for (int64_t m = 0; m < channels; ++m)
      for (int64_t o1 = 0; o1 < size; ++o1)
        for (int64_t o2 = 0; o2 < size; ++o2) {
          double sum = 0.0;
          for (int64_t c = 0; c < channels; ++c)
            for (int64_t k1 = 0; k1 < 3; ++k1)
              for (int64_t k2 = 0; k2 < 3; ++k2) {
                const int64_t i1 = o1 + k1 - w.padBegin[1], i2 = o2 + k2 - w.padBegin[2];
                if (i1 >= 0 && i2 >= 0 && i1 < size && i2 < size)
                  sum += double(x[(c * size + i1) * size + i2]) * weight[(m * channels + c) * 9 +
                                                                         k1 * 3 + k2];
              }
          worst = std::max(worst, std::fabs(y[(m * size + o1) * size + o2] - sum));
          squares += sum * sum;
        }
    const double rms = std::sqrt(squares / double(y.size()));
    INFO(channels << " channels at " << size << "x" << size << ": max error " << worst
                  << ", output RMS " << rms);
    CHECK(worst <= 1e-4 * rms);
  }
}

TEST_CASE("Winograd convolution gives the same bits on any thread count", "[conv][threads]") {
  std::mt19937 rng(12);
  // Two 23x23 images (F(2x2)) in two chunks per thread, split by tiles; one 28x28 image
  // (F(4x4), 49 tiles: one part) whose transforms split by channels.
  for (auto [images, channels, outChannels, size] :
       {std::array<int64_t, 4>{2, 24, 36, 23}, {1, 64, 72, 28}}) {
    INFO(images << " images of " << size << "x" << size);
    ConvParams p{};
    WindowParams &w = p.window;
    w.batch = images;
    w.channels = channels;
    p.outChannels = outChannels;
    p.groups = 1;
    for (int d = 0; d < 3; ++d)
      w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    for (int d = 1; d < 3; ++d) {
      w.kernel[d] = 3;
      w.padBegin[d] = 1;
      w.in[d] = w.out[d] = size;
    }
    p.packedWeights = true;
    p.workspaceLimit = 0; // 1 MiB: two chunks per thread on every thread count for 23x23
    const int64_t plane = size * size;
    std::vector<float> x = randomFloats(rng, w.batch * w.channels * plane);
    std::vector<float> weight = randomFloats(rng, p.outChannels * w.channels * 9);
    std::vector<float> bias = randomFloats(rng, p.outChannels);
    std::vector<float> packed(packedConvWeightBytes(p) / sizeof(float));
    packConvWeights(p, weight.data(), packed.data());
    std::vector<float> workspace(convWorkspaceBytes(p) / sizeof(float));
    std::vector<float> serial(size_t(w.batch * p.outChannels * plane));
    convF32(p, x.data(), packed.data(), bias.data(), nullptr, serial.data(), workspace.data());
    for (int threads : {2, 3, 5}) {
      INFO(threads << " threads");
      ThreadPool *pool = createThreadPool(threads);
      std::vector<float> y(serial.size());
      {
        ThreadScope scope(pool);
        convF32(p, x.data(), packed.data(), bias.data(), nullptr, y.data(), workspace.data());
      }
      destroyThreadPool(pool);
      CHECK(y == serial);
    }
  }
}
