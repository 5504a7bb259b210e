// A row-major product as cuBLAS's column-major GEMM computes it: a pure function of the
// product's shape, shared by the CUDA runtime's cuBLAS call and its emulation (which runs the
// column-major product it describes), so the mapping is checked without a GPU. Needs no CUDA
// header.
#ifndef DLC_CUDA_GEMM_H
#define DLC_CUDA_GEMM_H

#include <stdint.h>

namespace dlc {
namespace cuda {

// `count` products of one shape in one call, the i-th at a + i * strideA, b + i * strideB and
// c + i * strideC (a stride of 0 shares an operand between products).
struct GemmBatch {
  int64_t count = 1, strideA = 0, strideB = 0, strideC = 0;
};

// Column-major C[m x n] = op(first)[m x k] op(second)[k x n] (+ beta C), each of `count`
// products at the strides given, every size as cuBLAS's int.
struct CublasGemmShape {
  bool transFirst, transSecond;
  int m, n, k, ldFirst, ldSecond, ldc, count;
  int64_t strideFirst, strideSecond, strideC;
};

// Row-major C = op(A) op(B) (C m x n, leading dimensions as dlc::rt::sgemm takes them) is
// column-major C^T = op(B)^T op(A)^T on the same buffers: `first` is B and `second` is A, each
// transposed as its row-major flag says. Leading dimensions become at least 1 (cuBLAS refuses
// 0 even for an empty product). False when a size does not fit cuBLAS's int.
inline bool cublasGemmShape(bool transA, bool transB, int64_t m, int64_t n, int64_t k, int64_t lda,
                            int64_t ldb, int64_t ldc, const GemmBatch &batch,
                            CublasGemmShape &shape) {
  const int64_t limit = 0x7fffffff;
  auto atLeastOne = [](int64_t v) { return v < 1 ? int64_t(1) : v; };
  const int64_t sizes[] = {m, n, k, atLeastOne(lda), atLeastOne(ldb), atLeastOne(ldc), batch.count};
  for (int64_t size : sizes)
    if (size < 0 || size > limit)
      return false;
  shape = {transB,           transA,        int(n),        int(m),
           int(k),           int(sizes[4]), int(sizes[3]), int(sizes[5]),
           int(batch.count), batch.strideB, batch.strideA, batch.strideC};
  return true;
}

} // namespace cuda
} // namespace dlc

#endif // DLC_CUDA_GEMM_H
