// Tests for the CPU runtime: every kernel against a naive reference written independently here
// (computed in double where it accumulates), on random shapes from fixed seeds, plus the .npy
// reader and writer.
#include "dlc_npy.h"
#include "dlc_runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace dlc::rt;

namespace {

using Shape = std::vector<int64_t>;

int64_t randomInt(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

std::vector<float> randomFloats(std::mt19937 &rng, int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(rng);
  return v;
}

int64_t numElements(const Shape &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

// Row-major multi-index of linear index `i`.
Shape unravel(int64_t i, const Shape &shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t ravel(const Shape &idx, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + idx[d];
  return i;
}

std::string describe(const Shape &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t d = 0; d < shape.size(); ++d)
    os << (d ? "," : "") << shape[d];
  os << ']';
  return os.str();
}

// Requires |actual[i] - expected[i]| <= rel * max(|expected[i]|, scale[i]) + abs for all i
// (scale defaults to 0), and NaN exactly where expected is NaN.
template <typename T>
void requireClose(const std::vector<T> &actual, const std::vector<double> &expected, double rel,
                  double abs = 0.0, const std::vector<double> *scale = nullptr) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double got = static_cast<double>(actual[i]), want = expected[i];
    if (std::isnan(want)) {
      if (!std::isnan(got))
        FAIL("element " << i << ": got " << got << ", expected NaN");
      continue;
    }
    if (std::isinf(want)) {
      if (got != want)
        FAIL("element " << i << ": got " << got << ", expected " << want);
      continue;
    }
    double mag = std::max(std::fabs(want), scale ? (*scale)[i] : 0.0);
    double tol = rel * mag + abs;
    if (!(std::fabs(got - want) <= tol))
      FAIL("element " << i << ": got " << got << ", expected " << want << " (tolerance " << tol
                      << ")");
  }
}

template <typename T>
void requireEqual(const std::vector<T> &actual, const std::vector<T> &expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    if (!(actual[i] == expected[i]))
      FAIL("element " << i << ": got " << +actual[i] << ", expected " << +expected[i]);
}

} // namespace

//===----------------------------------------------------------------------------------------===//
// Status and allocation
//===----------------------------------------------------------------------------------------===//

TEST_CASE("dtype sizes and status messages", "[runtime]") {
  CHECK(dlc_dtype_size(DLC_F32) == 4);
  CHECK(dlc_dtype_size(DLC_F64) == 8);
  CHECK(dlc_dtype_size(DLC_I32) == 4);
  CHECK(dlc_dtype_size(DLC_I64) == 8);
  CHECK(dlc_dtype_size(DLC_U8) == 1);
  CHECK(dlc_dtype_size(DLC_I8) == 1);
  CHECK(dlc_dtype_size(DLC_BOOL) == 1);
  CHECK(dlc_dtype_size(static_cast<dlc_dtype>(42)) == 0);
  CHECK(std::string(dlc_status_message(DLC_OK)) == "ok");
  CHECK(std::string(dlc_status_message(DLC_INVALID_ARGUMENT)) == "invalid argument");
  CHECK(std::string(dlc_status_message(DLC_OUT_OF_MEMORY)) == "out of memory");
  CHECK(std::string(dlc_status_message(static_cast<dlc_status>(99))) == "unknown status");
}

TEST_CASE("alignedAlloc returns 64-byte aligned, usable memory", "[runtime]") {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{100000}}) {
    void *p = alignedAlloc(bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    std::memset(p, 0xab, bytes);
    alignedFree(p);
  }
  CHECK(alignedAlloc(SIZE_MAX - 8) == nullptr);
  alignedFree(nullptr);
}

//===----------------------------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------------------------===//

namespace {

double unaryReference(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::Relu:
    return x > 0 ? x : 0;
  case UnaryKind::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Abs:
    return x < 0 ? -x : x;
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::Reciprocal:
    return 1 / x;
  case UnaryKind::Floor:
    return std::floor(x);
  case UnaryKind::Ceil:
    return std::ceil(x);
  case UnaryKind::Softplus:
    return std::log1p(std::exp(x));
  }
  return 0;
}

} // namespace

TEST_CASE("unary kernels match double-precision formulas", "[elementwise]") {
  std::mt19937 rng(1);
  const UnaryKind kinds[] = {UnaryKind::Relu,       UnaryKind::Sigmoid, UnaryKind::Tanh,
                             UnaryKind::Exp,        UnaryKind::Log,     UnaryKind::Sqrt,
                             UnaryKind::Neg,        UnaryKind::Abs,     UnaryKind::Erf,
                             UnaryKind::Reciprocal, UnaryKind::Floor,   UnaryKind::Ceil,
                             UnaryKind::Softplus};
  for (UnaryKind kind : kinds) {
    INFO("kind " << static_cast<int>(kind));
    bool positiveOnly =
        kind == UnaryKind::Log || kind == UnaryKind::Sqrt || kind == UnaryKind::Reciprocal;
    std::vector<float> x = randomFloats(rng, 1001, positiveOnly ? 0.01f : -6.0f, 6.0f);
    if (kind == UnaryKind::Sigmoid || kind == UnaryKind::Softplus || kind == UnaryKind::Tanh) {
      // Far tails, where naive formulas overflow.
      for (float v : {-100.0f, -87.0f, -20.0f, 20.0f, 87.0f, 100.0f})
        x.push_back(v);
    }
    std::vector<float> y(x.size());
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = static_cast<double>(static_cast<float>(unaryReference(kind, x[i])));
    unaryF32(kind, x.data(), y.data(), static_cast<int64_t>(x.size()));
    requireClose(y, want, 2e-6, 1e-37);

    // In place.
    unaryF32(kind, x.data(), x.data(), static_cast<int64_t>(x.size()));
    requireClose(x, want, 2e-6, 1e-37);
  }
}

