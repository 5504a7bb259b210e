// Internal to the runtime: the shapes convolution kernels share (conv.cpp and the
// padded-planes path, plane_conv.cpp). Compiled only in baseline translation units, so inline
// definitions are safe here (unlike gemm.h's).
#ifndef DLC_RUNTIME_CONV_SHAPE_H
#define DLC_RUNTIME_CONV_SHAPE_H

#include "dlc_kernels.h"
#include "window.h"

namespace dlc {
namespace rt {

inline int64_t product3(const int64_t *v) { return v[0] * v[1] * v[2]; }

// A 1x1 window with unit stride and no padding reads each input pixel exactly once in order,
// so the input itself is the im2col matrix.
inline bool isPointwise(const WindowParams &w) {
  for (int d = 0; d < 3; ++d)
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.padBegin[d] != 0 || w.dilation[d] != 1 ||
        w.out[d] != w.in[d])
      return false;
  return true;
}

// Each output channel reads one input channel over a 1-D or 2-D window: a direct loop beats
// im2col plus a one-row product per channel.
inline bool isDepthwise(const ConvParams &p) {
  const WindowParams &w = p.window;
  return p.groups == w.channels && p.outChannels % p.groups == 0 && isPlanar(w);
}

// The workspace bound of an im2col conv (and of the paths that must stay under it).
inline int64_t workspaceLimitOf(const ConvParams &p) {
  return p.workspaceLimit > 0 ? p.workspaceLimit : int64_t(1) << 20;
}

// Per-group matrix shapes: the weights of a group are outPerGroup x k, its input planes
// (im2col'ed) k x outPlane, its output outPerGroup x outPlane.
struct GroupShape {
  int64_t inPlane, outPlane, inPerGroup, outPerGroup, k;
  bool pointwise;

  explicit GroupShape(const ConvParams &p)
      : inPlane(product3(p.window.in)), outPlane(product3(p.window.out)),
        inPerGroup(p.window.channels / p.groups), outPerGroup(p.outChannels / p.groups),
        k(inPerGroup * product3(p.window.kernel)), pointwise(isPointwise(p.window)) {}

  // Offsets of group g of batch item n in x (or dx), y (or dy), and w (or dw).
  int64_t xOffset(const ConvParams &p, int64_t n, int64_t g) const {
    return (n * p.window.channels + g * inPerGroup) * inPlane;
  }
  int64_t yOffset(const ConvParams &p, int64_t n, int64_t g) const {
    return (n * p.outChannels + g * outPerGroup) * outPlane;
  }
  int64_t wOffset(int64_t g) const { return g * outPerGroup * k; }
};

} // namespace rt
} // namespace dlc

#endif
