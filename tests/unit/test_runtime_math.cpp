// Tests for the vector math (runtime/vector_math.h) against double-precision references:
// the maximum error in ulps over a sweep of the whole float range and dense sweeps around
// each function's branch points and range limits, the special values docs/kernels.md
// promises, and the same bits on AVX2 and AVX-512, wherever an element sits in the array.
#include "dlc_kernels.h"
#include "gemm.h"
#include "runtime_test_util.h"
#include "scalar_ops.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace dlc::rt;

namespace {

struct MathCase {
  MathFunction function;
  UnaryKind kind; // the unary op computed by it
  const char *name;
  double (*reference)(double);
  double maxUlps; // docs/kernels.md, "Transcendental functions"
  std::vector<double> branchPoints;
};

const std::vector<MathCase> &mathCases() {
  static const std::vector<MathCase> cases = {
      {MathFunction::Exp, UnaryKind::Exp, "exp", [](double x) { return std::exp(x); }, 1.0,
       {0.0, 88.7228394, -87.3365479, -103.972084, 0.34657359}},
      {MathFunction::Log, UnaryKind::Log, "log", [](double x) { return std::log(x); }, 1.0,
       {1.0, 1.41421356, 0.70710678, 1.17549435e-38, 2.0}},
      {MathFunction::Tanh, UnaryKind::Tanh, "tanh", [](double x) { return std::tanh(x); }, 1.5,
       {0.625, -0.625, 9.0, 0.0}},
      {MathFunction::Sigmoid, UnaryKind::Sigmoid, "sigmoid",
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 2.5, {0.0, -87.0, 17.0, -103.0}},
      {MathFunction::Erf, UnaryKind::Erf, "erf", [](double x) { return std::erf(x); }, 2.0,
       {1.0, -1.0, 3.92, 0.0}},
  };
  return cases;
}

float fromBits(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// |got - want| in units of the float spacing at want (2^-149 in the subnormal range); a
// reference beyond the float range must give the infinity it rounds to.
double ulpError(float got, double want) {
  if (std::isnan(want))
    return std::isnan(got) ? 0.0 : std::numeric_limits<double>::infinity();
  float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got) || std::isnan(got))
    return got == rounded ? 0.0 : std::numeric_limits<double>::infinity();
  int exponent;
  std::frexp(std::fabs(want), &exponent);
  double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(double(got) - want) / ulp;
}

// Every 257th float bit pattern (all signs, exponents and both NaN kinds), and the 2^16
// floats on either side of each branch point.
std::vector<float> sweepInputs(const MathCase &c) {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 257)
    inputs.push_back(fromBits(uint32_t(bits)));
  constexpr int64_t kNear = 1 << 16;
  for (double point : c.branchPoints) {
    float p = float(point);
    uint32_t magnitude;
    std::memcpy(&magnitude, &p, sizeof magnitude);
    magnitude &= 0x7fffffffu;
    for (int64_t k = -kNear; k <= kNear; ++k) {
      int64_t bits = int64_t(magnitude) + k;
      // Across zero: the same magnitudes with the other sign.
      uint32_t sign = (bits < 0) != (point < 0) ? 0x80000000u : 0u;
      inputs.push_back(fromBits(uint32_t(bits < 0 ? -bits : bits) | sign));
    }
  }
  return inputs;
}

} // namespace

TEST_CASE("vector math: error in ulps over the float range", "[math]") {
  for (const MathCase &c : mathCases()) {
    std::vector<float> x = sweepInputs(c), y(x.size());
    for (CpuIsa isa : runnableIsas()) {
      mathF32On(isa, c.function, x.data(), y.data(), int64_t(x.size()));
      double worst = 0;
      float worstAt = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        double error = ulpError(y[i], c.reference(double(x[i])));
        if (!(error <= worst)) {
          worst = error;
          worstAt = x[i];
        }
      }
      INFO(c.name << " on " << cpuIsaName(isa) << ": " << worst << " ulps at " << worstAt
                  << " (bound " << c.maxUlps << ")");
      CHECK(worst <= c.maxUlps);
    }
  }
}