TEST_CASE("unary kernels handle NaN and empty input", "[elementwise]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float x[2] = {nan, -1.0f}, y[2] = {0, 0};
  unaryF32(UnaryKind::Relu, x, y, 2);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 0.0f);
  unaryF32(UnaryKind::Exp, x, y, 0);
  CHECK(y[1] == 0.0f);
}

TEST_CASE("clip and leaky relu", "[elementwise]") {
  std::mt19937 rng(2);
  std::vector<float> x = randomFloats(rng, 517, -3.0f, 3.0f);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  std::vector<double> want(x.size());

  clipF32(x.data(), y.data(), static_cast<int64_t>(x.size()), -0.5f, 1.25f);
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = std::isnan(x[i]) ? x[i] : std::min(1.25, std::max(-0.5, double(x[i])));
  requireClose(y, want, 0.0);

  leakyReluF32(x.data(), y.data(), static_cast<int64_t>(x.size()), 0.1f);
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = x[i] < 0 ? double(0.1f * x[i]) : double(x[i]);
  requireClose(y, want, 0.0);
}

namespace {

template <typename T> T binaryReference(BinaryKind kind, T a, T b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Pow:
    if constexpr (std::is_integral_v<T>) {
      T r = 1;
      for (T e = 0; e < b; ++e)
        r *= a;
      return r;
    } else {
      return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  case BinaryKind::Max:
    return a > b ? a : b;
  case BinaryKind::Min:
    return a < b ? a : b;
  }
  return 0;
}

// Operand values keep every op exact for integers and well conditioned for floats.
template <typename T> T binaryOperand(std::mt19937 &rng, BinaryKind kind, bool rhs) {
  if constexpr (std::is_integral_v<T>) {
    if (kind == BinaryKind::Pow)
      return static_cast<T>(rhs ? randomInt(rng, 0, 6) : randomInt(rng, -5, 5));
    if (kind == BinaryKind::Div && rhs) {
      T v = static_cast<T>(randomInt(rng, 1, 9));
      return randomInt(rng, 0, 1) ? v : static_cast<T>(-v);
    }
    return static_cast<T>(randomInt(rng, -50, 50));
  } else {
    std::uniform_real_distribution<T> dist(-4, 4);
    if (kind == BinaryKind::Pow)
      return rhs ? dist(rng) : std::uniform_real_distribution<T>(T(0.25), T(3))(rng);
    if (kind == BinaryKind::Div && rhs) {
      T v = std::uniform_real_distribution<T>(T(0.5), T(4))(rng);
      return randomInt(rng, 0, 1) ? v : -v;
    }
    return dist(rng);
  }
}

// A random operand shape that broadcasts to `out`: right-aligned, each dim kept or 1.
Shape broadcastableShape(std::mt19937 &rng, const Shape &out) {
  int64_t rank = randomInt(rng, 0, static_cast<int64_t>(out.size()));
  Shape shape(out.end() - rank, out.end());
  for (int64_t &d : shape)
    if (randomInt(rng, 0, 2) == 0)
      d = 1;
  return shape;
}

// Element strides of `shape` laid onto the dims of `out` (0 where broadcast).
Shape broadcastStrides(const Shape &shape, const Shape &out) {
  Shape strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = shape.size() - 1 - i, od = out.size() - 1 - i;
    strides[od] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

// NumPy broadcasting, by operand multi-index rather than strides.
int64_t broadcastSource(const Shape &outIdx, const Shape &shape) {
  Shape idx(shape.size());
  size_t lead = outIdx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    idx[d] = shape[d] == 1 ? 0 : outIdx[lead + d];
  return ravel(idx, shape);
}

template <typename T>
void checkBinaryCase(std::mt19937 &rng, BinaryKind kind, const Shape &out, const Shape &aShape,
                     const Shape &bShape) {
  INFO("kind " << static_cast<int>(kind) << " out " << describe(out) << " a " << describe(aShape)
               << " b " << describe(bShape));
  std::vector<T> a(static_cast<size_t>(numElements(aShape)));
  std::vector<T> b(static_cast<size_t>(numElements(bShape)));
  for (T &v : a)
    v = binaryOperand<T>(rng, kind, false);
  for (T &v : b)
    v = binaryOperand<T>(rng, kind, true);
  Shape aStrides = broadcastStrides(aShape, out), bStrides = broadcastStrides(bShape, out);
  std::vector<T> y(static_cast<size_t>(numElements(out)));
  binary<T>(kind, a.data(), aStrides.data(), b.data(), bStrides.data(), y.data(), out.data(),
            static_cast<int>(out.size()));
  std::vector<T> want(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    Shape idx = unravel(static_cast<int64_t>(i), out);
    want[i] =
        binaryReference(kind, a[broadcastSource(idx, aShape)], b[broadcastSource(idx, bShape)]);
  }
  if constexpr (std::is_integral_v<T>) {
    requireEqual(y, want);
  } else {
    std::vector<double> wantD(want.begin(), want.end());
    requireClose(y, wantD, kind == BinaryKind::Pow ? 1e-6 : 0.0);
  }
}

template <typename T> void checkBinaryRandom(uint32_t seed) {
  std::mt19937 rng(seed);
  const BinaryKind kinds[] = {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div,
                              BinaryKind::Pow, BinaryKind::Max, BinaryKind::Min};
  for (BinaryKind kind : kinds) {
    for (int trial = 0; trial < 40; ++trial) {
      Shape out(static_cast<size_t>(randomInt(rng, 0, 5)));
      for (int64_t &d : out)
        d = randomInt(rng, 1, 5);
      checkBinaryCase<T>(rng, kind, out, broadcastableShape(rng, out),
                         broadcastableShape(rng, out));
    }
    // The flat fast paths: equal shapes, scalar either side, row and column broadcast.
    checkBinaryCase<T>(rng, kind, {1003}, {1003}, {1003});
    checkBinaryCase<T>(rng, kind, {7, 37}, {7, 37}, {});
    checkBinaryCase<T>(rng, kind, {7, 37}, {1}, {7, 37});
    checkBinaryCase<T>(rng, kind, {9, 19}, {9, 19}, {19});
    checkBinaryCase<T>(rng, kind, {9, 19}, {9, 1}, {1, 19});
    checkBinaryCase<T>(rng, kind, {3, 1, 5, 1, 4}, {3, 1, 5, 1, 4}, {5, 1, 1});
    checkBinaryCase<T>(rng, kind, {2, 0, 3}, {2, 0, 3}, {3});
  }
}

} // namespace

TEST_CASE("binary kernels broadcast like NumPy (float)", "[elementwise]") {
  checkBinaryRandom<float>(3);
}
TEST_CASE("binary kernels broadcast like NumPy (double)", "[elementwise]") {
  checkBinaryRandom<double>(4);
}
TEST_CASE("binary kernels broadcast like NumPy (int32)", "[elementwise]") {
  checkBinaryRandom<int32_t>(5);
}
TEST_CASE("binary kernels broadcast like NumPy (int64)", "[elementwise]") {
  checkBinaryRandom<int64_t>(6);
}

TEST_CASE("binary kernels accept arbitrary operand strides", "[elementwise]") {
  // a is a 3x4 matrix read transposed; b a 4-vector broadcast down the rows of the 4x3 result.
  std::vector<float> a(12), b = {1, 2, 3, 4}, y(12);
  std::iota(a.begin(), a.end(), 0.0f);
  Shape out = {4, 3}, aStrides = {1, 4}, bStrides = {1, 0};
  binary<float>(BinaryKind::Mul, a.data(), aStrides.data(), b.data(), bStrides.data(), y.data(),
                out.data(), 2);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(y[i * 3 + j] == a[j * 4 + i] * b[i]);
}

TEST_CASE("integer binary edge cases never trap", "[elementwise]") {
  Shape shape = {6};
  Shape strides = {1};
  auto run = [&](BinaryKind kind, std::vector<int32_t> a, std::vector<int32_t> b) {
    std::vector<int32_t> y(a.size());
    Shape n = {static_cast<int64_t>(a.size())};
    binary<int32_t>(kind, a.data(), strides.data(), b.data(), strides.data(), y.data(), n.data(),
                    1);
    return y;
  };
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  CHECK(run(BinaryKind::Div, {7, -7, 0, kMin, 7, -7}, {0, 0, 0, -1, 2, 2}) ==
        std::vector<int32_t>{0, 0, 0, kMin, 3, -3});
  CHECK(run(BinaryKind::Add, {kMax, kMin}, {1, -1}) == std::vector<int32_t>{kMin, kMax});
  CHECK(run(BinaryKind::Pow, {2, 1, -1, -1, 0, 3}, {-1, -5, -3, -2, -1, 0}) ==
        std::vector<int32_t>{0, 1, -1, 1, 0, 1});
  CHECK(run(BinaryKind::Pow, {2, -3, 10}, {31, 3, 9}) ==
        std::vector<int32_t>{kMin, -27, 1000000000});

  std::vector<int64_t> a64 = {std::numeric_limits<int64_t>::min(), 5}, b64 = {-1, 0}, y64(2);
  Shape two = {2};
  binary<int64_t>(BinaryKind::Div, a64.data(), strides.data(), b64.data(), strides.data(),
                  y64.data(), two.data(), 1);
  CHECK(y64 == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0});
}

