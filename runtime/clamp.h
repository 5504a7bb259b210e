// Internal to the runtime: Clip's (and Relu's) scalar definition, shared by the elementwise
// kernel and the epilogues that apply it inside other kernels, so they agree on every input
// (a NaN passes through, as ONNX Clip).
#ifndef DLC_RUNTIME_CLAMP_H
#define DLC_RUNTIME_CLAMP_H

#include "dlc_kernels.h"

#include <limits>

namespace dlc {
namespace rt {

inline float clampValue(float v, float lo, float hi) {
  const float clamped = v < lo ? lo : v;
  return clamped > hi ? hi : clamped;
}

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

} // namespace rt
} // namespace dlc

#endif
