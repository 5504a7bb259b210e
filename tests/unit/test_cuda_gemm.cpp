// The CUDA target's cuBLAS products: the row-major product mapped to cuBLAS's column-major
// GEMM (dlc::cuda::cublasGemmShape), checked against the CPU runtime's sgemm by running the
// CUDA runtime's emulated call (the column-major product that shape describes, as cuBLAS
// defines it) on random shapes, transpositions, padded leading dimensions and strided batches.
#include "dlc_cuda_calls.h"
#include "dlc_kernels.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

TEST_CASE("cuBLAS products through cublasGemmShape equal the CPU's sgemm", "[cuda][gemm]") {
  std::mt19937 rng(1202);
  dlc_cuda_context *context = nullptr;
  REQUIRE(dlc_cuda_context_create(0, &context) == DLC_OK);
  for (int trial = 0; trial < 300; ++trial) {
    const bool transA = randomInt(rng, 0, 1), transB = randomInt(rng, 0, 1);
    const int64_t m = randomInt(rng, 0, 9), n = randomInt(rng, 0, 9), k = randomInt(rng, 0, 9);
    // Row-major leading dimensions: at least the stored row's length, sometimes padded.
    const int64_t lda = (transA ? m : k) + randomInt(rng, 0, 2),
                  ldb = (transB ? k : n) + randomInt(rng, 0, 2), ldc = n + randomInt(rng, 0, 2);
    const int64_t aRows = transA ? k : m, bRows = transB ? n : k;
    dlc::cuda::GemmBatch batch;
    batch.count = randomInt(rng, 1, 3);
    // Each operand either advances per product or (stride 0) is shared by all of them.
    batch.strideA = randomInt(rng, 0, 1) * aRows * lda;
    batch.strideB = randomInt(rng, 0, 1) * bRows * ldb;
    batch.strideC = m * ldc;
    const float alpha = randomInt(rng, 0, 1) ? 1.0f : 0.5f,
                beta = randomInt(rng, 0, 1) ? 0.0f : 2.0f;
    INFO("trial " << trial << ": " << m << "x" << n << "x" << k << " trans " << transA << transB
                  << " batch " << batch.count);
    const size_t aSize = size_t((batch.count - 1) * batch.strideA + aRows * lda) + 1,
                 bSize = size_t((batch.count - 1) * batch.strideB + bRows * ldb) + 1,
                 cSize = size_t(batch.count * batch.strideC) + 1;
    std::vector<float> a = randomFloats(rng, aSize, -1.0f, 1.0f);
    std::vector<float> b = randomFloats(rng, bSize, -1.0f, 1.0f);
    std::vector<float> expected = randomFloats(rng, cSize, -1.0f, 1.0f);
    std::vector<float> actual = expected;
    if (beta == 0.0f) // beta 0 must not read C: NaN there stays out of the result
      for (int64_t i = 0; i < batch.count * batch.strideC; ++i)
        actual[size_t(i)] = NAN;
    for (int64_t i = 0; i < batch.count; ++i)
      dlc::rt::sgemm(transA, transB, m, n, k, alpha, a.data() + i * batch.strideA, lda,
                     b.data() + i * batch.strideB, ldb, beta, expected.data() + i * batch.strideC,
                     ldc);
    REQUIRE(dlc::cuda::sgemm(context, false, transA, transB, m, n, k, alpha, a.data(), lda,
                             b.data(), ldb, beta, actual.data(), ldc, batch) == nullptr);
    for (int64_t i = 0; i < batch.count; ++i)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          const size_t at = size_t(i * batch.strideC + r * ldc + c);
          REQUIRE(std::fabs(actual[at] - expected[at]) <= 1e-5f * (1.0f + std::fabs(expected[at])));
        }
  }
  dlc_cuda_context_release(context);
}

TEST_CASE("cublasGemmShape swaps the operands and refuses sizes beyond int", "[cuda][gemm]") {
  dlc::cuda::CublasGemmShape shape;
  dlc::cuda::GemmBatch batch;
  batch.count = 4;
  batch.strideA = 6;
  batch.strideB = 0;
  batch.strideC = 10;
  REQUIRE(dlc::cuda::cublasGemmShape(true, false, 2, 5, 3, 2, 5, 5, batch, shape));
  CHECK((!shape.transFirst && shape.transSecond && shape.m == 5 && shape.n == 2 && shape.k == 3));
  CHECK((shape.ldFirst == 5 && shape.ldSecond == 2 && shape.ldc == 5 && shape.count == 4));
  CHECK((shape.strideFirst == 0 && shape.strideSecond == 6 && shape.strideC == 10));
  // An empty product still gets leading dimensions of at least 1.
  REQUIRE(dlc::cuda::cublasGemmShape(false, false, 2, 0, 0, 0, 0, 0, {}, shape));
  CHECK((shape.ldFirst == 1 && shape.ldSecond == 1 && shape.ldc == 1));
  CHECK_FALSE(dlc::cuda::cublasGemmShape(false, false, int64_t(1) << 31, 1, 1, 1, 1, 1, {}, shape));
  batch.count = int64_t(1) << 31;
  CHECK_FALSE(dlc::cuda::cublasGemmShape(false, false, 1, 1, 1, 1, 1, 1, batch, shape));
}