TEST_CASE("float max and min propagate NaN", "[elementwise]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {nan, 1.0f, 2.0f}, b = {1.0f, nan, 3.0f}, y(3);
  Shape strides = {1}, n = {3};
  for (BinaryKind kind : {BinaryKind::Max, BinaryKind::Min}) {
    binary<float>(kind, a.data(), strides.data(), b.data(), strides.data(), y.data(), n.data(), 1);
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(y[2] == (kind == BinaryKind::Max ? 3.0f : 2.0f));
  }
}

//===----------------------------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------------------------===//

namespace {

struct GemmCase {
  bool transA, transB;
  int64_t m, n, k;
  float alpha, beta;
};

void checkGemm(std::mt19937 &rng, const GemmCase &g) {
  INFO("transA " << g.transA << " transB " << g.transB << " m " << g.m << " n " << g.n << " k "
                 << g.k << " alpha " << g.alpha << " beta " << g.beta);
  // Leading dimensions with slack catch any reliance on packed operands.
  int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
  int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
  int64_t lda = aCols + randomInt(rng, 0, 3), ldb = bCols + randomInt(rng, 0, 3);
  int64_t ldc = g.n + randomInt(rng, 0, 3);
  std::vector<float> a = randomFloats(rng, aRows * lda), b = randomFloats(rng, bRows * ldb);
  std::vector<float> c = randomFloats(rng, g.m * ldc);
  if (g.beta == 0.0f)
    std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  std::vector<double> want(c.begin(), c.end()), scale(c.size(), 0.0);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        double av = g.transA ? a[p * lda + i] : a[i * lda + p];
        double bv = g.transB ? b[j * ldb + p] : b[p * ldb + j];
        sum += av * bv;
        mag += std::fabs(av * bv);
      }
      double prev = g.beta == 0.0f ? 0.0 : g.beta * double(c[i * ldc + j]);
      want[i * ldc + j] = g.alpha * sum + prev;
      scale[i * ldc + j] = std::fabs(g.alpha) * mag + std::fabs(prev);
    }
  }
  // Padding columns of C must keep their (possibly NaN) contents.
  sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a.data(), lda, b.data(), ldb, g.beta, c.data(),
        ldc);
  requireClose(c, want, 1e-4, 1e-6, &scale);
}

} // namespace

