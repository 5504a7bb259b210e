#include "plane_conv.h"

#include "clamp.h"
#include "conv_shape.h"
#include "gemm.h"
#include "parallel.h"
#include "winograd.h"

#include <algorithm>

namespace dlc {
namespace rt {

// Convolutions of a few channels per group (RegNet's, ResNeXt's) or few channels at all
// (detectors' early layers) as a product over their zero-padded input planes
// (plane_conv_kernel.h): each tap's im2col row is the padded plane shifted by the tap's offset,
// so the kernel reads it in place; the im2col matrix (taps times the input) and the GEMM's
// packing of it are never built. Positions run over the padded width (the last columns of each
// row are computed and dropped), and a stride-2 input is split into its four phases (even and
// odd rows by even and odd columns), in which the taps are stride-1 again. The output is made
// in bands of rows, each from the input rows it reads: a slot of the workspace holds one
// group's band of planes; threads take whole (group, band) items, each working in its own
// slot (parallelForInSlots).
namespace {
struct PlaneGeometry {
  int64_t stride, bandRows, bands, phaseRows, phaseCols, positions, phaseFloats;
  int64_t channelFloats, slotFloats;

  PlaneGeometry(const ConvParams &p, int64_t rowsPerBand) {
    const WindowParams &w = p.window;
    const GroupShape s(p);
    stride = w.stride[1];
    bands = (w.out[1] + rowsPerBand - 1) / rowsPerBand;
    bandRows = (w.out[1] + bands - 1) / bands; // the same rows, spread evenly
    phaseRows = ((bandRows - 1) * stride + w.kernel[1] + stride - 1) / stride;
    phaseCols = ((w.out[2] - 1) * stride + w.kernel[2] + stride - 1) / stride;
    positions = bandRows * phaseCols;
    const int64_t lastOffset = (w.kernel[1] - 1) / stride * phaseCols + (w.kernel[2] - 1) / stride;
    // The kernel reads whole blocks of positions from every tap's offset.
    const int64_t positionsRead = (positions + kPlaneConvSlack - 1) / kPlaneConvSlack *
                                  kPlaneConvSlack;
    phaseFloats = std::max(phaseRows * phaseCols, lastOffset + positionsRead);
    channelFloats = stride * stride * phaseFloats;
    slotFloats = s.inPerGroup * channelFloats;
  }
  explicit PlaneGeometry(const ConvParams &p);

