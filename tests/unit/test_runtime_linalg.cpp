// Tests for the CPU runtime's linear algebra kernels (sgemm, batched matmul) against naive
// products computed in double, on random shapes from fixed seeds.
#include "dlc_kernels.h"
#include "gemm.h"
#include "runtime_test_util.h"
#include "scalar_ops.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using namespace dlc::rt;

//===----------------------------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------------------------===//

namespace {

struct GemmCase {
  bool transA, transB;
  int64_t m, n, k;
  float alpha, beta;
};

// Which operand the product reads packed ahead of time, as constant weights are.
enum class Packed { None, A, B };

void checkGemm(std::mt19937 &rng, const GemmCase &g, CpuIsa isa, Packed packed = Packed::None) {
  INFO("isa " << cpuIsaName(isa) << " packed " << int(packed) << " transA " << g.transA << " transB " << g.transB << " m " << g.m << " n " << g.n << " k "
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
  GemmArgs args{g.transA, g.transB, g.m, g.n, g.k, g.alpha, a.data(), lda, b.data(), ldb,
                g.beta, c.data(), ldc, {}, {}, {}};
  std::vector<float> packedA(packedGemmABytes(g.m, g.k) / sizeof(float));
  std::vector<float> packedB(packedGemmBBytes(g.k, g.n) / sizeof(float));
  if (packed == Packed::A) {
    packGemmA(g.transA, g.m, g.k, a.data(), lda, packedA.data());
    args.a = nullptr;
    args.packedA = {packedA.data(), int64_t(packedA.size()) / g.k, 0};
  } else if (packed == Packed::B) {
    packGemmB(g.transB, g.k, g.n, b.data(), ldb, packedB.data());
    args.b = nullptr;
    args.packedB = {packedB.data(), int64_t(packedB.size()) / g.k, 0};
  }
  sgemmOn(isa, args);
  requireClose(c, want, 1e-4, 1e-6, &scale);
}

} // namespace

TEST_CASE("sgemm matches a naive product across block edges", "[linalg]") {
  for (CpuIsa isa : runnableIsas()) {
    std::mt19937 rng(7);
    // Around every kernel's tile (4, 6, 8, 12 rows; 8, 16, 32 columns) and block (96 rows,
    // 128 columns, 256 deep), plus primes.
    const int64_t sizes[] = {1, 2, 3, 5, 6, 7, 11, 12, 13, 16, 17, 31, 32, 33, 97, 129};
    const int64_t count = int64_t(sizeof sizes / sizeof sizes[0]);
    for (bool transA : {false, true}) {
      for (bool transB : {false, true}) {
        for (int trial = 0; trial < 16; ++trial) {
          const float alphas[] = {1.0f, -0.5f, 2.0f};
          const float betas[] = {0.0f, 1.0f, 0.3f};
          GemmCase g{transA,
                     transB,
                     sizes[randomInt(rng, 0, count - 1)],
                     sizes[randomInt(rng, 0, count - 1)],
                     sizes[randomInt(rng, 0, count - 1)],
                     alphas[randomInt(rng, 0, 2)],
                     betas[randomInt(rng, 0, 2)]};
          checkGemm(rng, g, isa);
          checkGemm(rng, g, isa, Packed::A);
          checkGemm(rng, g, isa, Packed::B);
        }
        // Several k blocks, row blocks and column blocks, with ragged edges everywhere.
        for (Packed packed : {Packed::None, Packed::A, Packed::B}) {
          checkGemm(rng, {transA, transB, 197, 261, 600, 1.0f, 0.0f}, isa, packed);
          // C narrow enough that A's whole row tiles are read in place, its last 5 rows packed.
          checkGemm(rng, {transA, transB, 197, 250, 600, 1.0f, 0.3f}, isa, packed);
          // Last row blocks of exactly 8 rows (the MLP's batch): AVX-512's 8-row tile.
          checkGemm(rng, {transA, transB, 8, 40, 70, 1.0f, 0.3f}, isa, packed);
          checkGemm(rng, {transA, transB, 20, 33, 300, -1.0f, 1.0f}, isa, packed);
        }
        checkGemm(rng, {transA, transB, 67, 9, 513, -1.5f, 0.5f}, isa);
        checkGemm(rng, {transA, transB, 12, 32, 256, 1.0f, 1.0f}, isa);
        // Matrix-vector shapes.
        checkGemm(rng, {transA, transB, 77, 1, 300, 1.0f, 0.0f}, isa);
        checkGemm(rng, {transA, transB, 1, 77, 300, 1.0f, 2.0f}, isa);
        // One row times packed B (classifier heads): four partial sums, two k blocks, a
        // ragged last column tile.
        checkGemm(rng, {transA, transB, 1, 77, 300, 1.0f, 2.0f}, isa, Packed::B);
        checkGemm(rng, {transA, transB, 1, 1000, 600, -0.5f, 0.3f}, isa, Packed::B);
        checkGemm(rng, {transA, transB, 1, 5, 3, 1.0f, 0.0f}, isa, Packed::B);
      }
    }
  }
}

TEST_CASE("sgemm split over threads gives the single-thread result bit for bit", "[linalg]") {
  std::mt19937 rng(11);
  // Wide (split by columns) and tall (split by rows), with edges in every part, and large
  // enough for sgemm to split them; a product of two rows (split by columns, unblocked unless
  // an operand is packed) and a matrix-vector product (split by rows).
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 301, 400}, {301, 37, 400},
                         {2, 1500, 300}, {1500, 1, 300}}) {
    std::vector<float> a = randomFloats(rng, m * k), b = randomFloats(rng, k * n);
    std::vector<float> packedA(packedGemmABytes(m, k) / sizeof(float));
    std::vector<float> packedB(packedGemmBBytes(k, n) / sizeof(float));
    packGemmA(false, m, k, a.data(), k, packedA.data());
    packGemmB(false, k, n, b.data(), n, packedB.data());
    for (Packed packed : {Packed::None, Packed::A, Packed::B}) {
      auto product = [&, m = m, n = n, k = k](std::vector<float> &c) {
        c.assign(size_t(m * n), -1.0f);
        if (packed == Packed::A)
          sgemmPackedA(m, n, k, 1.0f, packedA.data(), false, b.data(), n, 0.0f, c.data(), n);
        else if (packed == Packed::B)
          sgemmPackedB(false, m, n, k, 1.0f, a.data(), k, packedB.data(), 0.0f, c.data(), n);
        else
          sgemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
      };
      std::vector<float> serial, threaded;
      product(serial);
      for (int threads : {2, 3, 5}) {
        INFO(m << "x" << n << "x" << k << " threads " << threads << " packed " << int(packed));
        ThreadPool *pool = createThreadPool(threads);
        REQUIRE(pool);
        {
          ThreadScope scope(pool);
          CHECK(activeThreadCount() == threads);
          product(threaded);
        }
        CHECK(threaded == serial);
        CHECK(activeThreadCount() == 1);
        destroyThreadPool(pool);
      }
    }
  }
}