TEST_CASE("sgemm matches a naive product across block edges", "[linalg]") {
  std::mt19937 rng(7);
  const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 129};
  for (bool transA : {false, true}) {
    for (bool transB : {false, true}) {
      for (int trial = 0; trial < 12; ++trial) {
        GemmCase g{transA,
                   transB,
                   sizes[randomInt(rng, 0, 13)],
                   sizes[randomInt(rng, 0, 13)],
                   sizes[randomInt(rng, 0, 13)],
                   1.0f,
                   0.0f};
        const float alphas[] = {1.0f, -0.5f, 2.0f};
        const float betas[] = {0.0f, 1.0f, 0.3f};
        g.alpha = alphas[randomInt(rng, 0, 2)];
        g.beta = betas[randomInt(rng, 0, 2)];
        checkGemm(rng, g);
      }
      // Several k blocks and several row blocks of A, with ragged edges everywhere.
      checkGemm(rng, {transA, transB, 141, 75, 600, 1.0f, 0.0f});
      checkGemm(rng, {transA, transB, 67, 9, 513, -1.5f, 0.5f});
      // Matrix-vector shapes.
      checkGemm(rng, {transA, transB, 77, 1, 300, 1.0f, 0.0f});
      checkGemm(rng, {transA, transB, 1, 77, 300, 1.0f, 2.0f});
    }
  }
}

TEST_CASE("sgemm degenerate sizes", "[linalg]") {
  std::vector<float> c = {1, 2, 3, 4};
  float dummy = std::numeric_limits<float>::quiet_NaN();
  // k == 0 leaves beta * C.
  sgemm(false, false, 2, 2, 0, 1.0f, &dummy, 1, &dummy, 2, 0.5f, c.data(), 2);
  CHECK(c == std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f});
  sgemm(false, false, 2, 2, 0, 1.0f, &dummy, 1, &dummy, 2, 0.0f, c.data(), 2);
  CHECK(c == std::vector<float>{0, 0, 0, 0});
  // m == 0 or n == 0 touches nothing.
  sgemm(false, false, 0, 2, 3, 1.0f, &dummy, 3, &dummy, 2, 0.0f, &dummy, 2);
  sgemm(true, true, 2, 0, 3, 1.0f, &dummy, 2, &dummy, 3, 0.0f, &dummy, 1);
  CHECK(std::isnan(dummy));
}

TEST_CASE("batched matmul with broadcast batch offsets", "[linalg]") {
  std::mt19937 rng(8);
  const int64_t batch = 5, m = 13, n = 11, k = 21;
  std::vector<float> a = randomFloats(rng, 3 * m * k), b = randomFloats(rng, k * n);
  // A cycles through 3 matrices; B is shared by every batch.
  std::vector<int64_t> aOffsets, bOffsets(batch, 0);
  for (int64_t i = 0; i < batch; ++i)
    aOffsets.push_back((i % 3) * m * k);
  std::vector<float> c(batch * m * n);
  batchedMatmulF32(a.data(), aOffsets.data(), b.data(), bOffsets.data(), c.data(), batch, m, n, k);
  std::vector<double> want(c.size()), scale(c.size());
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          double prod = double(a[aOffsets[t] + i * k + p]) * b[p * n + j];
          sum += prod;
          mag += std::fabs(prod);
        }
        want[(t * m + i) * n + j] = sum;
        scale[(t * m + i) * n + j] = mag;
      }
  requireClose(c, want, 1e-4, 0.0, &scale);
}

//===----------------------------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------------------------===//

namespace {

// A random window over `spatialRank` trailing dims; leading unused dims are 1 with no padding,
// as the compiler emits them. `padEnd` receives the end pads.
WindowParams randomWindow(std::mt19937 &rng, int spatialRank, int64_t maxIn, int64_t maxKernel,
                          bool ceilMode, int64_t padEnd[3]) {
  WindowParams w{};
  w.batch = randomInt(rng, 1, 2);
  w.channels = randomInt(rng, 1, 3);
  for (int d = 0; d < 3; ++d) {
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    w.padBegin[d] = padEnd[d] = 0;
  }
  for (int d = 3 - spatialRank; d < 3; ++d) {
    for (;;) {
      w.kernel[d] = randomInt(rng, 1, maxKernel);
      w.stride[d] = randomInt(rng, 1, 3);
      w.dilation[d] = randomInt(rng, 1, 2);
      int64_t extent = (w.kernel[d] - 1) * w.dilation[d] + 1;
      w.padBegin[d] = randomInt(rng, 0, std::min<int64_t>(2, extent - 1));
      padEnd[d] = randomInt(rng, 0, std::min<int64_t>(2, extent - 1));
      w.in[d] = randomInt(rng, 1, maxIn);
      int64_t span = w.in[d] + w.padBegin[d] + padEnd[d] - extent;
      if (span < 0)
        continue;
      w.out[d] = (ceilMode ? (span + w.stride[d] - 1) / w.stride[d] : span / w.stride[d]) + 1;
      // ONNX drops a ceil-mode window that would start inside the end padding.
      if (ceilMode && (w.out[d] - 1) * w.stride[d] >= w.in[d] + w.padBegin[d])
        --w.out[d];
      break;
    }
  }
  return w;
}

std::string describe(const WindowParams &w, const int64_t padEnd[3]) {
  std::ostringstream os;
  os << "N" << w.batch << " C" << w.channels;
  for (int d = 0; d < 3; ++d)
    os << " | in " << w.in[d] << " out " << w.out[d] << " k " << w.kernel[d] << " s " << w.stride[d]
       << " d " << w.dilation[d] << " pad " << w.padBegin[d] << "/" << padEnd[d];
  return os.str();
}

// Input coordinate of kernel tap k for output o along dim d.
int64_t tapPosition(const WindowParams &w, int d, int64_t o, int64_t k) {
  return o * w.stride[d] - w.padBegin[d] + k * w.dilation[d];
}

void checkConv(std::mt19937 &rng, const ConvParams &p, const int64_t padEnd[3], bool withBias) {
  const WindowParams &w = p.window;
  INFO(describe(w, padEnd) << " M" << p.outChannels << " groups " << p.groups << " bias "
                           << withBias);
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2], outPlane = w.out[0] * w.out[1] * w.out[2];
  const int64_t taps = w.kernel[0] * w.kernel[1] * w.kernel[2];
  const int64_t cg = w.channels / p.groups, mg = p.outChannels / p.groups;
  std::vector<float> x = randomFloats(rng, w.batch * w.channels * inPlane);
  std::vector<float> weight = randomFloats(rng, p.outChannels * cg * taps);
  std::vector<float> bias = randomFloats(rng, p.outChannels);
  std::vector<float> y(static_cast<size_t>(w.batch * p.outChannels * outPlane));

