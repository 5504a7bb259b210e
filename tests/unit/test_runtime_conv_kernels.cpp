// Tests for the CPU runtime's convolution row kernels (depthwise planar and channels-last,
// channels-last pointwise) on every instruction set the machine runs, against naive sums in
// double or the GEMM path they replace, on random shapes from fixed seeds.
#include "dlc_kernels.h"
#include "gemm.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace dlc::rt;

TEST_CASE("depthwise row kernel matches a naive sum on every instruction set", "[conv]") {
  std::mt19937 rng(13);
  for (CpuIsa isa : runnableIsas()) {
    // Around every vector width (4, 8, 16 floats) and the four-vector blocks.
    for (int64_t n : {1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 130}) {
      const int64_t taps = randomInt(rng, 1, 12);
      std::vector<std::vector<float>> rows;
      std::vector<const float *> sources;
      for (int64_t t = 0; t < taps; ++t) {
        rows.push_back(randomFloats(rng, n + kDepthwiseRowPad));
        sources.push_back(rows.back().data());
      }
      std::vector<float> weights = randomFloats(rng, taps);
      const float init = randomFloats(rng, 1)[0];
      std::vector<float> y(n + 8, 12345.0f);
      depthwiseRowOn(isa, {taps, sources.data(), weights.data(), init, y.data(), n});
      std::vector<double> want(n), scale(n);
      for (int64_t j = 0; j < n; ++j) {
        want[j] = init;
        scale[j] = std::fabs(init);
        for (int64_t t = 0; t < taps; ++t) {
          want[j] += double(weights[t]) * rows[t][j];
          scale[j] += std::fabs(double(weights[t]) * rows[t][j]);
        }
      }
      INFO("isa " << cpuIsaName(isa) << " n " << n << " taps " << taps);
      requireClose(std::vector<float>(y.begin(), y.begin() + n), want, 1e-5, 1e-7, &scale);
      for (int64_t j = n; j < n + 8; ++j)
        REQUIRE(y[j] == 12345.0f); // nothing written past the row
    }
  }
}

TEST_CASE("channels-last depthwise row kernel matches a naive sum on every instruction set",
          "[conv]") {
  // The 3x3 and 5x5 windows at stride 1 and 2 run unrolled, in blocks of up to 16 columns and
  // 4 vectors of channels; the others (7x7, dilated) tap by tap. Rows wide enough for every
  // block size, channel counts around each vector width and block, a part of the channels,
  // every epilogue the kernel applies.
  std::mt19937 rng(29);
  enum Finish { None, Clamp, Silu, HardSwish };
  for (CpuIsa isa : runnableIsas())
    for (auto [kernel, stride, dilation] : {std::array<int64_t, 3>{3, 1, 1}, {3, 2, 1},
                                            {5, 1, 1}, {5, 2, 1}, {7, 1, 1}, {3, 1, 2}})
      for (int64_t channels : {1, 5, 16, 24, 40, 72, 120, 200})
        for (int64_t inWidth : {1, 4, 9, 23, 40}) {
          const int64_t pad = randomInt(rng, 0, (kernel - 1) * dilation / 2);
          const int64_t outWidth =
              (inWidth + 2 * pad - (kernel - 1) * dilation - 1) / stride + 1;
          if (outWidth <= 0)
            continue;
          const int64_t inHeight = 3, firstRow = randomInt(rng, -2, 1);
          const bool withBias = randomInt(rng, 0, 1), withResidual = randomInt(rng, 0, 1);
          const Finish finish = Finish(randomInt(rng, 0, 3));
          // A group of whole 64-channel blocks from the start, or the rest to the end.
          int64_t channelBegin = 0, channelEnd = channels;
          if (channels > 64 && randomInt(rng, 0, 1))
            (randomInt(rng, 0, 1) ? channelEnd : channelBegin) = 64;
          std::vector<float> x = randomFloats(rng, inHeight * inWidth * channels);
          std::vector<float> w = randomFloats(rng, kernel * kernel * channels);
          std::vector<float> bias = randomFloats(rng, channels);
          std::vector<float> residual = randomFloats(rng, outWidth * channels);
          std::vector<float> y(size_t(outWidth * channels + 8), 12345.0f);
          const float lo = -0.5f, hi = 0.75f;
          depthwiseNhwcRowOn(
              isa, {x.data(), inHeight, inWidth, channels, channelBegin, channelEnd, w.data(),
                    withBias ? bias.data() : nullptr, withResidual ? residual.data() : nullptr,
                    y.data(), outWidth, kernel, kernel, firstRow, stride, pad, dilation,
                    dilation, finish == Clamp, lo, hi, finish == Silu || finish == HardSwish,
                    finish == Silu ? MathFunction::Silu : MathFunction::HardSwish});
          std::vector<float> got;
          std::vector<double> want, scale;
          for (int64_t o = 0; o < outWidth; ++o)
            for (int64_t c = 0; c < channels; ++c) {
              if (c < channelBegin || c >= channelEnd) {
                REQUIRE(y[o * channels + c] == 12345.0f); // channels outside the part
                continue;
              }
              double sum = withBias ? bias[c] : 0.0, size = std::fabs(sum);
              for (int64_t k1 = 0; k1 < kernel; ++k1)
                for (int64_t k2 = 0; k2 < kernel; ++k2) {
                  const int64_t row = firstRow + k1 * dilation;
                  const int64_t column = o * stride - pad + k2 * dilation;
                  if (row < 0 || row >= inHeight || column < 0 || column >= inWidth)
                    continue;
                  const double term = double(w[(k1 * kernel + k2) * channels + c]) *
                                      x[(row * inWidth + column) * channels + c];
                  sum += term;
                  size += std::fabs(term);
                }
              if (withResidual) {
                sum += residual[o * channels + c];
                size += std::fabs(residual[o * channels + c]);
              }
              if (finish == Clamp)
                sum = std::min<double>(hi, std::max<double>(lo, sum));
              else if (finish == Silu)
                sum = sum / (1.0 + std::exp(-sum));
              else if (finish == HardSwish)
                sum = sum * std::min(1.0, std::max(0.0, sum / 6.0 + 0.5));
              got.push_back(y[o * channels + c]);
              want.push_back(sum);
              scale.push_back(size);
            }
          INFO("isa " << cpuIsaName(isa) << " kernel " << kernel << " stride " << stride
                      << " dilation " << dilation << " channels " << channelBegin << ".."
                      << channelEnd << " of " << channels << " width " << inWidth << " pad "
                      << pad << " first row " << firstRow << " finish " << finish);
          requireClose(got, want, 1e-5, 1e-6, &scale);
          for (size_t j = size_t(outWidth * channels); j < y.size(); ++j)
            REQUIRE(y[j] == 12345.0f); // nothing written past the row
        }
}

