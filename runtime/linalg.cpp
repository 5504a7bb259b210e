#include "dlc_runtime.h"

#include <algorithm>
#include <cmath>

namespace dlc {
namespace rt {

namespace {

// Register tile of the micro-kernel: 8x8 accumulators (16 SSE registers, a few spilled to L1)
// measured fastest at plain -O2; 6-row tiles make GCC fall back to 2-wide vectors.
constexpr int64_t kMR = 8;
constexpr int64_t kNR = 8;
// A kMC x kKC block of A stays in L2 while the kKC x kNR panel of B stays in L1. Both buffers
// live on the stack (about 72 KiB) because kernels must not allocate.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 64;

// op(A)(i, p) and op(B)(p, j) for row-major storage.
inline float opA(bool trans, const float *a, int64_t lda, int64_t i, int64_t p) {
  return trans ? a[p * lda + i] : a[i * lda + p];
}
inline float opB(bool trans, const float *b, int64_t ldb, int64_t p, int64_t j) {
  return trans ? b[j * ldb + p] : b[p * ldb + j];
}

// Packs rows [i0, i0+mc) x cols [p0, p0+kc) of op(A) into kMR-row micro-panels, each stored
// column by column; rows past mc are zero so the micro-kernel never needs a ragged edge.
void packA(bool trans, const float *a, int64_t lda, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
           float *dst) {
  for (int64_t ir = 0; ir < mc; ir += kMR) {
    int64_t mr = std::min(kMR, mc - ir);
    if (!trans) {
      for (int64_t i = 0; i < mr; ++i) {
        const float *src = a + (i0 + ir + i) * lda + p0;
        for (int64_t p = 0; p < kc; ++p)
          dst[p * kMR + i] = src[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const float *src = a + (p0 + p) * lda + i0 + ir;
        for (int64_t i = 0; i < mr; ++i)
          dst[p * kMR + i] = src[i];
      }
    }
    for (int64_t i = mr; i < kMR; ++i)
      for (int64_t p = 0; p < kc; ++p)
        dst[p * kMR + i] = 0.0f;
    dst += kMR * kc;
  }
}

// Packs rows [p0, p0+kc) x cols [j0, j0+nr) of op(B) row by row, zero-padding to kNR columns.
void packB(bool trans, const float *b, int64_t ldb, int64_t p0, int64_t j0, int64_t kc, int64_t nr,
           float *dst) {
  if (!trans && nr == kNR) {
    for (int64_t p = 0; p < kc; ++p) {
      const float *src = b + (p0 + p) * ldb + j0;
      for (int64_t j = 0; j < kNR; ++j)
        dst[p * kNR + j] = src[j];
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    for (int64_t j = 0; j < kNR; ++j)
      dst[p * kNR + j] = j < nr ? opB(trans, b, ldb, p0 + p, j0 + j) : 0.0f;
}

// out = packed A micro-panel (kMR x kc) * packed B panel (kc x kNR). Fully unrolling the
// fixed-size i/j loops lets GCC's SLP vectoriser keep acc in registers at -O2; left rolled,
// acc round-trips through memory every iteration.
__attribute__((always_inline)) inline void microKernelBody(int64_t kc, const float *__restrict a,
                                                           const float *__restrict b,
                                                           float *__restrict out) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 8
    for (int64_t i = 0; i < kMR; ++i)
#pragma GCC unroll 8
      for (int64_t j = 0; j < kNR; ++j)
        acc[i][j] += a[i] * b[j];
    a += kMR;
    b += kNR;
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kNR; ++j)
      out[i * kNR + j] = acc[i][j];
}

using MicroKernel = void (*)(int64_t, const float *, const float *, float *);

void microKernelBaseline(int64_t kc, const float *a, const float *b, float *out) {
  microKernelBody(kc, a, b, out);
}

// The same code for AVX2: the 8x8 tile becomes eight 8-wide accumulators. Not FMA: separate
// multiplies and adds round as the baseline does, so results do not depend on the machine.
__attribute__((target("avx2"))) void microKernelAvx2(int64_t kc, const float *a, const float *b,
                                                     float *out) {
  microKernelBody(kc, a, b, out);
}

// Chosen by the CPU the library runs on, so it still runs on any x86-64. A plain check rather
// than an ifunc: ifunc resolvers run before sanitizer runtimes are initialised.
MicroKernel selectMicroKernel() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? microKernelAvx2 : microKernelBaseline;
}

// C tile = alpha * acc + beta * C; beta == 0 must not read C, which may be uninitialised.
void storeTile(const float *acc, float *c, int64_t ldc, int64_t mr, int64_t nr, float alpha,
               float beta) {
  for (int64_t i = 0; i < mr; ++i) {
    float *row = c + i * ldc;
    const float *src = acc + i * kNR;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * src[j];
    } else {
      for (int64_t j = 0; j < nr; ++j)
        row[j] = alpha * src[j] + beta * row[j];
    }
  }
}

void scaleC(float *c, int64_t ldc, int64_t m, int64_t n, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
  }
}

// Eight independent partial sums break the add dependency chain and map onto two SSE
// registers; a single accumulator would run at one add per FP-add latency.
float dot(const float *x, const float *y, int64_t k) {
  float partial[8] = {};
  int64_t p = 0;
  for (; p + 8 <= k; p += 8)
    for (int64_t l = 0; l < 8; ++l)
      partial[l] += x[p + l] * y[p + l];
  float sum = 0.0f;
  for (; p < k; ++p)
    sum += x[p] * y[p];
  for (int64_t l = 0; l < 8; ++l)
    sum += partial[l];
  return sum;
}

// y += s * x in fixed chunks of 8: GCC's -O2 cost model only vectorises loops whose trip
// count needs no scalar epilogue.
void axpy(float s, const float *__restrict x, float *__restrict y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int64_t l = 0; l < 8; ++l)
      y[j + l] += s * x[j + l];
  for (; j < n; ++j)
    y[j] += s * x[j];
}