  size_t wsBytes = convWorkspaceBytes(p);
  REQUIRE(wsBytes % sizeof(float) == 0);
  // Sentinels after the workspace detect writes past the size it asked for.
  const size_t wsFloats = wsBytes / sizeof(float);
  std::vector<float> workspace(wsFloats + 16, 12345.0f);
  convF32(p, x.data(), weight.data(), withBias ? bias.data() : nullptr, y.data(), workspace.data());
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
      p.groups = randomInt(rng, 2, 3);
      break;
    default:
      // Depthwise, with a channel multiplier of 1 or 2.
      p.groups = p.window.channels = randomInt(rng, 1, 5);
      break;
    }
    if (p.window.channels % p.groups != 0)
      p.window.channels = p.groups * randomInt(rng, 1, 3);
    p.outChannels = p.groups * randomInt(rng, 1, 2 + (p.groups == 1 ? 10 : 0));
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
  SECTION("a 1x1 window with end padding still needs im2col") {
    ConvParams p{window(1, 3, {4, 5}), 2, 1};
    p.window.out[1] = 5;
    p.window.out[2] = 7;
    const int64_t padEnd[3] = {0, 1, 2};
    CHECK(convWorkspaceBytes(p) == sizeof(float) * 3 * 5 * 7);
    checkConv(rng, p, padEnd, true);
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

    avgPoolF32(w, padEnd, false, x.data(), y.data());
    requireClose(y, poolReference(w, padEnd, PoolKind::AvgExclude, x), 1e-5, 1e-6);
    avgPoolF32(w, padEnd, true, x.data(), y.data());
    requireClose(y, poolReference(w, padEnd, PoolKind::AvgInclude, x), 1e-5, 1e-6);

  }
}

TEST_CASE("ceil-mode average pooling counts only the padded extent", "[pool]") {
  // in 5, kernel 2, stride 2, no pads, ceil mode: windows [0,2) [2,4) [4,6); the last holds one
  // element and, with no end pad, its overhang is not counted even with count_include_pad.
  WindowParams w{};
  w.batch = w.channels = 1;
  for (int d = 0; d < 3; ++d)
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
  w.in[2] = 5;
  w.out[2] = 3;
  w.kernel[2] = w.stride[2] = 2;
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
  WindowParams w{};
  w.batch = w.channels = 1;
  for (int d = 0; d < 3; ++d)
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
  w.in[2] = 4;
  w.out[2] = 2;
  w.kernel[2] = w.stride[2] = 2;
  const float x[4] = {std::numeric_limits<float>::quiet_NaN(), 1, 2, 3};
  float y[2];
  maxPoolF32(w, x, y);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 3.0f);
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

//===----------------------------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------------------------===//

TEST_CASE("softmax and log-softmax are accurate and stable", "[reduce]") {
  std::mt19937 rng(13);
  const int64_t shapes[][3] = {{1, 10, 1},  {3, 7, 1},   {2, 5, 3}, {2, 33, 70},
                               {1, 1, 130}, {4, 257, 1}, {2, 3, 64}};
  for (const auto &s : shapes) {
    for (bool log : {false, true}) {
      for (float offset : {0.0f, 1000.0f}) {
        int64_t outer = s[0], n = s[1], inner = s[2];
        INFO("outer " << outer << " n " << n << " inner " << inner << " log " << log << " offset "
                      << offset);
        // A large common offset overflows exp() unless the max is subtracted first.
        std::vector<float> x = randomFloats(rng, outer * n * inner, -10.0f, 10.0f);
        for (float &v : x)
          v += offset;
        std::vector<float> y(x.size());
        softmaxF32(x.data(), y.data(), outer, n, inner, log);
        std::vector<double> want(x.size());
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t l = 0; l < inner; ++l) {
            auto at = [&](int64_t j) { return static_cast<size_t>((o * n + j) * inner + l); };
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; ++j)
              mx = std::max(mx, double(x[at(j)]));
            for (int64_t j = 0; j < n; ++j)
              sum += std::exp(x[at(j)] - mx);
            for (int64_t j = 0; j < n; ++j)
              want[at(j)] = log ? x[at(j)] - mx - std::log(sum) : std::exp(x[at(j)] - mx) / sum;
          }
        requireClose(y, want, 1e-4, 1e-6);

        // In place.
        softmaxF32(x.data(), x.data(), outer, n, inner, log);
        requireClose(x, want, 1e-4, 1e-6);
      }
    }
  }
}

