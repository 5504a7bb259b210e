#include "plane_conv.h"

#include "clamp.h"
#include "conv_shape.h"
#include "gemm.h"
#include "parallel.h"
#include "scalar_ops.h"

#include <algorithm>

namespace dlc {
namespace rt {

// Grouped convolutions of a few channels per group (RegNet's, ResNeXt's) as a product over
// their zero-padded input planes (plane_conv_kernel.h): each tap's im2col row is the padded
// plane shifted by the tap's offset, so the kernel reads it in place; the im2col matrix
// (taps times the input) and the GEMM's packing of it are never built. Positions run over
// the padded width (the last columns of each row are computed and dropped), and a stride-2
// input is split into its four phases (even and odd rows by even and odd columns), in which
// the taps are stride-1 again. A slot of the workspace holds one group's planes and one
// panel's products; threads take whole groups, each working in its first group's slot.
namespace {
struct PlaneGeometry {
  int64_t stride, phaseRows, phaseCols, positions, outStride, phaseFloats, channelFloats;
  int64_t slotFloats;

  explicit PlaneGeometry(const ConvParams &p) {
    const WindowParams &w = p.window;
    const GroupShape s(p);
    stride = w.stride[1];
    phaseRows = ((w.out[1] - 1) * stride + w.kernel[1] + stride - 1) / stride;
    phaseCols = ((w.out[2] - 1) * stride + w.kernel[2] + stride - 1) / stride;
    positions = w.out[1] * phaseCols;
    outStride = (positions + kPlaneConvSlack - 1) / kPlaneConvSlack * kPlaneConvSlack;
    const int64_t lastOffset = (w.kernel[1] - 1) / stride * phaseCols + (w.kernel[2] - 1) / stride;
    phaseFloats = std::max(phaseRows * phaseCols, lastOffset + outStride);
    channelFloats = stride * stride * phaseFloats;
    slotFloats = s.inPerGroup * channelFloats + kPlaneConvRows * outStride;
  }