TEST_CASE("sgemm's epilogue gives the bits of the product then the unfused ops", "[linalg]") {
  std::mt19937 rng(13);
  // Edge tiles, two k blocks (k > 256), splits by rows and by columns, the unblocked paths
  // (two rows of an unpacked A; a matrix-vector product), one row times packed B and k = 0.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 301, 400}, {301, 37, 70},
                         {16, 50, 144}, {2, 150, 30}, {40, 1, 30}, {1, 300, 600}, {5, 7, 0}}) {
    std::vector<float> a = randomFloats(rng, m * k), b = randomFloats(rng, k * n);
    std::vector<float> rowBias = randomFloats(rng, m), columnBias = randomFloats(rng, n);
    const int64_t ldr = n + 3;
    std::vector<float> residual = randomFloats(rng, m * ldr);
    // NaNs pass the clamp, as in scalar::clampValue.
    residual[0] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> packedA(packedGemmABytes(m, k) / sizeof(float) + 1);
    std::vector<float> packedB(packedGemmBBytes(k, n) / sizeof(float) + 1);
    packGemmA(false, m, k, a.data(), k, packedA.data());
    packGemmB(false, k, n, b.data(), n, packedB.data());
    for (CpuIsa isa : runnableIsas())
      for (Packed packed : {Packed::None, Packed::A, Packed::B})
        for (int variant = 0; variant < 4; ++variant) {
          // Row bias, residual, Relu's clamp; column bias, Clip's; residual alone; all.
          GemmEpilogue e{};
          e.rowBias = variant % 2 == 0 ? rowBias.data() : nullptr;
          e.columnBias = variant == 1 ? columnBias.data() : nullptr;
          e.residual = variant != 1 ? residual.data() : nullptr;
          e.ldr = ldr;
          e.clamp = variant != 2;
          e.lo = variant == 1 ? -0.25f : 0.0f;
          e.hi = variant == 1 ? 0.5f : std::numeric_limits<float>::infinity();
          GemmArgs g{false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, nullptr, n,
                     {}, {}, {}};
          if (packed == Packed::A)
            g.packedA = {packedA.data(), int64_t(packedA.size() - 1) / std::max<int64_t>(k, 1), 0};
          if (packed == Packed::B)
            g.packedB = {packedB.data(), int64_t(packedB.size() - 1) / std::max<int64_t>(k, 1), 0};
          std::vector<float> want(size_t(m * n)), got(want.size());
          g.c = want.data();
          sgemmOn(isa, g);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              float &v = want[i * n + j];
              if (e.rowBias)
                v += rowBias[i];
              if (e.columnBias)
                v += columnBias[j];
              if (e.residual)
                v += residual[i * ldr + j];
              if (e.clamp)
                v = scalar::clampValue(v, e.lo, e.hi);
            }
          for (int threads : {1, 3}) {
            INFO(cpuIsaName(isa) << " " << m << "x" << n << "x" << k << " packed "
                                 << int(packed) << " variant " << variant << " threads "
                                 << threads);
            ThreadPool *pool = threads > 1 ? createThreadPool(threads) : nullptr;
            {
              ThreadScope scope(pool);
              g.c = got.data();
              g.epilogue = e;
              sgemmOn(isa, g);
            }
            destroyThreadPool(pool);
            CHECK(std::memcmp(got.data(), want.data(), sizeof(float) * want.size()) == 0);
          }
        }
  }
}

