// Internal to the runtime: how the epilogues that apply Clip or Relu inside other kernels read
// their bounds (clampValue, scalar_ops.h, is the one definition of the clamp itself), and
// which activations are the vector math's functions.
#ifndef DLC_RUNTIME_CLAMP_H
#define DLC_RUNTIME_CLAMP_H

#include "dlc_kernels.h"

#include <limits>

namespace dlc {
namespace rt {

// Whether the epilogue's activation is a clamp (Relu: [0, inf), Clip: [min, max]), and its
// bounds.
inline bool epilogueClamp(const Epilogue &epilogue, float &lo, float &hi) {
  if (epilogue.activation == Activation::Relu) {
    lo = 0.0f;
    hi = std::numeric_limits<float>::infinity();
    return true;
  }
  lo = epilogue.min;
  hi = epilogue.max;
  return epilogue.activation == Activation::Clip;
}

// Whether the epilogue's activation is one of the vector math's functions (vector_math.h):
// applyEpilogue runs mathF32 for it, and a kernel that applies the function to its sums in
// registers gives the same bits.
inline bool epilogueMath(const Epilogue &epilogue, MathFunction &function) {
  switch (epilogue.activation) {
  case Activation::Silu:
    function = MathFunction::Silu;
    return true;
  case Activation::HardSwish:
    function = MathFunction::HardSwish;
    return true;
  default:
    return false;
  }
}

} // namespace rt
} // namespace dlc

#endif