  int64_t tapOffset(int64_t k1, int64_t k2) const {
    return (k1 % stride * stride + k2 % stride) * phaseFloats + k1 / stride * phaseCols +
           k2 / stride;
  }
};

constexpr int64_t kPlaneMaxKernel = 7;
// Slots the workspace limit must hold (the im2col path's limit, so the arena does not grow):
// with fewer, threads would have no whole items to take, where im2col splits each group.
constexpr int64_t kPlaneMinSlots = 2;
// Items (group, band) a convolution is cut into at least, where its rows allow: enough for
// two threads to take equal shares.
constexpr int64_t kPlaneMinItems = 8;

// The slots' budget: the workspace limit, and for an ungrouped convolution no more than its
// whole im2col matrix (what im2col takes on a small map), so the planes never grow the arena.
int64_t planeBudget(const ConvParams &p) {
  const GroupShape s(p);
  const int64_t limit = workspaceLimitOf(p);
  return p.groups > 1 ? limit : std::min(limit, s.k * s.outPlane * int64_t(sizeof(float)));
}

// The band height: the whole plane where groups give the threads enough items (no input row
// is then copied twice), else enough bands for kPlaneMinItems; in either case no taller than
// kPlaneMinSlots slots in planeBudget allow (0: not even one row fits).
int64_t planeBandRows(const ConvParams &p) {
  const int64_t rows = p.window.out[1];
  const int64_t wantedBands = (kPlaneMinItems + p.groups - 1) / p.groups;
  int64_t bandRows = std::max<int64_t>(1, (rows + wantedBands - 1) / wantedBands);
  auto fits = [&](int64_t r) {
    return kPlaneMinSlots * PlaneGeometry(p, r).slotFloats * int64_t(sizeof(float)) <=
           planeBudget(p);
  };
  while (bandRows > 0 && !fits(bandRows))
    bandRows /= 2;
  return bandRows;
}

PlaneGeometry::PlaneGeometry(const ConvParams &p) : PlaneGeometry(p, planeBandRows(p)) {}
} // namespace

// Measured against the alternatives on ungrouped convolutions (1 thread, AVX-512): Winograd
// wins on its shapes from 64 output channels (its GEMMs then fill their register tiles: 16 ->
// 64 and 32 -> 128 channels ran 20-40% slower as planes, 16 -> 16 and 32 -> 32 ran 15-40%
// faster); im2col's GEMM wins from 128 input channels (k = 1152 fills its panels), and where
// a short k (a 3x3 stem of 3 channels: 27) meets many outputs (SqueezeNet's 64).
constexpr int64_t kPlaneMaxChannels = 64, kPlaneMaxWinogradOutputs = 64;
constexpr int64_t kPlaneShortK = 64, kPlaneMaxShortKOutputs = 32;
bool paddedPlanesApply(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (!isPlanar(w) || isDepthwise(p) || p.channelsLast || isPointwise(w) ||
      w.dilation[1] != 1 || w.dilation[2] != 1 || w.stride[1] != w.stride[2] ||
      w.stride[1] > 2 || w.kernel[1] > kPlaneMaxKernel || w.kernel[2] > kPlaneMaxKernel ||
      p.outChannels / p.groups < kGemmFewRows)
    return false;
  if (p.groups == 1) {
    // A 1x1 window (a strided projection shortcut) has no taps to read in place: im2col is a
    // plain subsample there, and its product's panels are fuller.
    if (w.kernel[1] * w.kernel[2] == 1)
      return false;
    const GroupShape s(p);
    if (winogradShaped(p) ? p.outChannels >= kPlaneMaxWinogradOutputs
                          : w.channels > kPlaneMaxChannels ||
                                (s.k < kPlaneShortK && p.outChannels > kPlaneMaxShortKOutputs))
      return false;
  }
  return planeBandRows(p) > 0;
}

namespace {
int64_t planeSlots(const ConvParams &p, const PlaneGeometry &geo) {
  const int64_t slotBytes = geo.slotFloats * int64_t(sizeof(float));
  return std::clamp<int64_t>(planeBudget(p) / slotBytes, 1, p.groups * geo.bands);
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

void planeConvF32(const ConvParams &p, const float *x, const float *packedW, const float *bias,
                  const float *residual, float *y, float *workspace) {
  const WindowParams &w = p.window;
  const GroupShape s(p);
  const PlaneGeometry geo(p);
  int64_t tapOffsets[kPlaneMaxKernel * kPlaneMaxKernel];
  for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
    for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2)
      tapOffsets[k1 * w.kernel[2] + k2] = geo.tapOffset(k1, k2);
  const int64_t taps = w.kernel[1] * w.kernel[2];
  const int64_t items = p.groups * geo.bands;
  // The kernel adds the bias and the residual and clamps for a Relu or Clip as it writes y;
  // other activations take a pass over the rows after it.
  float lo, hi;
  const bool clamp = epilogueClamp(p.epilogue, lo, hi);
  auto planesOf = [&](int64_t slot) { return workspace + slot * geo.slotFloats; };
  parallelForInSlots(
      w.batch * items, planeSlots(p, geo), s.outPerGroup * s.k * geo.bandRows * w.out[2],
      // The planes' padding is zero in every item, and stays so.
      [&](int64_t slot) {
        std::fill(planesOf(slot), planesOf(slot) + s.inPerGroup * geo.channelFloats, 0.0f);
      },
      [&](int64_t slot, int64_t item) {
        float *planes = planesOf(slot);
        const int64_t n = item / items, g = item % items / geo.bands, band = item % geo.bands;
        const int64_t row0 = band * geo.bandRows;
        const int64_t rows = std::min(geo.bandRows, w.out[1] - row0);
        const float *xg = x + s.xOffset(p, n, g);
        planePhases({xg, s.inPerGroup, s.inPlane, w.in[1], w.in[2], geo.stride,
                     band * geo.bandRows * geo.stride - w.padBegin[1], w.padBegin[2], planes,
                     geo.phaseRows, geo.phaseCols, geo.phaseFloats, geo.channelFloats});
        // A panel of output channels at a time: its rows of y are still in cache for an
        // activation the kernel does not apply.
        const float *weights = packedW + g * planeGroupWeightFloats(p);
        for (int64_t o0 = 0; o0 < s.outPerGroup; o0 += kPlaneConvRows) {
          const int64_t panelRows = std::min(kPlaneConvRows, s.outPerGroup - o0);
          const int64_t offset = s.yOffset(p, n, g) + o0 * s.outPlane + row0 * w.out[2];
          planeConv({planes, s.inPerGroup, geo.channelFloats, tapOffsets, taps,
                     weights + o0 / kPlaneConvRows * planePanelFloats(p), panelRows,
                     {y + offset, s.outPlane, rows, w.out[2], geo.phaseCols,
                      bias ? bias + g * s.outPerGroup + o0 : nullptr,
                      residual ? residual + offset : nullptr, clamp, lo, hi}});
          if (!clamp)
            for (int64_t o = o0; o < o0 + panelRows; ++o)
              applyEpilogue(p.epilogue, y + offset + (o - o0) * s.outPlane, rows * w.out[2]);
        }
      });
}

size_t planeWeightBytes(const ConvParams &p) {
  return size_t(p.groups * planeGroupWeightFloats(p)) * sizeof(float);
}

size_t planeWorkspaceBytes(const ConvParams &p) {
  const PlaneGeometry geo(p);
  return size_t(planeSlots(p, geo) * geo.slotFloats) * sizeof(float);
}

} // namespace rt
} // namespace dlc
