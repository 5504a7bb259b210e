// Kernels for AVX-512F (x86-64-v4): the blocked GEMM (a 12 x 32 register tile), the
// depthwise row kernels (four 16-float accumulators), the channels-last pointwise kernel,
// planar max pooling, the padded-planes convolution, Winograd's tile transforms and the
// vector math (16 lanes). Their code is compiled for that target (GCC and clang pragmas
// below); only the entry points and the plain declarations included first are not.
#if defined(__x86_64__)
#include <immintrin.h>

#include "gemm.h"

#include <cstring>

// Everything defined from here to the pop is compiled for the target; the declarations
// included above are not.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
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
struct Avx512 {
  using Vec = __m512;
  static constexpr int64_t kLanes = 16, kRows = 12;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float *p) { return _mm512_loadu_ps(p); }
  static void store(float *p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static __mmask16 firstLanes(int64_t n) { return __mmask16((1u << n) - 1); }
  static Vec loadPartial(const float *p, int64_t n) {
    return _mm512_maskz_loadu_ps(firstLanes(n), p);
  }
  static void storePartial(float *p, Vec v, int64_t n) {
    _mm512_mask_storeu_ps(p, firstLanes(n), v);
  }
  // Lanes [first, first + n) of v to p[0, n), and p[0, n) into those lanes of `into`: in
  // registers (compress, expand), as the memory forms are slow on Zen 4.
  static void storeLanes(float *p, Vec v, int64_t first, int64_t n) {
    storePartial(p, _mm512_maskz_compress_ps(__mmask16(firstLanes(n) << first), v), n);
  }
  static Vec loadLanes(Vec into, const float *p, int64_t first, int64_t n) {
    return _mm512_mask_expand_ps(into, __mmask16(firstLanes(n) << first), loadPartial(p, n));
  }
  // The zero-masked forms: GCC 12's plain _mm512_max_ps passes an undefined vector that
  // -Wmaybe-uninitialized reports.
  static Vec max(Vec a, Vec b) { return _mm512_maskz_max_ps(0xffff, a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_maskz_min_ps(0xffff, a, b); }
  // p * 2^n for integral n (vector_math.h's exp), rounded once.
  static constexpr bool kScalesByPowerOf2 = true;
  static Vec scaleByPowerOf2(Vec p, Vec n) { return _mm512_maskz_scalef_ps(0xffff, p, n); }
  // max(v, kept) keeps kept where either is NaN; a NaN v then replaces it.
  static Vec maxOrNan(Vec kept, Vec v) {
    return _mm512_mask_mov_ps(max(v, kept), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
  }
  // Lanes 0, 2, 4... of a then of b, and lanes 1, 3, 5...
  static void deinterleave(Vec a, Vec b, Vec &even, Vec &odd) {
    const __m512i evens =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    even = _mm512_permutex2var_ps(a, evens, b);
    odd = _mm512_permutex2var_ps(a, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), b);
  }
};

// The entry points themselves need no wide instructions: they only call the kernels.
void runAvx512(const GemmArgs &g) { BlockedGemm<Avx512>::run(g); }
void depthwiseRunAvx512(const DepthwiseRowArgs &r) { DepthwiseRow<Avx512>::run(r); }
void depthwiseNhwcRunAvx512(const DepthwiseNhwcRowArgs &r) { DepthwiseNhwcRow<Avx512>::run(r); }
void planarInputRunAvx512(const PlanarInputRowArgs &r) { PlanarInputRow<Avx512>::run(r); }
void pointwiseNhwcRunAvx512(const PointwiseNhwcArgs &a) { PointwiseNhwc<Avx512>::run(a); }
void maxPoolPlanesRunAvx512(const MaxPoolPlanesArgs &a) { MaxPoolPlanar<Avx512>::run(a); }
void planeConvRunAvx512(const PlaneConvArgs &a) { PlaneConv<Avx512>::run(a); }
void planePhasesRunAvx512(const PlanePhasesArgs &a) { PlanePhases<Avx512>::run(a); }
void winogradInputRunAvx512(const WinogradInputArgs &a) { WinogradTiles<Avx512>::run(a); }
void winogradOutputRunAvx512(const WinogradOutputArgs &a) { WinogradTiles<Avx512>::run(a); }
void mathRunAvx512(MathFunction function, const float *x, float *y, int64_t n) {
  VectorMath<Avx512>::run(function, x, y, n);
}
void layerNormRowsRunAvx512(const LayerNormRowsArgs &a) { VectorMath<Avx512>::layerNormRows(a); }
void softmaxColumnsRunAvx512(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                          bool log) {
  VectorMath<Avx512>::softmaxColumns(x, y, n, inner, width, log);
}
void softmaxRowsRunAvx512(const float *x, float *y, int64_t rows, int64_t n, bool log,
                         float *sums) {
  VectorMath<Avx512>::softmaxRows(x, y, rows, n, log, sums);
}
} // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

void sgemmBlockedAvx512(const GemmArgs &g) { runAvx512(g); }
void depthwiseRowAvx512(const DepthwiseRowArgs &r) { depthwiseRunAvx512(r); }
void depthwiseNhwcRowAvx512(const DepthwiseNhwcRowArgs &r) { depthwiseNhwcRunAvx512(r); }
void planarInputRowAvx512(const PlanarInputRowArgs &r) { planarInputRunAvx512(r); }
void pointwiseNhwcAvx512(const PointwiseNhwcArgs &a) { pointwiseNhwcRunAvx512(a); }
void maxPoolPlanesAvx512(const MaxPoolPlanesArgs &a) { maxPoolPlanesRunAvx512(a); }
void planeConvAvx512(const PlaneConvArgs &a) { planeConvRunAvx512(a); }
void planePhasesAvx512(const PlanePhasesArgs &a) { planePhasesRunAvx512(a); }
void winogradInputAvx512(const WinogradInputArgs &a) { winogradInputRunAvx512(a); }
void winogradOutputAvx512(const WinogradOutputArgs &a) { winogradOutputRunAvx512(a); }
void mathAvx512(MathFunction function, const float *x, float *y, int64_t n) {
  mathRunAvx512(function, x, y, n);
}
void layerNormRowsAvx512(const LayerNormRowsArgs &a) { layerNormRowsRunAvx512(a); }
void softmaxColumnsAvx512(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                       bool log) {
  softmaxColumnsRunAvx512(x, y, n, inner, width, log);
}
void softmaxRowsAvx512(const float *x, float *y, int64_t rows, int64_t n, bool log,
                      float *sums) {
  softmaxRowsRunAvx512(x, y, rows, n, log, sums);
}

} // namespace rt
} // namespace dlc
#endif
