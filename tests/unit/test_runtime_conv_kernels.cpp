// Tests for the CPU runtime's convolution row kernels (depthwise planar and channels-last,
// channels-last over planar input, channels-last pointwise, the padded planes' products and
// phases) on every instruction set the machine runs, against naive sums in double, the GEMM
// path they replace or a scalar copy, on random shapes from fixed seeds.
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

namespace {
// The activations the channels-last row kernels apply in registers, and in double.
enum Finish { None, Clamp, Silu, HardSwish };
constexpr float kClampLo = -0.5f, kClampHi = 0.75f;
RowActivation rowActivationOf(Finish finish) {
  return {finish == Clamp, kClampLo, kClampHi, finish == Silu || finish == HardSwish,
          finish == Silu ? MathFunction::Silu : MathFunction::HardSwish};
}
double finished(Finish finish, double sum) {
  if (finish == Clamp)
    return std::min<double>(kClampHi, std::max<double>(kClampLo, sum));
  if (finish == Silu)
    return sum / (1.0 + std::exp(-sum));
  if (finish == HardSwish)
    return sum * std::min(1.0, std::max(0.0, sum / 6.0 + 0.5));
  return sum;
}
} // namespace

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
          depthwiseNhwcRowOn(
              isa, {x.data(), inHeight, inWidth, channels, channelBegin, channelEnd, w.data(),
                    withBias ? bias.data() : nullptr, withResidual ? residual.data() : nullptr,
                    y.data(), outWidth, kernel, kernel, firstRow, stride, pad, dilation,
                    dilation, rowActivationOf(finish)});
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
              got.push_back(y[o * channels + c]);
              want.push_back(finished(finish, sum));
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

