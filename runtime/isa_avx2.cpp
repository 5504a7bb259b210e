// Kernels for AVX2 + FMA (x86-64-v3): the blocked GEMM (a 6 x 16 register tile), the
// depthwise row kernels (four 8-float accumulators), the channels-last pointwise kernel,
// planar max pooling, the padded-planes convolution, Winograd's tile transforms and the
// vector math (8 lanes). Their code is compiled for that target (GCC and clang pragmas
// below); only the entry points and the plain declarations included first are not.
#if defined(__x86_64__)
#include <immintrin.h>

#include "gemm.h"

#include <cstring>

// Everything defined from here to the pop is compiled for the target; the declarations
// included above are not.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#include "depthwise_kernel.h"
#include "gemm_kernel.h"
#include "planar_input_kernel.h"
#include "plane_conv_kernel.h"
#include "pointwise_kernel.h"
#include "pool_kernel.h"
#include "vector_math.h"
#include "winograd_kernel.h"

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
  static __m256i firstLanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec loadPartial(const float *p, int64_t n) { return _mm256_maskload_ps(p, firstLanes(n)); }
  static void storePartial(float *p, Vec v, int64_t n) {
    _mm256_maskstore_ps(p, firstLanes(n), v);
  }
  // Lanes [first, first + n) of v to p[0, n), and p[0, n) into those lanes of `into`.
  static void storeLanes(float *p, Vec v, int64_t first, int64_t n) {
    const __m256i down = _mm256_add_epi32(_mm256_set1_epi32(int(first)), laneIndices());
    storePartial(p, _mm256_permutevar8x32_ps(v, down), n);
  }
  static Vec loadLanes(Vec into, const float *p, int64_t first, int64_t n) {
    const __m256i up = _mm256_sub_epi32(laneIndices(), _mm256_set1_epi32(int(first)));
    const Vec moved = _mm256_permutevar8x32_ps(loadPartial(p, n), up);
    const __m256i inside = _mm256_and_si256(_mm256_cmpgt_epi32(up, _mm256_set1_epi32(-1)),
                                            _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), up));
    return _mm256_blendv_ps(into, moved, _mm256_castsi256_ps(inside));
  }
  static __m256i laneIndices() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec maxOrNan(Vec kept, Vec v) {
    return _mm256_blendv_ps(_mm256_max_ps(v, kept), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  // Lanes 0, 2, 4... of a then of b, and lanes 1, 3, 5...: shuffle_ps picks them within each
  // 128-bit half (a0 a2 b0 b2 | a4 a6 b4 b6), the 64-bit permute puts a's pairs first.
  static void deinterleave(Vec a, Vec b, Vec &even, Vec &odd) {
    even = pairsInOrder(_mm256_shuffle_ps(a, b, 0x88));
    odd = pairsInOrder(_mm256_shuffle_ps(a, b, 0xdd));
  }
  static Vec pairsInOrder(Vec v) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8));
  }
};

// The entry points themselves need no wide instructions: they only call the kernels.
void runAvx2(const GemmArgs &g) { BlockedGemm<Avx2>::run(g); }
void depthwiseRunAvx2(const DepthwiseRowArgs &r) { DepthwiseRow<Avx2>::run(r); }
void depthwiseNhwcRunAvx2(const DepthwiseNhwcRowArgs &r) { DepthwiseNhwcRow<Avx2>::run(r); }
void planarInputRunAvx2(const PlanarInputRowArgs &r) { PlanarInputRow<Avx2>::run(r); }
void pointwiseNhwcRunAvx2(const PointwiseNhwcArgs &a) { PointwiseNhwc<Avx2>::run(a); }
void maxPoolPlanesRunAvx2(const MaxPoolPlanesArgs &a) { MaxPoolPlanar<Avx2>::run(a); }
void planeConvRunAvx2(const PlaneConvArgs &a) { PlaneConv<Avx2>::run(a); }
void planePhasesRunAvx2(const PlanePhasesArgs &a) { PlanePhases<Avx2>::run(a); }
void winogradInputRunAvx2(const WinogradInputArgs &a) { WinogradTiles<Avx2>::run(a); }
void winogradOutputRunAvx2(const WinogradOutputArgs &a) { WinogradTiles<Avx2>::run(a); }
void mathRunAvx2(MathFunction function, const float *x, float *y, int64_t n) {
  VectorMath<Avx2>::run(function, x, y, n);
}
void layerNormRowsRunAvx2(const LayerNormRowsArgs &a) { VectorMath<Avx2>::layerNormRows(a); }
void softmaxColumnsRunAvx2(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                          bool log) {
  VectorMath<Avx2>::softmaxColumns(x, y, n, inner, width, log);
}
void softmaxRowsRunAvx2(const float *x, float *y, int64_t rows, int64_t n, bool log,
                         float *sums) {
  VectorMath<Avx2>::softmaxRows(x, y, rows, n, log, sums);
}
} // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

void sgemmBlockedAvx2(const GemmArgs &g) { runAvx2(g); }
void depthwiseRowAvx2(const DepthwiseRowArgs &r) { depthwiseRunAvx2(r); }
void depthwiseNhwcRowAvx2(const DepthwiseNhwcRowArgs &r) { depthwiseNhwcRunAvx2(r); }
void planarInputRowAvx2(const PlanarInputRowArgs &r) { planarInputRunAvx2(r); }
void pointwiseNhwcAvx2(const PointwiseNhwcArgs &a) { pointwiseNhwcRunAvx2(a); }
void maxPoolPlanesAvx2(const MaxPoolPlanesArgs &a) { maxPoolPlanesRunAvx2(a); }
void planeConvAvx2(const PlaneConvArgs &a) { planeConvRunAvx2(a); }
void planePhasesAvx2(const PlanePhasesArgs &a) { planePhasesRunAvx2(a); }
void winogradInputAvx2(const WinogradInputArgs &a) { winogradInputRunAvx2(a); }
void winogradOutputAvx2(const WinogradOutputArgs &a) { winogradOutputRunAvx2(a); }
void mathAvx2(MathFunction function, const float *x, float *y, int64_t n) {
  mathRunAvx2(function, x, y, n);
}
void layerNormRowsAvx2(const LayerNormRowsArgs &a) { layerNormRowsRunAvx2(a); }
void softmaxColumnsAvx2(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                       bool log) {
  softmaxColumnsRunAvx2(x, y, n, inner, width, log);
}
void softmaxRowsAvx2(const float *x, float *y, int64_t rows, int64_t n, bool log,
                      float *sums) {
  softmaxRowsRunAvx2(x, y, rows, n, log, sums);
}

} // namespace rt
} // namespace dlc
#endif
