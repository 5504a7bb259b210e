// The blocked GEMM for AVX2 + FMA (x86-64-v3): a 6 x 16 register tile. The whole file is
// compiled for that target, so it includes nothing that defines inline code beyond the
// intrinsics and gemm_kernel.h (whose functions are all internal).
#if defined(__x86_64__)
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "gemm_kernel.h"

namespace dlc {
namespace rt {
namespace {
struct Avx2 {
  using Vec = __m256;
  static constexpr int64_t kLanes = 8, kRows = 6;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec load(const float *p) { return _mm256_loadu_ps(p); }
  static void store(float *p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
};
} // namespace

void sgemmBlockedAvx2(const GemmArgs &g) { BlockedGemm<Avx2>::run(g); }

} // namespace rt
} // namespace dlc
#endif