TEST_CASE("thread pool runs every part once, also more parts than threads", "[threads]") {
  ThreadPool *pool = createThreadPool(3);
  REQUIRE(pool);
  {
    ThreadScope scope(pool);
    for (int parts : {1, 2, 3, 7}) {
      std::vector<int> runs(parts, 0);
      parallelRun(
          parts, [](void *context, int part) { ++(*static_cast<std::vector<int> *>(context))[part]; },
          &runs);
      CHECK(runs == std::vector<int>(parts, 1));
    }
  }
  destroyThreadPool(pool);
  // A pool that never ran a region starts no thread and is destroyed at once.
  destroyThreadPool(createThreadPool(4));
  CHECK(createThreadPool(1) == nullptr);
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

TEST_CASE("batchedMatmulI32: exact int32 products, sums wrapping modulo 2^32", "[linalg]") {
  std::mt19937 rng(57);
  const int64_t batch = 3, m = 4, n = 5, k = 70;
  std::vector<int32_t> a(batch * m * k), b(k * n), c(batch * m * n);
  for (int32_t &v : a)
    v = int32_t(randomInt(rng, -255, 255));
  for (int32_t &v : b)
    v = int32_t(randomInt(rng, -255, 255));
  a[0] = b[0] = 2000000000; // this product alone leaves int32: the sum wraps
  std::vector<int64_t> aOffsets{0, m * k, 2 * m * k}, bOffsets{0, 0, 0}; // b broadcast
  batchedMatmulI32(a.data(), aOffsets.data(), b.data(), bOffsets.data(), c.data(), batch, m, n,
                   k);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t sum = 0; // two's complement arithmetic, reduced modulo 2^32 at the end
        for (int64_t p = 0; p < k; ++p)
          sum += uint64_t(int64_t(a[(t * m + i) * k + p]) * int64_t(b[p * n + j]));
        REQUIRE(c[(t * m + i) * n + j] == int32_t(uint32_t(sum)));
      }
}