TEST_CASE("vector math: special values", "[math]") {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN(),
              tiny = std::numeric_limits<float>::denorm_min();
  struct Expect {
    MathFunction function;
    float x, want; // want NaN: any NaN
  };
  const Expect expects[] = {
      {MathFunction::Exp, inf, inf},       {MathFunction::Exp, -inf, 0.0f},
      {MathFunction::Exp, 88.73f, inf},    {MathFunction::Exp, -104.0f, 0.0f},
      {MathFunction::Exp, -0.0f, 1.0f},    {MathFunction::Exp, nan, nan},
      {MathFunction::Log, 0.0f, -inf},     {MathFunction::Log, -0.0f, -inf},
      {MathFunction::Log, -1.0f, nan},     {MathFunction::Log, -inf, nan},
      {MathFunction::Log, inf, inf},       {MathFunction::Log, 1.0f, 0.0f},
      {MathFunction::Log, nan, nan},       {MathFunction::Log, tiny, float(std::log(double(tiny)))},
      {MathFunction::Tanh, inf, 1.0f},     {MathFunction::Tanh, -inf, -1.0f},
      {MathFunction::Tanh, -0.0f, -0.0f},  {MathFunction::Tanh, nan, nan},
      {MathFunction::Sigmoid, inf, 1.0f},  {MathFunction::Sigmoid, -inf, 0.0f},
      {MathFunction::Sigmoid, 0.0f, 0.5f}, {MathFunction::Sigmoid, nan, nan},
      {MathFunction::Erf, inf, 1.0f},      {MathFunction::Erf, -inf, -1.0f},
      {MathFunction::Erf, -0.0f, -0.0f},   {MathFunction::Erf, 5.0f, 1.0f},
      {MathFunction::Erf, nan, nan},
  };
  for (CpuIsa isa : runnableIsas()) {
    for (const Expect &e : expects) {
      float y = 0;
      mathF32On(isa, e.function, &e.x, &y, 1);
      INFO(cpuIsaName(isa) << " function " << int(e.function) << " of " << e.x << " gave " << y);
      if (std::isnan(e.want)) {
        CHECK(std::isnan(y));
      } else {
        CHECK(y == e.want);
        CHECK(std::signbit(y) == std::signbit(e.want));
      }
    }
  }
}

TEST_CASE("vector math: the same bits on every fused-multiply-add set, at any position",
          "[math]") {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 65537)
    x.push_back(fromBits(uint32_t(bits)));
  for (const MathCase &c : mathCases()) {
    for (CpuIsa isa : runnableIsas()) {
      INFO(c.name << " on " << cpuIsaName(isa));
      std::vector<float> whole(x.size());
      mathF32On(isa, c.function, x.data(), whole.data(), int64_t(x.size()));
      // Odd offsets and lengths: elements in partial vectors get what full vectors give.
      for (int64_t offset : {1, 3, 7, 13}) {
        std::vector<float> part(37);
        mathF32On(isa, c.function, x.data() + offset, part.data(), 37);
        CHECK(std::memcmp(part.data(), whole.data() + offset, sizeof(float) * 37) == 0);
      }
      if (isa == CpuIsa::Avx512) {
        std::vector<float> avx2(x.size());
        mathF32On(CpuIsa::Avx2, c.function, x.data(), avx2.data(), int64_t(x.size()));
        CHECK(std::memcmp(avx2.data(), whole.data(), sizeof(float) * x.size()) == 0);
      }
      // The unary op of the same kind is this function.
      std::vector<float> viaUnary(x.size());
      unaryOn(isa, c.kind, x.data(), viaUnary.data(), int64_t(x.size()));
      CHECK(std::memcmp(viaUnary.data(), whole.data(), sizeof(float) * x.size()) == 0);
    }
  }
}

TEST_CASE("vector math: SiLU is x times the sigmoid, bit for bit, and the conv epilogue's",
          "[math]") {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 65537)
    x.push_back(fromBits(uint32_t(bits)));
  const int64_t n = int64_t(x.size());
  for (CpuIsa isa : runnableIsas()) {
    INFO(cpuIsaName(isa));
    std::vector<float> sigmoid(x.size()), silu(x.size());
    mathF32On(isa, MathFunction::Sigmoid, x.data(), sigmoid.data(), n);
    mathF32On(isa, MathFunction::Silu, x.data(), silu.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
      const float product = x[i] * sigmoid[i];
      INFO("x = " << x[i]);
      if (std::isnan(product))
        CHECK(std::isnan(silu[i]));
      else
        CHECK(std::memcmp(&product, &silu[i], sizeof product) == 0);
    }
  }
  std::vector<float> epilogue = x, silu(x.size());
  applyEpilogue({Activation::Silu, 0.0f, 0.0f, 0.0f}, epilogue.data(), n);
  mathF32(MathFunction::Silu, x.data(), silu.data(), n);
  CHECK(std::memcmp(epilogue.data(), silu.data(), sizeof(float) * x.size()) == 0);
}

TEST_CASE("the HardSwish epilogue is the imported HardSigmoid's steps and the Mul, bit for bit",
          "[math]") {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 65537)
    x.push_back(fromBits(uint32_t(bits)));
  // Values around the gate's corners (-3, 3) and zero, where the rounding of each step shows.
  for (float v = -3.5f; v <= 3.5f; v += 0.001f)
    x.push_back(v);
  std::vector<float> hardSwish = x;
  const int64_t n = int64_t(x.size());
  applyEpilogue({Activation::HardSwish, 0.0f, 0.0f, 0.0f}, hardSwish.data(), n);
  for (size_t i = 0; i < x.size(); ++i) {
    // Each step rounded on its own, as the unfused Mul, Add and Clip kernels round it.
    volatile float scaled = float(1.0 / 6.0) * x[i];
    volatile float linear = scaled + 0.5f;
    const float product = x[i] * scalar::clampValue(linear, 0.0f, 1.0f);
    INFO("x = " << x[i]);
    if (std::isnan(product))
      CHECK(std::isnan(hardSwish[i]));
    else
      CHECK(std::memcmp(&product, &hardSwish[i], sizeof product) == 0);
  }
}