TEST_CASE("planar-input row kernel matches a naive sum on every instruction set", "[conv]") {
  // Rows wide enough for the widest blocks (24 columns of one AVX-512 vector) and the last
  // block moved back; output channels around every vector width and the four-vector blocks;
  // strides 1 to 4, dilations, pads, rows whose window hangs over the image's edges; every
  // epilogue the kernel applies.
  std::mt19937 rng(29);
  for (CpuIsa isa : runnableIsas())
    for (int64_t outChannels : {1, 5, 8, 16, 24, 32, 48, 64, 72, 130})
      for (int64_t inWidth : {1, 6, 23, 57, 90}) {
        const int64_t channels = randomInt(rng, 1, kMaxPlanarInputChannels);
        const int64_t kernel = randomInt(rng, 1, 7), stride = randomInt(rng, 1, 4);
        const int64_t dilation = randomInt(rng, 1, 2);
        const int64_t pad = randomInt(rng, 0, (kernel - 1) * dilation);
        const int64_t outWidth = (inWidth + 2 * pad - (kernel - 1) * dilation - 1) / stride + 1;
        if (outWidth <= 0)
          continue;
        const int64_t inHeight = 4, firstRow = randomInt(rng, -3, 2);
        const bool withBias = randomInt(rng, 0, 1), withResidual = randomInt(rng, 0, 1);
        const Finish finish = Finish(randomInt(rng, 0, 3));
        std::vector<float> x = randomFloats(rng, channels * inHeight * inWidth);
        // Packed: channels x kernel x kernel x outChannels.
        std::vector<float> w = randomFloats(rng, channels * kernel * kernel * outChannels);
        std::vector<float> bias = randomFloats(rng, outChannels);
        std::vector<float> residual = randomFloats(rng, outWidth * outChannels);
        std::vector<float> y(size_t(outWidth * outChannels + 8), 12345.0f);
        planarInputRowOn(isa, {x.data(), channels, inHeight, inWidth, w.data(),
                               withBias ? bias.data() : nullptr,
                               withResidual ? residual.data() : nullptr, y.data(), outChannels,
                               outWidth, kernel, kernel, firstRow, stride, pad, dilation,
                               dilation, rowActivationOf(finish)});
        std::vector<double> want, scale;
        for (int64_t o = 0; o < outWidth; ++o)
          for (int64_t m = 0; m < outChannels; ++m) {
            double sum = withBias ? bias[m] : 0.0, size = std::fabs(sum);
            for (int64_t c = 0; c < channels; ++c)
              for (int64_t k1 = 0; k1 < kernel; ++k1)
                for (int64_t k2 = 0; k2 < kernel; ++k2) {
                  const int64_t row = firstRow + k1 * dilation;
                  const int64_t column = o * stride - pad + k2 * dilation;
                  if (row < 0 || row >= inHeight || column < 0 || column >= inWidth)
                    continue;
                  const double term =
                      double(w[((c * kernel + k1) * kernel + k2) * outChannels + m]) *
                      x[(c * inHeight + row) * inWidth + column];
                  sum += term;
                  size += std::fabs(term);
                }
            if (withResidual) {
              sum += residual[o * outChannels + m];
              size += std::fabs(residual[o * outChannels + m]);
            }
            want.push_back(finished(finish, sum));
            scale.push_back(size);
          }
        INFO("isa " << cpuIsaName(isa) << " channels " << channels << " -> " << outChannels
                    << " kernel " << kernel << " stride " << stride << " dilation " << dilation
                    << " width " << inWidth << " pad " << pad << " first row " << firstRow
                    << " finish " << finish);
        requireClose(std::vector<float>(y.begin(), y.begin() + outWidth * outChannels), want, 1e-5,
                     1e-6, &scale);
        for (size_t j = size_t(outWidth * outChannels); j < y.size(); ++j)
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

TEST_CASE("the padded-plane kernel finishes its products into y on every instruction set",
          "[conv]") {
  std::mt19937 rng(21);
  // Padded rows (phaseCols) wider than the output's, so vectors of positions cross rows and
  // padding columns: a stem's band (113 of 112), rows shorter than a vector (a 5x7 band),
  // one column a row, a partial last panel (11 and 3 output channels); with and without
  // bias, residual and clamp.
  struct Case {
    int64_t channels, taps, outChannels, rows, cols, phaseCols;
    bool bias, residual, clamp;
  };
  for (const Case &c :
       {Case{3, 9, 16, 14, 112, 113, true, false, true}, Case{5, 4, 11, 3, 5, 7, false, true, true},
        Case{2, 9, 8, 7, 7, 9, true, true, false}, Case{4, 1, 3, 2, 1, 2, true, false, false},
        Case{1, 25, 24, 9, 30, 32, false, false, true}}) {
    std::vector<int64_t> tapOffsets;
    for (int64_t t = 0; t < c.taps; ++t)
      tapOffsets.push_back(t / 3 * c.phaseCols + t % 3);
    const int64_t positions = c.rows * c.phaseCols;
    const int64_t channelStride = tapOffsets.back() + positions + kPlaneConvSlack;
    const std::vector<float> input = randomFloats(rng, c.channels * channelStride);
    const int64_t k = c.channels * c.taps, panelFloats = k * kPlaneConvRows;
    const int64_t panels = (c.outChannels + kPlaneConvRows - 1) / kPlaneConvRows;
    const std::vector<float> packed = randomFloats(rng, panels * panelFloats);
    auto weight = [&](int64_t o, int64_t kk) {
      return packed[size_t(o / kPlaneConvRows * panelFloats + kk * kPlaneConvRows +
                           o % kPlaneConvRows)];
    };
    // Channels of y apart by more than their rows x cols: the gap must stay untouched.
    const int64_t yStride = c.rows * c.cols + 5;
    const std::vector<float> bias = randomFloats(rng, c.outChannels);
    const std::vector<float> residual = randomFloats(rng, c.outChannels * yStride);
    const float lo = -0.5f, hi = 0.75f, unwritten = 1234.5f;
    for (CpuIsa isa : runnableIsas()) {
      INFO(cpuIsaName(isa) << ": " << c.outChannels << " channels of " << c.rows << "x"
                           << c.cols << " in rows of " << c.phaseCols);
      std::vector<float> y(size_t(c.outChannels * yStride), unwritten);
      planeConvOn(isa, {input.data(), c.channels, channelStride, tapOffsets.data(), c.taps,
                        packed.data(), c.outChannels,
                        {y.data(), yStride, c.rows, c.cols, c.phaseCols,
                         c.bias ? bias.data() : nullptr, c.residual ? residual.data() : nullptr,
                         c.clamp, lo, hi}});
      double worst = 0.0;
      int64_t wrongGaps = 0;
      for (int64_t o = 0; o < c.outChannels; ++o) {
        for (int64_t r = 0; r < c.rows; ++r)
          for (int64_t col = 0; col < c.cols; ++col) {
            double want = 0.0;
            for (int64_t ch = 0; ch < c.channels; ++ch)
              for (int64_t t = 0; t < c.taps; ++t)
                want += double(weight(o, ch * c.taps + t)) *
                        input[size_t(ch * channelStride + tapOffsets[size_t(t)] +
                                     r * c.phaseCols + col)];
            const int64_t at = o * yStride + r * c.cols + col;
            want += (c.bias ? bias[size_t(o)] : 0.0) + (c.residual ? residual[size_t(at)] : 0.0);
            if (c.clamp)
              want = std::min<double>(hi, std::max<double>(lo, want));
            worst = std::max(worst, std::fabs(want - y[size_t(at)]));
          }
        for (int64_t gap = c.rows * c.cols; gap < yStride; ++gap)
          wrongGaps += y[size_t(o * yStride + gap)] != unwritten;
      }
      CHECK(worst <= 1e-5);
      CHECK(wrongGaps == 0);
    }
  }
}

TEST_CASE("the padded planes' phases hold every input element read, on every instruction set",
          "[conv]") {
  std::mt19937 rng(23);
  // RegNet's strided 14x14 band (rows of one vector pair), odd maps, rows wider than two
  // AVX-512 vectors with a 7x7 stem's padding, phase rows narrower than the input's columns,
  // bands inside the plane and past its end (rows zeroed), stride 1.
  struct Case {
    int64_t stride, inRows, inCols, padLeft, firstRow, phaseRows, phaseCols;
  };
  for (const Case &c : {Case{2, 28, 28, 1, -1, 15, 15}, Case{2, 13, 13, 0, 0, 7, 7},
                        Case{2, 19, 71, 3, -3, 13, 39}, Case{2, 20, 20, 1, -1, 11, 6},
                        Case{2, 21, 9, 2, 7, 4, 7}, Case{1, 9, 37, 2, -2, 13, 41},
                        Case{1, 9, 5, 1, 5, 8, 7}, Case{1, 6, 40, 0, 0, 6, 33}}) {
    const int64_t channels = 3, inPlane = c.inRows * c.inCols + 3;
    const int64_t phaseFloats = c.phaseRows * c.phaseCols + 5;
    const int64_t channelFloats = c.stride * c.stride * phaseFloats + 2;
    const std::vector<float> x = randomFloats(rng, channels * inPlane);
    const float untouched = 7777.0f;
    for (CpuIsa isa : runnableIsas()) {
      INFO(cpuIsaName(isa) << ": stride " << c.stride << ", " << c.inRows << "x" << c.inCols
                           << " from row " << c.firstRow << " into " << c.phaseRows << "x"
                           << c.phaseCols);
      std::vector<float> planes(size_t(channels * channelFloats), untouched);
      planePhasesOn(isa, {x.data(), channels, inPlane, c.inRows, c.inCols, c.stride, c.firstRow,
                          c.padLeft, planes.data(), c.phaseRows, c.phaseCols, phaseFloats,
                          channelFloats});
      int64_t wrong = 0;
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t phase = 0; phase < c.stride * c.stride; ++phase) {
          const float *got = planes.data() + ch * channelFloats + phase * phaseFloats;
          for (int64_t qy = 0; qy < c.phaseRows; ++qy)
            for (int64_t qx = 0; qx < c.phaseCols; ++qx) {
              const int64_t iy = c.firstRow + phase / c.stride + qy * c.stride;
              const int64_t ix = qx * c.stride + phase % c.stride - c.padLeft;
              float want = untouched; // a padding column, zeroed before
              if (iy < 0 || iy >= c.inRows)
                want = 0.0f;
              else if (ix >= 0 && ix < c.inCols)
                want = x[size_t(ch * inPlane + iy * c.inCols + ix)];
              wrong += got[qy * c.phaseCols + qx] != want;
            }
          for (int64_t i = c.phaseRows * c.phaseCols; i < phaseFloats; ++i)
            wrong += got[i] != untouched;
        }
      CHECK(wrong == 0);
    }
  }
}