TEST_CASE("batchedMatmulF64 accumulates in double", "[linalg]") {
  std::mt19937 rng(58);
  const int64_t batch = 2, m = 3, n = 4, k = 300;
  std::vector<double> a = randomValues<double>(rng, batch * m * k),
                      b = randomValues<double>(rng, batch * k * n), c(batch * m * n);
  // Terms that a float accumulator would lose next to 1e8.
  a[0] = 1e8;
  b[0] = 1.0;
  std::vector<int64_t> aOffsets{0, m * k}, bOffsets{0, k * n};
  batchedMatmulF64(a.data(), aOffsets.data(), b.data(), bOffsets.data(), c.data(), batch, m, n,
                   k);
  std::vector<double> want(c.size()), scale(c.size());
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        long double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          long double term = (long double)a[(t * m + i) * k + p] * b[(t * k + p) * n + j];
          sum += term;
          magnitude += std::fabs(term);
        }
        want[(t * m + i) * n + j] = double(sum);
        scale[(t * m + i) * n + j] = double(magnitude);
      }
  requireClose(c, want, 1e-14, 0.0, &scale);
}

namespace {
// The determinant by cofactor expansion along the first row: independent of elimination.
double cofactorDet(const std::vector<double> &a, int64_t m) {
  if (m == 0)
    return 1.0;
  double det = 0.0;
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < m; ++r)
      for (int64_t c = 0; c < m; ++c)
        if (c != j)
          minor.push_back(a[r * m + c]);
    det += (j % 2 ? -1.0 : 1.0) * a[j] * cofactorDet(minor, m - 1);
  }
  return det;
}
} // namespace

TEST_CASE("detF32 matches cofactor expansion, singular and permuted matrices", "[linalg]") {
  std::mt19937 rng(21);
  for (int64_t m = 0; m <= 6; ++m) {
    INFO("m " << m);
    const int64_t count = 3;
    std::vector<float> x = randomFloats(rng, count * m * m, -2.0f, 2.0f);
    std::vector<float> y(count);
    std::vector<double> workspace(static_cast<size_t>(m * m)), want(count), scale(count);
    detF32(x.data(), y.data(), count, m, workspace.data());
    for (int64_t i = 0; i < count; ++i) {
      std::vector<double> a(x.begin() + i * m * m, x.begin() + (i + 1) * m * m);
      want[i] = cofactorDet(a, m);
      scale[i] = 1.0;
    }
    requireClose(y, want, 1e-5, 0.0, &scale);
  }
  // Two equal rows: exactly singular. Rows of the identity swapped: -1.
  const float singular[9] = {1, 2, 3, 4, 5, 6, 1, 2, 3};
  const float swapped[9] = {0, 1, 0, 1, 0, 0, 0, 0, 1};
  double workspace[9];
  float det = 1.0f;
  detF32(singular, &det, 1, 3, workspace);
  CHECK(det == 0.0f);
  detF32(swapped, &det, 1, 3, workspace);
  CHECK(det == -1.0f);
}

namespace {
struct AttentionCase {
  int64_t batch, queries, depth, keys, valueDepth;
  float scale;
  bool divide;
  int64_t biasEntries, biasRowStride, biasColumnStride; // biasEntries 0: no bias
};

// softmax(scale(q kᵀ) + bias) v in double, the bias entry of batch b being b % biasEntries.
std::vector<double> attentionReference(const AttentionCase &c, const std::vector<float> &q,
                                       const std::vector<float> &k, const std::vector<float> &v,
                                       const std::vector<float> &bias,
                                       const std::vector<int64_t> &biasOffsets) {
  std::vector<double> out(size_t(c.batch * c.queries * c.valueDepth)), p(size_t(c.keys));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.queries; ++i) {
      double top = -INFINITY;
      for (int64_t j = 0; j < c.keys; ++j) {
        double s = 0;
        for (int64_t x = 0; x < c.depth; ++x)
          s += double(q[(b * c.queries + i) * c.depth + x]) * k[(b * c.depth + x) * c.keys + j];
        s = c.divide ? s / c.scale : s * c.scale;
        if (c.biasEntries)
          s += bias[biasOffsets[b] + i * c.biasRowStride + j * c.biasColumnStride];
        p[j] = s;
        top = std::max(top, s);
      }
      double sum = 0;
      for (double &x : p)
        sum += (x = std::exp(x - top));
      for (int64_t e = 0; e < c.valueDepth; ++e) {
        double o = 0;
        for (int64_t j = 0; j < c.keys; ++j)
          o += p[j] / sum * v[(b * c.keys + j) * c.valueDepth + e];
        out[(b * c.queries + i) * c.valueDepth + e] = o;
      }
    }
  return out;
}
} // namespace