TEST_CASE("channels-last pointwise kernel: the GEMM-then-epilogue bits on every instruction set",
          "[conv]") {
  std::mt19937 rng(17);
  for (CpuIsa isa : runnableIsas()) {
    // Around each instruction set's tile (6 or 12 pixels, 8, 16 or 32 channels) and the
    // panel of 32 columns; k up to the one block the kernel reads.
    for (int64_t rows : {1, 5, 6, 7, 12, 13, 25, 96})
      for (int64_t n : {1, 7, 8, 9, 16, 17, 32, 33, 72})
        for (int64_t k : {1, 3, 16, 24, 256}) {
          const bool withBias = randomInt(rng, 0, 1), withResidual = randomInt(rng, 0, 1);
          const bool clamp = randomInt(rng, 0, 1);
          std::vector<float> x = randomFloats(rng, rows * k), w = randomFloats(rng, k * n);
          std::vector<float> bias = randomFloats(rng, n), residual = randomFloats(rng, rows * n);
          std::vector<float> packed(packedGemmBBytes(k, n) / sizeof(float));
          packGemmB(false, k, n, w.data(), n, packed.data());
          const float lo = -0.5f, hi = 0.75f;
          std::vector<float> y(size_t(rows * n + 8), 12345.0f);
          pointwiseNhwcOn(isa, {x.data(), rows, k, n, n, packed.data(),
                                withBias ? bias.data() : nullptr,
                                withResidual ? residual.data() : nullptr, y.data(), clamp, lo,
                                hi});
          // The path it replaces: the GEMM, then bias, residual and clamp per element.
          std::vector<float> want(size_t(rows * n));
          sgemmOn(isa, {false, false, rows, n, k, 1.0f, x.data(), k, nullptr, 0, 0.0f,
                        want.data(), n, {}, {packed.data(), int64_t(packed.size()) / k, 0}, {}});
          std::vector<double> reference(want.size()), scale(want.size());
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < n; ++j) {
              float &v = want[i * n + j];
              double exact = 0.0, magnitude = 0.0;
              for (int64_t p = 0; p < k; ++p) {
                exact += double(x[i * k + p]) * w[p * n + j];
                magnitude += std::fabs(double(x[i * k + p]) * w[p * n + j]);
              }
              if (withBias) {
                v += bias[j];
                exact += bias[j];
              }
              if (withResidual) {
                v += residual[i * n + j];
                exact += residual[i * n + j];
              }
              if (clamp) {
                v = std::min(hi, std::max(lo, v));
                exact = std::min<double>(hi, std::max<double>(lo, exact));
              }
              reference[i * n + j] = exact;
              scale[i * n + j] = magnitude + 2.0;
            }
          INFO("isa " << cpuIsaName(isa) << " rows " << rows << " n " << n << " k " << k
                      << " bias " << withBias << " residual " << withResidual << " clamp "
                      << clamp);
          std::vector<float> got(y.begin(), y.begin() + rows * n);
          requireClose(got, reference, 1e-5, 1e-6, &scale);
          // One row takes the GEMM's row-times-packed-B loop, which sums in an order of its
          // own; from two rows on the GEMM runs register tiles, summed as the kernel sums.
          if (rows > 1)
            REQUIRE(got == want);
          for (int64_t j = rows * n; j < rows * n + 8; ++j)
            REQUIRE(y[j] == 12345.0f); // nothing written past the last pixel
        }
  }
}