TEST_CASE("reductions over arbitrary axis sets", "[reduce]") {
  std::mt19937 rng(14);
  const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max, ReduceKind::Min};
  for (int trial = 0; trial < 120; ++trial) {
    Shape shape;
    do {
      shape.resize(static_cast<size_t>(randomInt(rng, 1, 5)));
      for (int64_t &d : shape)
        d = randomInt(rng, 1, trial % 4 == 0 ? 40 : 6);
    } while (numElements(shape) > 20000);
    std::vector<bool> reduced(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      reduced[d] = randomInt(rng, 0, 1) == 1;
    if (trial % 10 == 0)
      std::fill(reduced.begin(), reduced.end(), true);

    Shape outShape, outStrides(shape.size(), 0);
    int64_t reducedCount = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reduced[d])
        reducedCount *= shape[d];
      else
        outShape.push_back(shape[d]);
    }
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (!reduced[d]) {
        outStrides[d] = stride;
        stride *= shape[d];
      }
    }
    const int64_t outCount = numElements(outShape);
    std::vector<float> x = randomFloats(rng, numElements(shape), -3.0f, 3.0f);

    for (ReduceKind kind : kinds) {
      INFO("kind " << static_cast<int>(kind) << " shape " << describe(shape) << " out "
                   << describe(outShape));
      std::vector<double> want(static_cast<size_t>(outCount)), scale(want.size(), 0.0);
      std::vector<bool> first(want.size(), true);
      for (int64_t i = 0; i < numElements(shape); ++i) {
        Shape idx = unravel(i, shape), outIdx;
        for (size_t d = 0; d < shape.size(); ++d)
          if (!reduced[d])
            outIdx.push_back(idx[d]);
        size_t o = static_cast<size_t>(ravel(outIdx, outShape));
        double v = x[static_cast<size_t>(i)];
        if (first[o]) {
          want[o] = v;
          first[o] = false;
        } else if (kind == ReduceKind::Max) {
          want[o] = std::max(want[o], v);
        } else if (kind == ReduceKind::Min) {
          want[o] = std::min(want[o], v);
        } else {
          want[o] += v;
        }
        scale[o] += std::fabs(v);
      }
      if (kind == ReduceKind::Mean)
        for (size_t o = 0; o < want.size(); ++o) {
          want[o] /= reducedCount;
          scale[o] /= reducedCount;
        }
      std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
      reduceF32(kind, x.data(), shape.data(), outStrides.data(), static_cast<int>(shape.size()),
                y.data(), outCount, reducedCount);
      requireClose(y, want, 1e-4, 0.0, &scale);
    }
  }
}

TEST_CASE("max reduction propagates NaN; empty mean is NaN", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, nan, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  Shape shape = {18}, strides = {0};
  float y = 0;
  reduceF32(ReduceKind::Max, x.data(), shape.data(), strides.data(), 1, &y, 1, 18);
  CHECK(std::isnan(y));
  reduceF32(ReduceKind::Min, x.data(), shape.data(), strides.data(), 1, &y, 1, 18);
  CHECK(std::isnan(y));
  Shape empty = {0};
  reduceF32(ReduceKind::Mean, x.data(), empty.data(), strides.data(), 1, &y, 1, 0);
  CHECK(std::isnan(y));
  reduceF32(ReduceKind::Sum, x.data(), empty.data(), strides.data(), 1, &y, 1, 0);
  CHECK(y == 0.0f);
}

//===----------------------------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------------------------===//

namespace {

std::vector<unsigned char> randomBytes(std::mt19937 &rng, int64_t n) {
  std::vector<unsigned char> v(static_cast<size_t>(n));
  for (unsigned char &b : v)
    b = static_cast<unsigned char>(randomInt(rng, 0, 255));
  return v;
}

const size_t kElemSizes[] = {1, 2, 3, 4, 8, 12};

} // namespace

TEST_CASE("copyBytes", "[data]") {
  std::vector<unsigned char> a = {1, 2, 3, 4, 5}, b(5, 0);
  copyBytes(a.data(), b.data(), 5);
  CHECK(a == b);
  copyBytes(a.data(), a.data(), 5);
  copyBytes(nullptr, nullptr, 0);
  CHECK(a == b);
}

TEST_CASE("transpose permutes dims for any element size", "[data]") {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 150; ++trial) {
    Shape inShape(static_cast<size_t>(randomInt(rng, 1, 5)));
    for (int64_t &d : inShape)
      d = randomInt(rng, 1, trial % 5 == 0 ? 17 : 5);
    if (trial == 0)
      inShape = {3, 0, 4};
    Shape perm(inShape.size());
    std::iota(perm.begin(), perm.end(), 0);
    // Sometimes leave trailing dims in place, which the kernel copies as whole chunks.
    int64_t keep = randomInt(rng, 0, 1) ? randomInt(rng, 0, static_cast<int64_t>(perm.size())) : 0;
    std::shuffle(perm.begin(), perm.end() - keep, rng);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    INFO("shape " << describe(inShape) << " perm " << describe(perm) << " elem " << elemSize);

    std::vector<unsigned char> x = randomBytes(rng, numElements(inShape) * elemSize);
    std::vector<unsigned char> y(x.size(), 0);
    transpose(x.data(), y.data(), elemSize, inShape.data(), perm.data(),
              static_cast<int>(inShape.size()));
    Shape outShape(inShape.size());
    for (size_t d = 0; d < perm.size(); ++d)
      outShape[d] = inShape[perm[d]];
    std::vector<unsigned char> want(x.size());
    for (int64_t i = 0; i < numElements(outShape); ++i) {
      Shape outIdx = unravel(i, outShape), inIdx(inShape.size());
      for (size_t d = 0; d < perm.size(); ++d)
        inIdx[perm[d]] = outIdx[d];
      std::memcpy(&want[i * elemSize], &x[ravel(inIdx, inShape) * elemSize], elemSize);
    }
    requireEqual(y, want);
  }
}

TEST_CASE("concat along an axis", "[data]") {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 30; ++trial) {
    int count = static_cast<int>(randomInt(rng, 1, 4));
    int64_t outer = randomInt(rng, 1, 4), inner = randomInt(rng, 1, 5);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    std::vector<int64_t> axisSizes;
    std::vector<std::vector<unsigned char>> inputs;
    std::vector<const void *> ptrs;
    int64_t total = 0;
    for (int i = 0; i < count; ++i) {
      axisSizes.push_back(randomInt(rng, 0, 4));
      total += axisSizes.back();
      inputs.push_back(randomBytes(rng, outer * axisSizes.back() * inner * elemSize));
      ptrs.push_back(inputs.back().data());
    }
    std::vector<unsigned char> y(outer * total * inner * elemSize);
    concat(ptrs.data(), axisSizes.data(), count, y.data(), outer, inner, elemSize);
    std::vector<unsigned char> want;
    for (int64_t o = 0; o < outer; ++o)
      for (int i = 0; i < count; ++i) {
        size_t rowBytes = axisSizes[i] * inner * elemSize;
        want.insert(want.end(), inputs[i].begin() + o * rowBytes,
                    inputs[i].begin() + (o + 1) * rowBytes);
      }
    requireEqual(y, want);
  }
}