  int64_t tapOffset(int64_t k1, int64_t k2) const {
    return (k1 % stride * stride + k2 % stride) * phaseFloats + k1 / stride * phaseCols +
           k2 / stride;
  }
};

constexpr int64_t kPlaneMaxKernel = 7;
// Slots the workspace limit must hold (the im2col path's limit, so the arena does not grow):
// with fewer, threads would have no whole groups to take, where im2col splits each group.
constexpr int64_t kPlaneMinSlots = 2;
} // namespace

bool paddedPlanesApply(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (!isPlanar(w) || p.groups < 2 || isDepthwise(p) || p.channelsLast || isPointwise(w) ||
      w.dilation[1] != 1 || w.dilation[2] != 1 || w.stride[1] != w.stride[2] ||
      w.stride[1] > 2 || w.kernel[1] > kPlaneMaxKernel || w.kernel[2] > kPlaneMaxKernel ||
      p.outChannels / p.groups < kGemmFewRows)
    return false;
  return kPlaneMinSlots * PlaneGeometry(p).slotFloats * int64_t(sizeof(float)) <=
         workspaceLimitOf(p);
}

namespace {
int64_t planeSlots(const ConvParams &p) {
  const int64_t slotBytes = PlaneGeometry(p).slotFloats * int64_t(sizeof(float));
  return std::clamp<int64_t>(workspaceLimitOf(p) / slotBytes, 1, p.groups);
}

int64_t planePanelFloats(const ConvParams &p) {
  const GroupShape s(p);
  return s.k * kPlaneConvRows;
}

int64_t planeGroupWeightFloats(const ConvParams &p) {
  const GroupShape s(p);
  return (s.outPerGroup + kPlaneConvRows - 1) / kPlaneConvRows * planePanelFloats(p);
}

} // namespace

void packPlaneWeights(const ConvParams &p, const float *w, float *packed) {
  const GroupShape s(p);
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t o0 = 0; o0 < s.outPerGroup; o0 += kPlaneConvRows) {
      float *panel = packed + g * planeGroupWeightFloats(p) +
                     o0 / kPlaneConvRows * planePanelFloats(p);
      for (int64_t k = 0; k < s.k; ++k)
        for (int64_t r = 0; r < kPlaneConvRows; ++r)
          panel[k * kPlaneConvRows + r] =
              o0 + r < s.outPerGroup ? w[s.wOffset(g) + (o0 + r) * s.k + k] : 0.0f;
    }
}

namespace {
// The zero-padded phases of one input plane (in[1] x in[2]) into dst (channelFloats).
// The phases of one input plane (in[1] x in[2]) into dst (channelFloats), whose padding is
// already zero: only the positions that read the plane are written, so a slot's padding is
// zeroed once for all the groups and channels it serves.
void copyPhases(const WindowParams &w, const PlaneGeometry &geo, const float *plane,
                float *dst) {
  const int64_t s = geo.stride;
  for (int64_t phase = 0; phase < s * s; ++phase) {
    const int64_t py = phase / s, px = phase % s;
    // Columns qx in [begin, end) read the row (ix = qx * s + first), rows qy in [top, bottom)
    // read the plane (iy = qy * s + py - pad).
    const int64_t first = px - w.padBegin[2], last = w.in[2] - 1 - first;
    const int64_t begin = std::min(geo.phaseCols, first >= 0 ? 0 : (s - 1 - first) / s);
    const int64_t end =
        last < 0 ? begin : std::max(begin, std::min(geo.phaseCols, last / s + 1));
    const int64_t firstRow = py - w.padBegin[1], lastRow = w.in[1] - 1 - firstRow;
    const int64_t top = std::min(geo.phaseRows, firstRow >= 0 ? 0 : (s - 1 - firstRow) / s);
    const int64_t bottom =
        lastRow < 0 ? top : std::max(top, std::min(geo.phaseRows, lastRow / s + 1));
    float *out = dst + phase * geo.phaseFloats;
    for (int64_t qy = top; qy < bottom; ++qy) {
      const float *row = plane + (qy * s + firstRow) * w.in[2] + first;
      float *to = out + qy * geo.phaseCols;
      if (s == 1)
        std::copy(row + begin, row + end, to + begin);
      else // stride 2: a constant step the compiler vectorises
        for (int64_t qx = begin; qx < end; ++qx)
          to[qx] = row[qx * 2];
    }
  }
}

// Output plane y (out[1] x out[2]) from its products over the padded width, in the GEMM
// epilogue's order: the sum, plus the bias, plus the residual, then the activation (a clamp
// on the way, others after). Row by row, loops the compiler vectorises.
void finishPlane(const ConvParams &p, const PlaneGeometry &geo, const float *products,
                 const float *bias, const float *residual, float *y) {
  const WindowParams &w = p.window;
  float lo, hi;
  const bool clamp = epilogueClamp(p.epilogue, lo, hi);
  const float biasValue = bias ? *bias : 0.0f;
  for (int64_t oy = 0; oy < w.out[1]; ++oy) {
    const float *src = products + oy * geo.phaseCols;
    float *dst = y + oy * w.out[2];
    const float *res = residual ? residual + oy * w.out[2] : nullptr;
    if (bias)
      for (int64_t ox = 0; ox < w.out[2]; ++ox)
        dst[ox] = src[ox] + biasValue;
    else
      std::copy(src, src + w.out[2], dst);
    if (res)
      for (int64_t ox = 0; ox < w.out[2]; ++ox)
        dst[ox] += res[ox];
    if (clamp)
      for (int64_t ox = 0; ox < w.out[2]; ++ox)
        dst[ox] = scalar::clampValue(dst[ox], lo, hi);
  }
  if (!clamp)
    applyEpilogue(p.epilogue, y, w.out[1] * w.out[2]);
}

} // namespace

void planeConvF32(const ConvParams &p, const float *x, const float *packedW, const float *bias,
                  const float *residual, float *y, float *workspace) {
  const WindowParams &w = p.window;
  const GroupShape s(p);
  const PlaneGeometry geo(p);
  int64_t tapOffsets[kPlaneMaxKernel * kPlaneMaxKernel];
  for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
    for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2)
      tapOffsets[k1 * w.kernel[2] + k2] = geo.tapOffset(k1, k2);
  const int64_t slots = planeSlots(p), taps = w.kernel[1] * w.kernel[2];
  for (int64_t n = 0; n < w.batch; ++n)
    for (int64_t g0 = 0; g0 < p.groups; g0 += slots)
      parallelForWork(std::min(slots, p.groups - g0), s.outPerGroup * s.k * s.outPlane,
                      [&](int64_t first, int64_t end) {
                        float *planes = workspace + first * geo.slotFloats;
                        float *products = planes + s.inPerGroup * geo.channelFloats;
                        std::fill(planes, products, 0.0f);
                        for (int64_t slot = first; slot < end; ++slot) {
                          const int64_t g = g0 + slot;
                          const float *xg = x + s.xOffset(p, n, g);
                          for (int64_t c = 0; c < s.inPerGroup; ++c)
                            copyPhases(w, geo, xg + c * s.inPlane, planes + c * geo.channelFloats);
                          // A panel of output channels at a time: the products of one
                          // panel, not the group's, take room in the slot.
                          const float *weights = packedW + g * planeGroupWeightFloats(p);
                          for (int64_t o0 = 0; o0 < s.outPerGroup; o0 += kPlaneConvRows) {
                            const int64_t rows = std::min(kPlaneConvRows, s.outPerGroup - o0);
                            planeConv({planes, s.inPerGroup, geo.channelFloats, tapOffsets,
                                       taps, weights + o0 / kPlaneConvRows * planePanelFloats(p),
                                       rows, products, geo.outStride, geo.positions});
                            for (int64_t o = o0; o < o0 + rows; ++o) {
                              const int64_t offset = s.yOffset(p, n, g) + o * s.outPlane;
                              finishPlane(p, geo, products + (o - o0) * geo.outStride,
                                          bias ? bias + g * s.outPerGroup + o : nullptr,
                                          residual ? residual + offset : nullptr, y + offset);
                            }
                          }
                        }
                      });
}

size_t planeWeightBytes(const ConvParams &p) {
  return size_t(p.groups * planeGroupWeightFloats(p)) * sizeof(float);
}

size_t planeWorkspaceBytes(const ConvParams &p) {
  return size_t(planeSlots(p) * PlaneGeometry(p).slotFloats) * sizeof(float);
}

} // namespace rt
} // namespace dlc