TEST_CASE("layer norm and RMSNorm rows match the formula in double on every instruction set",
          "[math][reduce]") {
  std::mt19937 rng(37);
  // Row lengths around the vector widths and groups, a transformer's 384; rows offset by a
  // large mean (two passes keep the variance's precision) and rows with no spread at all.
  for (int64_t n : {1, 3, 16, 17, 40, 384}) {
    const int64_t rows = 4;
    std::vector<float> x = randomFloats(rng, rows * n, -2.0f, 2.0f);
    for (int64_t j = 0; j < n; ++j) {
      x[size_t(n + j)] += 1000.0f;
      x[size_t(2 * n + j)] = 3.0f;
    }
    std::vector<float> scale = randomFloats(rng, n, 0.5f, 1.5f), bias = randomFloats(rng, n);
    for (auto [affine, rms] : {std::pair{false, false}, std::pair{true, false},
                               std::pair{false, true}, std::pair{true, true}}) {
      std::vector<double> expected(x.size());
      for (int64_t r = 0; r < rows; ++r) {
        // RMSNorm: the "variance" is the mean square of x itself.
        double mean = 0, variance = 0;
        for (int64_t j = 0; j < n && !rms; ++j)
          mean += x[size_t(r * n + j)];
        mean /= double(n);
        for (int64_t j = 0; j < n; ++j)
          variance += (x[size_t(r * n + j)] - mean) * (x[size_t(r * n + j)] - mean);
        variance /= double(n);
        for (int64_t j = 0; j < n; ++j) {
          double v = (x[size_t(r * n + j)] - mean) / std::sqrt(variance + 1e-5);
          expected[size_t(r * n + j)] = affine ? v * scale[size_t(j)] + bias[size_t(j)] : v;
        }
      }
      // Normalized values are O(1) and a few roundings off; the offset row's mean carries
      // the rounding of sums near 1000 n, so its values are ten times less close.
      std::vector<double> tolerance(x.size(), 1.0);
      std::fill(tolerance.begin() + n, tolerance.begin() + 2 * n, 10.0);
      for (CpuIsa isa : runnableIsas()) {
        INFO("n " << n << " affine " << affine << " rms " << rms << " " << cpuIsaName(isa));
        std::vector<float> y(x.size(), NAN);
        layerNormRowsOn(isa, {x.data(), affine ? scale.data() : nullptr,
                              affine ? bias.data() : nullptr, y.data(), rows, n, 1e-5f, rms});
        requireClose(y, expected, 2e-5, 0.0, &tolerance);
      }
    }
  }
}

TEST_CASE("softmax rows: the same bits on AVX2 and AVX-512, NaN and infinities as the formula",
          "[math][reduce]") {
  std::mt19937 rng(21);
  for (int64_t n : {1, 5, 16, 17, 40, 129, 1500}) {
    std::vector<float> x = randomFloats(rng, 3 * n, -30.0f, 30.0f);
    for (bool log : {false, true}) {
      INFO("n " << n << " log " << log);
      std::vector<float> avx2(x.size()), avx512(x.size());
      for (CpuIsa isa : runnableIsas()) {
        std::vector<float> y(x.size());
        softmaxRowsOn(isa, x.data(), y.data(), 3, n, log, nullptr);
        // Rows are independent: a row alone gives the bits it gets among others.
        std::vector<float> second(size_t(n), 0.0f);
        softmaxRowsOn(isa, x.data() + n, second.data(), 1, n, log, nullptr);
        CHECK(std::memcmp(second.data(), y.data() + n, sizeof(float) * size_t(n)) == 0);
        (isa == CpuIsa::Avx512 ? avx512 : avx2) = y;
      }
      if (selectedCpuIsa() == CpuIsa::Avx512)
        CHECK(std::memcmp(avx2.data(), avx512.data(), sizeof(float) * x.size()) == 0);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (CpuIsa isa : runnableIsas()) {
    INFO(cpuIsaName(isa));
    // A NaN anywhere makes its row NaN; -inf entries get 0 (and -inf for log-softmax); a
    // row of -inf only, like one with +inf, has no defined softmax: NaN.
    std::vector<float> x = {1.0f,  NAN,  2.0f,  3.0f,  // NaN row
                            -inf,  0.0f, -inf,  0.0f,  // two zeros share the mass
                            -inf,  -inf, -inf,  -inf,  // nothing finite
                            1.0f,  inf,  2.0f,  3.0f}; // +inf
    std::vector<float> y(x.size()), logY(x.size());
    softmaxRowsOn(isa, x.data(), y.data(), 4, 4, false, nullptr);
    softmaxRowsOn(isa, x.data(), logY.data(), 4, 4, true, nullptr);
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(std::isnan(y[i]));
      CHECK(std::isnan(logY[i]));
      CHECK(std::isnan(y[8 + i]));
      CHECK(std::isnan(y[12 + i]));
    }
    CHECK(y[4] == 0.0f);
    CHECK(y[5] == 0.5f);
    CHECK(logY[4] == -inf);
    CHECK(logY[5] == Approx(std::log(0.5f)));
  }
}