namespace {

template <typename Index> void checkGather(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t outer = randomInt(rng, 1, 4), axisDim = randomInt(rng, 1, 6),
            inner = randomInt(rng, 1, 5), numIndices = randomInt(rng, 0, 8);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    std::vector<Index> indices;
    for (int64_t j = 0; j < numIndices; ++j)
      indices.push_back(static_cast<Index>(randomInt(rng, -axisDim, axisDim - 1)));
    std::vector<unsigned char> x = randomBytes(rng, outer * axisDim * inner * elemSize);
    std::vector<unsigned char> y(outer * numIndices * inner * elemSize, 0xee);
    gather<Index>(x.data(), indices.data(), numIndices, y.data(), outer, axisDim, inner, elemSize);
    std::vector<unsigned char> want;
    for (int64_t o = 0; o < outer; ++o)
      for (Index idx : indices) {
        int64_t row = idx < 0 ? idx + axisDim : idx;
        auto begin = x.begin() + ((o * axisDim + row) * inner) * elemSize;
        want.insert(want.end(), begin, begin + inner * elemSize);
      }
    requireEqual(y, want);
  }
}

} // namespace

TEST_CASE("gather with negative indices", "[data]") {
  checkGather<int32_t>(17);
  checkGather<int64_t>(18);
}

TEST_CASE("gather zero-fills out-of-range indices", "[data]") {
  const float x[6] = {1, 2, 3, 4, 5, 6}; // [3, 2], gathered along axis 0
  const int64_t indices[4] = {-1, 3, -4, 0};
  float y[8];
  gather<int64_t>(x, indices, 4, y, 1, 3, 2, sizeof(float));
  CHECK(std::vector<float>(y, y + 8) == std::vector<float>{5, 6, 0, 0, 0, 0, 1, 2});
}

TEST_CASE("slice with positive and negative steps", "[data]") {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 150; ++trial) {
    Shape inShape(static_cast<size_t>(randomInt(rng, 1, 4)));
    for (int64_t &d : inShape)
      d = randomInt(rng, 1, 7);
    Shape starts(inShape.size()), steps(inShape.size()), outShape(inShape.size());
    for (size_t d = 0; d < inShape.size(); ++d) {
      if (randomInt(rng, 0, 3) == 0) {
        // Whole dim, which lets the kernel copy contiguous chunks.
        starts[d] = 0;
        steps[d] = 1;
        outShape[d] = inShape[d];
        continue;
      }
      do
        steps[d] = randomInt(rng, -3, 3);
      while (steps[d] == 0);
      starts[d] = randomInt(rng, 0, inShape[d] - 1);
      int64_t available = steps[d] > 0 ? (inShape[d] - starts[d] + steps[d] - 1) / steps[d]
                                       : starts[d] / -steps[d] + 1;
      outShape[d] = randomInt(rng, 1, available);
    }
    if (trial == 0)
      outShape[0] = 0;
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    INFO("in " << describe(inShape) << " starts " << describe(starts) << " steps "
               << describe(steps) << " out " << describe(outShape) << " elem " << elemSize);
    std::vector<unsigned char> x = randomBytes(rng, numElements(inShape) * elemSize);
    std::vector<unsigned char> y(numElements(outShape) * elemSize, 0);
    slice(x.data(), y.data(), elemSize, inShape.data(), starts.data(), steps.data(),
          outShape.data(), static_cast<int>(inShape.size()));
    std::vector<unsigned char> want(y.size());
    for (int64_t i = 0; i < numElements(outShape); ++i) {
      Shape idx = unravel(i, outShape);
      for (size_t d = 0; d < idx.size(); ++d)
        idx[d] = starts[d] + idx[d] * steps[d];
      std::memcpy(&want[i * elemSize], &x[ravel(idx, inShape) * elemSize], elemSize);
    }
    requireEqual(y, want);
  }
}

//===----------------------------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------------------------===//

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("dlc_test_runtime_" + name)).string();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A version 1.0 file as NumPy lays it out: header padded with spaces to a 64-byte boundary.
std::string npyFile(const std::string &dict, const std::string &data, char major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY", 6) + major + '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  if (major != 1)
    file += std::string(2, '\0');
  return file + header + data;
}

std::string loadError(const std::string &name, const std::string &bytes) {
  std::string path = tempPath(name);
  writeFile(path, bytes);
  dlc::npy::Array array;
  std::string error;
  bool ok = dlc::npy::load(path.c_str(), array, &error);
  std::filesystem::remove(path);
  CHECK_FALSE(ok);
  CHECK(error.find(path) == 0);
  return error;
}

} // namespace