namespace {
std::vector<int64_t> contiguousOffsets(int64_t entries, int64_t matrixElements) {
  std::vector<int64_t> offsets;
  for (int64_t b = 0; b < entries; ++b)
    offsets.push_back(b * matrixElements);
  return offsets;
}
} // namespace

TEST_CASE("attention matches softmax(scale(q k^T) + bias) v in double, on any thread count",
          "[linalg]") {
  std::mt19937 rng(29);
  // 2000 keys: blocks of 60 query rows (130 = 60 + 60 + 10), 27 of them through one workspace
  // slot per thread; masks shared across heads and rows (row stride 0), full (also across
  // blocks), and one per row (column stride 0); a Mul, a Div and no scale; powers of 2 (the
  // product's alpha) and not (a pass of its own).
  for (const AttentionCase &c :
       {AttentionCase{9, 130, 16, 2000, 8, 4.0f, true, 3, 0, 1},
        AttentionCase{2, 70, 8, 2000, 4, 0.25f, false, 1, 2000, 1},
        AttentionCase{2, 5, 7, 3, 5, 0.5f, false, 2, 3, 1},
        AttentionCase{3, 4, 3, 6, 2, 1.0f, false, 3, 1, 0},
        AttentionCase{4, 33, 64, 33, 64, 1.0f, false, 0, 0, 0},
        AttentionCase{2, 20, 8, 50, 8, 0.3f, true, 1, 50, 1}}) {
    INFO("batch " << c.batch << " queries " << c.queries << " keys " << c.keys);
    std::vector<float> q = randomFloats(rng, c.batch * c.queries * c.depth),
                       k = randomFloats(rng, c.batch * c.depth * c.keys),
                       v = randomFloats(rng, c.batch * c.keys * c.valueDepth);
    const int64_t biasEntrySize =
        std::max<int64_t>(1, (c.queries - 1) * c.biasRowStride + (c.keys - 1) * c.biasColumnStride + 1);
    std::vector<float> bias = randomFloats(rng, c.biasEntries * biasEntrySize, -3.0f, 3.0f);
    std::vector<int64_t> biasOffsets;
    for (int64_t b = 0; b < c.batch; ++b)
      biasOffsets.push_back(c.biasEntries ? b % c.biasEntries * biasEntrySize : 0);
    const std::vector<int64_t> queryOffsets = contiguousOffsets(c.batch, c.queries * c.depth),
                               keyOffsets = contiguousOffsets(c.batch, c.depth * c.keys),
                               valueOffsets = contiguousOffsets(c.batch, c.keys * c.valueDepth),
                               outputOffsets = contiguousOffsets(c.batch, c.queries * c.valueDepth);
    const AttentionParams p{c.batch, c.queries, c.depth, c.keys, c.valueDepth, c.scale, c.divide,
                            {queryOffsets.data(), c.depth}, {keyOffsets.data(), c.keys},
                            {valueOffsets.data(), c.valueDepth}, {outputOffsets.data(), c.valueDepth},
                            false, c.biasEntries ? bias.data() : nullptr, biasOffsets.data(),
                            c.biasRowStride, c.biasColumnStride, nullptr};
    std::vector<float> workspace(
        attentionWorkspaceBytes(c.batch, c.queries, c.depth, c.keys, c.valueDepth, false) /
        sizeof(float));
    auto run = [&] {
      std::vector<float> out(size_t(c.batch * c.queries * c.valueDepth), NAN);
      std::fill(workspace.begin(), workspace.end(), NAN);
      attentionF32(p, q.data(), k.data(), v.data(), out.data(), workspace.data());
      return out;
    };
    std::vector<float> serial = run();
    requireClose(serial, attentionReference(c, q, k, v, bias, biasOffsets), 0.0, 2e-6);
    ThreadPool *pool = createThreadPool(3);
    REQUIRE(pool);
    {
      ThreadScope scope(pool);
      CHECK(run() == serial);
    }
    destroyThreadPool(pool);
  }
  // The workspace holds at most 8 blocks of query rows, not the whole [heads, S, T] scores,
  // and packed keys and values (columns padded to 32) of as many heads as give each a block.
  CHECK(attentionWorkspaceBytes(6, 1500, 64, 1500, 64, false) ==
        (8 * (84 * 1500 + 84) + 64 * 1504 + 1500 * 64) * sizeof(float));
  CHECK(attentionWorkspaceBytes(12, 128, 64, 128, 64, false) ==
        (8 * (128 * 128 + 128) + 8 * (64 * 128 + 128 * 64)) * sizeof(float));
}