// With fewer rows than one micro-panel the packed path mostly multiplies padding and reads B
// in short strided strips; row-wise axpy or dot loops stream B contiguously instead, which
// measured faster for every m < kMR even though they read B once per row.
void gemmFewRows(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    if (transB) {
      const float *ai = a + i * lda;
      for (int64_t j = 0; j < n; ++j) {
        float v = alpha * dot(ai, b + j * ldb, k);
        row[j] = beta == 0.0f ? v : v + beta * row[j];
      }
      continue;
    }
    scaleC(row, ldc, 1, n, beta);
    for (int64_t p = 0; p < k; ++p)
      axpy(alpha * opA(transA, a, lda, i, p), b + p * ldb, row, n);
  }
}

} // namespace

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0 || alpha == 0.0f) {
    scaleC(c, ldc, m, n, beta);
    return;
  }
  if (n == 1 && !transA && (transB || ldb == 1)) {
    // Matrix-vector product: both operands are contiguous rows, so each output is one dot.
    for (int64_t i = 0; i < m; ++i) {
      float v = alpha * dot(a + i * lda, b, k);
      c[i * ldc] = beta == 0.0f ? v : v + beta * c[i * ldc];
    }
    return;
  }
  if (m < kMR && !(transA && transB)) {
    gemmFewRows(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }

  static const MicroKernel microKernel = selectMicroKernel();
  alignas(64) float packedA[kMC * kKC];
  alignas(64) float packedB[kKC * kNR];
  alignas(64) float tile[kMR * kNR];
  for (int64_t pc = 0; pc < k; pc += kKC) {
    int64_t kc = std::min(kKC, k - pc);
    // Later k blocks accumulate onto what the first one stored.
    float blockBeta = pc == 0 ? beta : 1.0f;
    for (int64_t ic = 0; ic < m; ic += kMC) {
      int64_t mc = std::min(kMC, m - ic);
      packA(transA, a, lda, ic, pc, mc, kc, packedA);
      for (int64_t jc = 0; jc < n; jc += kNR) {
        int64_t nr = std::min(kNR, n - jc);
        packB(transB, b, ldb, pc, jc, kc, nr, packedB);
        for (int64_t ir = 0; ir < mc; ir += kMR) {
          microKernel(kc, packedA + ir * kc, packedB, tile);
          storeTile(tile, c + (ic + ir) * ldc + jc, ldc, std::min(kMR, mc - ir), nr, alpha,
                    blockBeta);
        }
      }
    }
  }
}

void detF32(const float *x, float *y, int64_t count, int64_t m, void *workspace) {
  double *lu = static_cast<double *>(workspace);
  for (int64_t i = 0; i < count; ++i) {
    std::copy(x + i * m * m, x + (i + 1) * m * m, lu);
    double det = 1.0;
    for (int64_t col = 0; col < m; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(lu[r * m + col]) > std::fabs(lu[pivot * m + col]))
          pivot = r;
      if (pivot != col) {
        std::swap_ranges(lu + col * m, lu + (col + 1) * m, lu + pivot * m);
        det = -det;
      }
      det *= lu[col * m + col];
      if (det == 0.0)
        break;
      for (int64_t r = col + 1; r < m; ++r) {
        double factor = lu[r * m + col] / lu[col * m + col];
        for (int64_t c = col + 1; c < m; ++c)
          lu[r * m + c] -= factor * lu[col * m + c];
      }
    }
    y[i] = static_cast<float>(det);
  }
}

void batchedMatmulF32(const float *a, const int64_t *aOffsets, const float *b,
                      const int64_t *bOffsets, float *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  for (int64_t i = 0; i < batch; ++i)
    sgemm(false, false, m, n, k, 1.0f, a + aOffsets[i], k, b + bOffsets[i], n, 0.0f, c + i * m * n,
          n);
}

namespace {
// Each product row accumulated in Acc: uint32_t makes int32 sums wrap modulo 2^32 (as int32
// accumulation does in ONNX runtimes) without UB; double is exact enough for float64.
template <typename T, typename Acc>
void plainBatchedMatmul(const T *a, const int64_t *aOffsets, const T *b, const int64_t *bOffsets,
                        T *c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + aOffsets[i], *bi = b + bOffsets[i];
    T *ci = c + i * m * n;
    for (int64_t r = 0; r < m; ++r) {
      Acc *row = reinterpret_cast<Acc *>(ci + r * n);
      for (int64_t j = 0; j < n; ++j)
        row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        Acc x = Acc(ai[r * k + p]);
        const T *brow = bi + p * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * Acc(brow[j]);
      }
    }
  }
}
} // namespace

void batchedMatmulI32(const int32_t *a, const int64_t *aOffsets, const int32_t *b,
                      const int64_t *bOffsets, int32_t *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  plainBatchedMatmul<int32_t, uint32_t>(a, aOffsets, b, bOffsets, c, batch, m, n, k);
}

void batchedMatmulF64(const double *a, const int64_t *aOffsets, const double *b,
                      const int64_t *bOffsets, double *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  plainBatchedMatmul<double, double>(a, aOffsets, b, bOffsets, c, batch, m, n, k);
}

} // namespace rt
} // namespace dlc
