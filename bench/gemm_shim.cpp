// C entry points into the runtime's sgemm for bench/gemm.py (ctypes cannot call C++ names).
#include "gemm.h"

extern "C" int dlc_bench_isa() { return int(dlc::rt::selectedCpuIsa()); }

extern "C" size_t dlc_bench_packed_bytes(int operand, int64_t rows, int64_t k) {
  return operand == 0 ? dlc::rt::packedGemmABytes(rows, k) : dlc::rt::packedGemmBBytes(k, rows);
}

extern "C" void dlc_bench_pack(int operand, int trans, int64_t rows, int64_t k, const float *x,
                               int64_t ld, float *packed) {
  if (operand == 0)
    dlc::rt::packGemmA(trans, rows, k, x, ld, packed);
  else
    dlc::rt::packGemmB(trans, k, rows, x, ld, packed);
}

// C = op(A) op(B) on one instruction set's kernels; packedA / packedB (or null) replace a / b,
// as constant weights do in compiled models.
extern "C" void dlc_bench_sgemm(int isa, int transA, int transB, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t lda, const float *b, int64_t ldb,
                                float *c, int64_t ldc, const float *packedA,
                                const float *packedB) {
  dlc::rt::GemmArgs g{bool(transA), bool(transB), m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc,
                      {}, {}, {}};
  if (packedA)
    g.packedA = {packedA, int64_t(dlc::rt::packedGemmABytes(m, k) / sizeof(float) / k), 0};
  if (packedB)
    g.packedB = {packedB, int64_t(dlc::rt::packedGemmBBytes(k, n) / sizeof(float) / k), 0};
  dlc::rt::sgemmOn(static_cast<dlc::rt::CpuIsa>(isa), g);
}
