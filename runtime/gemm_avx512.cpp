// The blocked GEMM for AVX-512F (x86-64-v4): a 12 x 32 register tile. Compiled for that
// target as a whole; see gemm_avx2.cpp for why it includes so little.
#if defined(__x86_64__)
#pragma GCC target("avx512f,avx2,fma")
#include <immintrin.h>

#include "gemm_kernel.h"

namespace dlc {
namespace rt {
namespace {
struct Avx512 {
  using Vec = __m512;
  static constexpr int64_t kLanes = 16, kRows = 12;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float *p) { return _mm512_loadu_ps(p); }
  static void store(float *p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};
} // namespace

void sgemmBlockedAvx512(const GemmArgs &g) { BlockedGemm<Avx512>::run(g); }

} // namespace rt
} // namespace dlc
#endif