TEST_CASE("npy round trip for every dtype and rank", "[npy]") {
  std::mt19937 rng(20);
  const dlc_dtype dtypes[] = {DLC_F32, DLC_F64, DLC_I32, DLC_I64, DLC_U8, DLC_I8, DLC_BOOL};
  const Shape shapes[] = {{}, {1}, {7}, {2, 3}, {2, 0, 4}, {3, 1, 4, 2}};
  std::string path = tempPath("roundtrip.npy");
  for (dlc_dtype dtype : dtypes) {
    for (const Shape &shape : shapes) {
      INFO("dtype " << dtype << " shape " << describe(shape));
      std::vector<unsigned char> data =
          randomBytes(rng, numElements(shape) * static_cast<int64_t>(dlc_dtype_size(dtype)));
      if (dtype == DLC_BOOL)
        for (unsigned char &b : data)
          b &= 1;
      std::string error;
      REQUIRE(dlc::npy::save(path.c_str(), dtype, shape.data(), static_cast<int>(shape.size()),
                             data.data(), &error));
      std::string bytes = readFile(path);
      size_t headerLength = static_cast<unsigned char>(bytes[8]) |
                            static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
      CHECK((10 + headerLength) % 64 == 0);
      CHECK(bytes.size() == 10 + headerLength + data.size());

      dlc::npy::Array array;
      REQUIRE(dlc::npy::load(path.c_str(), array, &error));
      CHECK(array.dtype == dtype);
      CHECK(array.shape == shape);
      CHECK(array.data == data);
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("npy writer matches NumPy's layout byte for byte", "[npy]") {
  std::string path = tempPath("layout.npy");
  const float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  REQUIRE(dlc::npy::save(path.c_str(), DLC_F32, shape, 2, data, nullptr));
  std::string expected = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                 std::string(reinterpret_cast<const char *>(data), sizeof(data)));
  CHECK(readFile(path) == expected);

  const int64_t vec[1] = {4};
  const unsigned char bytes[4] = {1, 0, 1, 1};
  REQUIRE(dlc::npy::save(path.c_str(), DLC_BOOL, vec, 1, bytes, nullptr));
  CHECK(readFile(path) == npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
                                  std::string("\1\0\1\1", 4)));

  const double scalar = 2.5;
  REQUIRE(dlc::npy::save(path.c_str(), DLC_F64, nullptr, 0, &scalar, nullptr));
  CHECK(readFile(path) == npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                  std::string(reinterpret_cast<const char *>(&scalar), 8)));
  std::filesystem::remove(path);
}

TEST_CASE("npy reader accepts NumPy header variants", "[npy]") {
  std::string path = tempPath("variants.npy");
  const std::string two = std::string("\x02\0\0\0\x03\0\0\0", 8);
  dlc::npy::Array array;
  std::string error;

  SECTION("version 2.0, double quotes, keys in another order, no trailing comma") {
    writeFile(path,
              npyFile("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}", two, 2));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.dtype == DLC_I32);
    CHECK(array.shape == Shape{2});
  }
  SECTION("Python 2 long suffixes") {
    writeFile(path, npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (1L, 2L), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.shape == Shape{1, 2});
  }
  SECTION("Fortran order where it lays data out as C order") {
    writeFile(path, npyFile("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 1), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.shape == Shape{2, 1});
  }
  SECTION("one-byte types with any byte-order mark") {
    writeFile(path, npyFile("{'descr': '<u1', 'fortran_order': False, 'shape': (8,), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.dtype == DLC_U8);
    CHECK(array.data.size() == 8);
  }
  std::filesystem::remove(path);
}

TEST_CASE("npy reader rejects bad files with clear errors", "[npy]") {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight(8, '\0');
  auto contains = [](const std::string &error, const char *what) {
    INFO(error);
    CHECK(error.find(what) != std::string::npos);
  };

  dlc::npy::Array array;
  std::string error;
  CHECK_FALSE(dlc::npy::load(tempPath("does_not_exist.npy").c_str(), array, &error));
  contains(error, "cannot open");
  CHECK_FALSE(dlc::npy::load(tempPath("does_not_exist.npy").c_str(), array, nullptr));

  contains(loadError("empty.npy", ""), "not a .npy file");
  contains(loadError("text.npy", "hello, world\n"), "not a .npy file");
  contains(loadError("version.npy", std::string("\x93NUMPY\x03\0", 8) + "\x10\0\0\0"),
           "version 3.0");
  contains(loadError("short_header.npy", npyFile(dict, eight).substr(0, 40)), "truncated");
  contains(loadError("short_length.npy", std::string("\x93NUMPY\x01\0\x10", 9)), "truncated");
  contains(loadError("short_data.npy", npyFile(dict, eight).substr(0, 128 + 5)),
           "truncated data: expected 8 bytes, found 5");
  contains(loadError("long_data.npy", npyFile(dict, eight + "x")), "after the array data");
  contains(
      loadError("fortran.npy", npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                                       eight + eight)),
      "Fortran-order");
  contains(loadError("complex.npy",
                     npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", eight)),
           "unsupported dtype '<c8'");
  contains(loadError("bigendian.npy",
                     npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", eight)),
           "big-endian");
  contains(loadError("structured.npy",
                     npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                             eight)),
           "'descr'");
  contains(loadError("missing_key.npy", npyFile("{'descr': '<f4', 'shape': (2,), }", eight)),
           "lacks");
  contains(
      loadError("extra_key.npy",
                npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", eight)),
      "unexpected header key 'x'");
  contains(loadError("negative_dim.npy",
                     npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", eight)),
           "non-negative");
  contains(loadError("not_dict.npy", npyFile("['descr']", eight)), "not a dict");
}

TEST_CASE("npy writer reports failures", "[npy]") {
  std::string error;
  const float v = 1.0f;
  const int64_t shape[1] = {1};
  std::string dir = tempPath("no_such_dir");
  std::string path = dir + "/x.npy";
  CHECK_FALSE(dlc::npy::save(path.c_str(), DLC_F32, shape, 1, &v, &error));
  CHECK(error.find("cannot create") != std::string::npos);
  CHECK_FALSE(
      dlc::npy::save(tempPath("bad.npy").c_str(), static_cast<dlc_dtype>(5), shape, 1, &v, &error));
  CHECK(error.find("unsupported dtype") != std::string::npos);
  const int64_t negative[1] = {-1};
  CHECK_FALSE(dlc::npy::save(tempPath("bad.npy").c_str(), DLC_F32, negative, 1, &v, &error));
  CHECK(error.find("negative") != std::string::npos);
}
