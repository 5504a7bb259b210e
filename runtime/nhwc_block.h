// Internal to the runtime: what the channels-last row kernels (depthwise_kernel.h,
// planar_input_kernel.h) share: a block of output columns times vectors of channels, the last
// vector maybe partial, started from the bias and finished with the residual, the clamp or
// math function and the store. Written over the vector traits of gemm_kernel.h; everything
// here has internal linkage, for the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_NHWC_BLOCK_H
#define DLC_RUNTIME_NHWC_BLOCK_H

#include "gemm.h"
#include "vector_math.h"

namespace dlc {
namespace rt {
namespace {

// Loads and stores of a block's Count vectors of channels; with Partial, the last holds
// `lanes` channels.
template <class V, int64_t Count, bool Partial> struct NhwcLanes {
  using Vec = typename V::Vec;
  int64_t lanes;
  Vec load(const float *p, int64_t v) const {
    return Partial && v == Count - 1 ? V::loadPartial(p, lanes) : V::load(p);
  }
  void store(float *p, Vec x, int64_t v) const {
    if (Partial && v == Count - 1)
      V::storePartial(p, x, lanes);
    else
      V::store(p, x);
  }
};

// A block's sums start from the bias of channels [c, c + Count * kLanes) (zero without one).
template <class V, int64_t Count, int64_t Columns, bool Partial>
__attribute__((always_inline)) inline void
startNhwcBlock(const float *bias, int64_t c, NhwcLanes<V, Count, Partial> m,
               typename V::Vec (&acc)[Columns][Count]) {
#pragma GCC unroll 4
  for (int64_t v = 0; v < Count; ++v) {
    const typename V::Vec start = bias ? m.load(bias + c + v * V::kLanes, v) : V::zero();
#pragma GCC unroll 32
    for (int64_t col = 0; col < Columns; ++col)
      acc[col][v] = start;
  }
}

// Residual, clamp or math function, and store of output columns [o, o + Columns) from
// channel c, the row's columns `columnStep` floats apart; `r` has the row's residual, y and
// activation (DepthwiseNhwcRowArgs, PlanarInputRowArgs). Each step runs over the whole block,
// its check made once: checked per column, the block's sums left the registers for the
// stack and the checks made a 3x3 map of 16 channels spend more time finishing than summing.
// Inlined into the block: called, it took the sums through memory.
template <class V, int64_t Count, int64_t Columns, bool Partial, class RowArgs>
__attribute__((always_inline)) inline void
finishNhwcBlock(const RowArgs &r, int64_t columnStep, int64_t o, int64_t c,
                NhwcLanes<V, Count, Partial> m, typename V::Vec (&acc)[Columns][Count]) {
  using Vec = typename V::Vec;
  constexpr int64_t kLanes = V::kLanes;
  if (r.residual) {
    // 1 * residual is exact, so this is the unfused add's single rounding.
    const Vec one = V::broadcast(1.0f);
    const float *residual = r.residual + o * columnStep + c;
#pragma GCC unroll 32
    for (int64_t col = 0; col < Columns; ++col)
#pragma GCC unroll 4
      for (int64_t v = 0; v < Count; ++v)
        acc[col][v] = V::fma(one, m.load(residual + col * columnStep + v * kLanes, v), acc[col][v]);
  }
  const RowActivation &a = r.activation;
  if (a.clamp) {
    // scalar::clampValue's order: a NaN passes both (max and min return their second operand).
    const Vec lo = V::broadcast(a.lo), hi = V::broadcast(a.hi);
#pragma GCC unroll 32
    for (int64_t col = 0; col < Columns; ++col)
#pragma GCC unroll 4
      for (int64_t v = 0; v < Count; ++v)
        acc[col][v] = V::min(hi, V::max(lo, acc[col][v]));
  } else if (a.applyMath) {
    for (int64_t col = 0; col < Columns; ++col)
      for (int64_t v = 0; v < Count; ++v)
        acc[col][v] = VectorMath<V>::apply(a.math, acc[col][v]);
  }
  float *y = r.y + o * columnStep + c;
#pragma GCC unroll 32
  for (int64_t col = 0; col < Columns; ++col)
#pragma GCC unroll 4
    for (int64_t v = 0; v < Count; ++v)
      m.store(y + col * columnStep + v * kLanes, acc[col][v], v);
}

} // namespace
} // namespace rt
} // namespace dlc

#endif