TEST_CASE("attention skips the keys a causal mask hides: the same bits", "[linalg]") {
  // A causal mask of finfo(float32).min as Hugging Face writes it, shared by every head, the
  // first query rows seeing 40 keys more (a cache of past keys); -inf hides a few keys of some
  // rows too, and the last row sees none (uniform weights, its keys all kept).
  std::mt19937 rng(37);
  const int64_t heads = 5, queries = 130, keys = 170, depth = 16, past = 40;
  const float masked = -std::numeric_limits<float>::max();
  std::vector<float> mask(size_t(queries * keys), 0.0f);
  std::vector<int64_t> visible;
  for (int64_t i = 0; i < queries; ++i) {
    for (int64_t j = i + past + 1; j < keys; ++j)
      mask[size_t(i * keys + j)] = masked;
    if (i % 7 == 0)
      mask[size_t(i * keys)] = -INFINITY;
    visible.push_back(std::min(keys, i + past + 1));
  }
  for (int64_t j = 0; j < keys; ++j)
    mask[size_t((queries - 1) * keys + j)] = masked;
  visible.back() = keys;
  std::vector<float> q = randomFloats(rng, heads * queries * depth),
                     k = randomFloats(rng, heads * depth * keys),
                     v = randomFloats(rng, heads * keys * depth);
  const std::vector<int64_t> cq = contiguousOffsets(heads, queries * depth),
                             ck = contiguousOffsets(heads, depth * keys),
                             cv = contiguousOffsets(heads, keys * depth),
                             co = contiguousOffsets(heads, queries * depth),
                             biasOffsets(size_t(heads), 0);
  for (float scale : {0.25f, 0.3f}) { // the mask as the product's residual, and a pass of its own
    AttentionParams p{heads, queries, depth, keys, depth, scale, false, {cq.data(), depth},
                      {ck.data(), keys}, {cv.data(), depth}, {co.data(), depth}, false,
                      mask.data(), biasOffsets.data(), keys, 1, nullptr};
    auto run = [&](const int64_t *visibleKeys) {
      p.visibleKeys = visibleKeys;
      std::vector<float> workspace(
          attentionWorkspaceBytes(heads, queries, depth, keys, depth, visibleKeys != nullptr) /
              sizeof(float),
          NAN);
      std::vector<float> out(size_t(heads * queries * depth), NAN);
      attentionF32(p, q.data(), k.data(), v.data(), out.data(), workspace.data());
      return out;
    };
    const std::vector<float> whole = run(nullptr);
    const AttentionCase c{heads, queries, depth, keys, depth, scale, false, 1, keys, 1};
    requireClose(whole, attentionReference(c, q, k, v, mask, biasOffsets), 0.0, 2e-6);
    CHECK(run(visible.data()) == whole);
    ThreadPool *pool = createThreadPool(2);
    REQUIRE(pool);
    {
      ThreadScope scope(pool);
      CHECK(run(visible.data()) == whole);
    }
    destroyThreadPool(pool);
  }
  // Blocks of 48 query rows, so that the first ones compute few keys' scores.
  CHECK(attentionWorkspaceBytes(12, 256, 64, 256, 64, true) ==
        (8 * (48 * 256 + 48) + 2 * (64 * 256 + 256 * 64)) * sizeof(float));
}

TEST_CASE("attention reads split heads in place: strided rows, keys by row, shared key heads",
          "[linalg]") {
  // Hugging Face's layouts: the projections [S, heads x D] read per head (row stride heads x D),
  // keys [T, kv heads x D] as rows of D (no K^T), each key/value head serving `group` query
  // heads (grouped-query attention, packed once), the result written as [S, heads x E].
  std::mt19937 rng(31);
  for (auto [heads, kvHeads, queries, keys, depth] :
       {std::array<int64_t, 5>{12, 4, 37, 50, 16}, {6, 6, 130, 130, 8}, {8, 1, 5, 300, 12}}) {
    INFO("heads " << heads << " kv heads " << kvHeads << " queries " << queries);
    const int64_t group = heads / kvHeads, e = depth;
    std::vector<float> q = randomFloats(rng, queries * heads * depth),
                       k = randomFloats(rng, keys * kvHeads * depth),
                       v = randomFloats(rng, keys * kvHeads * e);
    std::vector<int64_t> queryOffsets, keyOffsets, valueOffsets, outputOffsets;
    for (int64_t h = 0; h < heads; ++h) {
      queryOffsets.push_back(h * depth);
      keyOffsets.push_back(h / group * depth);
      valueOffsets.push_back(h / group * e);
      outputOffsets.push_back(h * e);
    }
    const AttentionParams strided{heads, queries, depth, keys, e, 0.25f, false,
                                  {queryOffsets.data(), heads * depth},
                                  {keyOffsets.data(), kvHeads * depth},
                                  {valueOffsets.data(), kvHeads * e},
                                  {outputOffsets.data(), heads * e}, true, nullptr, nullptr, 0, 0,
                                  nullptr};
    // The same heads gathered into contiguous [heads, S, D], [heads, D, T], [heads, T, E].
    std::vector<float> qc(size_t(heads * queries * depth)), kc(size_t(heads * depth * keys)),
        vc(size_t(heads * keys * e));
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < queries; ++i)
        for (int64_t x = 0; x < depth; ++x)
          qc[size_t((h * queries + i) * depth + x)] = q[size_t(i * heads * depth + h * depth + x)];
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t x = 0; x < depth; ++x) {
          kc[size_t((h * depth + x) * keys + j)] = k[size_t(j * kvHeads * depth + keyOffsets[h] + x)];
          vc[size_t((h * keys + j) * e + x)] = v[size_t(j * kvHeads * e + valueOffsets[h] + x)];
        }
    }
    const AttentionCase c{heads, queries, depth, keys, e, 0.25f, false, 0, 0, 0};
    const std::vector<int64_t> cq = contiguousOffsets(heads, queries * depth),
                               ck = contiguousOffsets(heads, depth * keys),
                               cv = contiguousOffsets(heads, keys * e),
                               co = contiguousOffsets(heads, queries * e);
    const AttentionParams contiguous{heads, queries, depth, keys, e, 0.25f, false,
                                     {cq.data(), depth}, {ck.data(), keys}, {cv.data(), e},
                                     {co.data(), e}, false, nullptr, nullptr, 0, 0, nullptr};
    std::vector<float> workspace(attentionWorkspaceBytes(heads, queries, depth, keys, e, false) /
                                 sizeof(float));
    auto run = [&](const AttentionParams &p, const std::vector<float> &qs,
                   const std::vector<float> &ks, const std::vector<float> &vs) {
      std::vector<float> out(size_t(heads * queries * e), NAN);
      std::fill(workspace.begin(), workspace.end(), NAN);
      attentionF32(p, qs.data(), ks.data(), vs.data(), out.data(), workspace.data());
      return out;
    };
    const std::vector<float> expected = run(contiguous, qc, kc, vc);
    requireClose(expected, attentionReference(c, qc, kc, vc, {}, {}), 0.0, 2e-6);
    auto inPlace = [&] {
      std::vector<float> out = run(strided, q, k, v), heads_(out.size());
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < queries; ++i)
          for (int64_t x = 0; x < e; ++x)
            heads_[size_t((h * queries + i) * e + x)] = out[size_t(i * heads * e + h * e + x)];
      return heads_;
    };
    CHECK(inPlace() == expected);
    ThreadPool *pool = createThreadPool(3);
    REQUIRE(pool);
    {
      ThreadScope scope(pool);
      CHECK(inPlace() == expected);
    }
    destroyThreadPool(pool);
  }
}
