#include "channels_last_conv.h"
#include "clamp.h"
#include "conv_shape.h"
#include "dlc_kernels.h"
#include "gemm.h"
#include "parallel.h"
#include "plane_conv.h"
#include "window.h"
#include "winograd.h"

#include <algorithm>

namespace dlc {
namespace rt {

namespace {

// Walks the im2col matrix of `channels` input planes for output rows [rowBegin, rowEnd) (a row
// is one (o0, o1) pair, out[2] positions long), whose rows are (channel, k0, k1, k2) x output
// row. For each run of out[2] matrix entries it calls run(entries, base, lo, hi): entry o2 is
// input element base + o2 * stride[2] for o2 in [lo, hi) and padding elsewhere. im2col and its
// adjoint col2im share this walk so that they cannot disagree about which element is where.
template <typename Entry, typename Run>
void walkIm2col(const WindowParams &w, int64_t channels, int64_t rowBegin, int64_t rowEnd,
                Entry *cols, Run run) {
  const int64_t inPlane = product3(w.in);
  const int64_t out1 = w.out[1], out2 = w.out[2];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
      int64_t lo0, hi0;
      validRange(w.in[0], w.out[0], w.stride[0], w.padBegin[0], k0 * w.dilation[0], lo0, hi0);
      for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
        int64_t lo1, hi1;
        validRange(w.in[1], out1, w.stride[1], w.padBegin[1], k1 * w.dilation[1], lo1, hi1);
        for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
          int64_t off2 = k2 * w.dilation[2] - w.padBegin[2];
          int64_t lo2, hi2;
          validRange(w.in[2], out2, w.stride[2], w.padBegin[2], k2 * w.dilation[2], lo2, hi2);
          // Rows step through (o0, o1) without a division per run.
          int64_t o0 = rowBegin / out1, o1 = rowBegin % out1;
          for (int64_t row = rowBegin; row < rowEnd;
               ++row, cols += out2, o0 += o1 + 1 == out1, o1 = o1 + 1 == out1 ? 0 : o1 + 1) {
            if (o0 < lo0 || o0 >= hi0 || o1 < lo1 || o1 >= hi1) {
              run(cols, int64_t(0), int64_t(0), int64_t(0));
              continue;
            }
            int64_t i0 = o0 * w.stride[0] - w.padBegin[0] + k0 * w.dilation[0];
            int64_t i1 = o1 * w.stride[1] - w.padBegin[1] + k1 * w.dilation[1];
            // Index of the input element under o2 == 0 (possibly outside the row).
            run(cols, c * inPlane + (i0 * w.in[1] + i1) * w.in[2] + off2, lo2, hi2);
          }
        }
      }
    }
  }
}

// Expands `channels` input planes into the im2col matrix of output rows [rowBegin, rowEnd).
void im2col(const WindowParams &w, const float *__restrict x, int64_t channels,
            int64_t rowBegin, int64_t rowEnd, float *cols) {
  const int64_t out2 = w.out[2], stride2 = w.stride[2];
  walkIm2col(w, channels, rowBegin, rowEnd, cols,
             [=](float *__restrict entries, int64_t base, int64_t lo, int64_t hi) {
               // Runs are short (out[2] entries: 7 to 112 in CNNs), so plain loops rather
               // than library calls; the constant strides let the compiler vectorise
               // (stride 2 by shuffles).
               for (int64_t o2 = 0; o2 < lo; ++o2)
                 entries[o2] = 0.0f;
               if (stride2 == 1) {
                 for (int64_t o2 = lo; o2 < hi; ++o2)
                   entries[o2] = x[base + o2];
               } else if (stride2 == 2) {
                 for (int64_t o2 = lo; o2 < hi; ++o2)
                   entries[o2] = x[base + o2 * 2];
               } else {
                 for (int64_t o2 = lo; o2 < hi; ++o2)
                   entries[o2] = x[base + o2 * stride2];
               }
               for (int64_t o2 = hi; o2 < out2; ++o2)
                 entries[o2] = 0.0f;
             });
}

// Adds the im2col matrix of output rows [rowBegin, rowEnd) back onto the planes it was read
// from; entries that read padding have nowhere to go.
void col2im(const WindowParams &w, const float *cols, int64_t channels, int64_t rowBegin,
            int64_t rowEnd, float *x) {
  const int64_t stride2 = w.stride[2];
  walkIm2col(w, channels, rowBegin, rowEnd, cols,
             [=](const float *entries, int64_t base, int64_t lo, int64_t hi) {
               for (int64_t o2 = lo; o2 < hi; ++o2)
                 x[base + o2 * stride2] += entries[o2];
             });
}

// col2im where the windows tile the planes (readsEachOnce): each element gets exactly one
// entry, stored. An output row's taps fill whole rows of the planes, kernel[2] entries side
// by side per output column, so the stores run contiguously (stored one strided element at a
// time, they took most of an upsampling ConvTranspose's time).
void col2imTiling(const WindowParams &w, const float *cols, int64_t channels, int64_t rowBegin,
                  int64_t rowEnd, float *x) {
  const int64_t out1 = w.out[1], out2 = w.out[2], k2 = w.kernel[2];
  const int64_t columns = (rowEnd - rowBegin) * out2, inPlane = product3(w.in);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t0 = 0; t0 < w.kernel[0]; ++t0)
      for (int64_t t1 = 0; t1 < w.kernel[1]; ++t1) {
        const float *taps = cols + ((c * w.kernel[0] + t0) * w.kernel[1] + t1) * k2 * columns;
        for (int64_t r = rowBegin; r < rowEnd; ++r) {
          const int64_t i0 = r / out1 * w.kernel[0] + t0, i1 = r % out1 * w.kernel[1] + t1;
          float *dst = x + c * inPlane + (i0 * w.in[1] + i1) * w.in[2];
          const float *src = taps + (r - rowBegin) * out2;
          if (k2 == 2) // a constant count: the compiler interleaves with shuffles
            for (int64_t o2 = 0; o2 < out2; ++o2) {
              dst[2 * o2] = src[o2];
              dst[2 * o2 + 1] = src[columns + o2];
            }
          else
            for (int64_t o2 = 0; o2 < out2; ++o2)
              for (int64_t t2 = 0; t2 < k2; ++t2)
                dst[o2 * k2 + t2] = src[t2 * columns + o2];
        }
      }
}

// Whether the windows tile the input, reading each element exactly once: kernel = stride, no
// dilation or padding, nothing left over (a ConvTranspose of kernel 2 and stride 2, FPN and
// UNet decoders' upsampling, is the gradient of such a convolution).
bool readsEachOnce(const WindowParams &w) {
  for (int d = 0; d < 3; ++d)
    if (w.kernel[d] != w.stride[d] || w.dilation[d] != 1 || w.padBegin[d] != 0 ||
        w.in[d] != w.out[d] * w.stride[d])
      return false;
  return true;
}

// Output rows per im2col chunk: as many as fit the workspace limit, at least one.
int64_t rowsPerChunk(const ConvParams &p) {
  const WindowParams &w = p.window;
  const int64_t limit = workspaceLimitOf(p);
  const int64_t rowBytes =
      w.channels / p.groups * product3(w.kernel) * w.out[2] * int64_t(sizeof(float));
  const int64_t rows = w.out[0] * w.out[1];
  return std::clamp<int64_t>(rowBytes ? limit / rowBytes : rows, 1, std::max<int64_t>(rows, 1));
}

// Calls f(rowBegin, rowEnd) for each chunk of output rows whose im2col matrix fits the
// workspace.
template <typename F> void forEachRowChunk(const ConvParams &p, F f) {
  const int64_t rows = p.window.out[0] * p.window.out[1], chunk = rowsPerChunk(p);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk)
    f(r0, std::min(rows, r0 + chunk));
}

// Columns of output below which a thread's share of a convolution is mostly edge tiles (a
// register tile is 32 wide). Kept low: a chunk that narrow goes to sgemm whole, which splits
// the weights' rows, and every thread then packs the whole chunk (ResNet-50's 3x3 convs on
// 28x28 and smaller maps, chunks of 112-224 columns, ran 1.1-1.4x faster on 2 threads).
constexpr int64_t kMinColumnsPerThread = 48;

// One output row of n floats: + bias, + the fused residual's row (if any), then the fused
// activation, in the order of the unfused Conv (bias inside), Add and activation.
void finishRow(const Epilogue &epilogue, const float *bias, const float *residual, float *row,
               int64_t n) {
  if (bias) {
    const float b = *bias;
    for (int64_t i = 0; i < n; ++i)
      row[i] += b;
  }
  if (residual)
    for (int64_t i = 0; i < n; ++i)
      row[i] += residual[i];
  applyEpilogue(epilogue, row, n);
}


} // namespace

namespace {
// One chunk of the im2col matrix, which the gradients always use.
size_t im2colWorkspaceBytes(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (isPointwise(w))
    return 0;
  int64_t k = w.channels / p.groups * product3(w.kernel);
  return static_cast<size_t>(k * rowsPerChunk(p) * w.out[2]) * sizeof(float);
}

// Output rows of a depthwise convolution whose taps fit this many floats of padded input rows
// (on the stack) take the vectorised row kernel; wider rows or larger windows the tap-run loop.
constexpr int64_t kDepthwiseRowBufferFloats = 8192, kDepthwiseMaxTaps = 64;

// How the row kernel sees one input row: zero-padded and split into `stride` phases (phase r
// holds padded columns r, r + stride, ...), so that every tap reads a contiguous run. Where
// each phase's input columns lie and where each tap starts are worked out once per conv: the
// rows of small maps are only a few vectors long, and the divisions cost more than the taps.
struct DepthwisePhases {
  int64_t length, rowFloats, stride;
  bool fits;
  // Phase r's entries [lo, hi) read input columns first + j * stride, the rest padding.
  int64_t phaseLo[kDepthwiseMaxTaps], phaseHi[kDepthwiseMaxTaps], phaseFirst[kDepthwiseMaxTaps];
  // Where tap k2's run for output column 0 starts within a row's phases.
  int64_t tapOffset[kDepthwiseMaxTaps];
  explicit DepthwisePhases(const WindowParams &w) : stride(w.stride[2]) {
    const int64_t reach = (w.kernel[2] - 1) * w.dilation[2] / stride;
    length = w.out[2] + reach + kDepthwiseRowPad;
    rowFloats = stride * length;
    fits = w.kernel[1] * rowFloats <= kDepthwiseRowBufferFloats &&
           w.kernel[1] * w.kernel[2] <= kDepthwiseMaxTaps && stride <= kDepthwiseMaxTaps;
    if (!fits)
      return;
    for (int64_t r = 0; r < stride; ++r) {
      validRange(w.in[2], length, stride, w.padBegin[2], r, phaseLo[r], phaseHi[r]);
      phaseFirst[r] = r - w.padBegin[2];
    }
    for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
      const int64_t offset = k2 * w.dilation[2];
      tapOffset[k2] = offset % stride * length + offset / stride;
    }
  }
  // Copies an input row into its phases; their padding entries stay as they are (zero: the
  // buffer is cleared once, and every row has the same padding).
  void fill(const float *row, float *phases) const {
    // A constant stride lets the compiler deinterleave with shuffles (stride 2: MobileNet's
    // and EfficientNet's downsampling convs, where a scalar gather cost twice the taps).
    if (stride == 1)
      fillPhases<1>(row, phases);
    else if (stride == 2)
      fillPhases<2>(row, phases);
    else
      fillPhases<0>(row, phases);
  }
  // Stride S, or this->stride for S = 0.
  template <int64_t S>
  void fillPhases(const float *__restrict row, float *__restrict phases) const {
    const int64_t step = S ? S : stride;
    for (int64_t r = 0; r < step; ++r, phases += length) {
      const int64_t lo = phaseLo[r], hi = phaseHi[r], first = phaseFirst[r];
      for (int64_t j = lo; j < hi; ++j)
        phases[j] = row[first + j * step];
    }
  }
};

// y = the depthwise convolution of x, plane by plane (split over the model's threads). Each
// output element is the bias plus its taps in (k1, k2) order; taps over column padding read
// zeros, taps over missing rows are left out.
void depthwiseConvF32(const ConvParams &p, const float *x, const float *w, const float *bias,
                      const float *residual, float *y) {
  const WindowParams &win = p.window;
  const int64_t multiplier = p.outChannels / p.groups;
  const int64_t inPlane = win.in[1] * win.in[2], outPlane = win.out[1] * win.out[2];
  const int64_t taps = win.kernel[1] * win.kernel[2];
  const DepthwisePhases phases(win);
  parallelFor(win.batch * p.outChannels, 1, [&](int64_t begin, int64_t end) {
    // Padded input rows in slots, each kept while consecutive output rows read it.
    float buffer[kDepthwiseRowBufferFloats];
    if (phases.fits)
      std::fill(buffer, buffer + win.kernel[1] * phases.rowFloats, 0.0f);
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / p.outChannels, m = plane % p.outChannels;
      const float *xc = x + (n * win.channels + m / multiplier) * inPlane;
      const float *wm = w + m * taps;
      float *ym = y + plane * outPlane;
      const float init = bias ? bias[m] : 0.0f;
      const int64_t stride2 = win.stride[2], out2 = win.out[2];
      if (phases.fits) {
        const float *sources[kDepthwiseMaxTaps];
        float weights[kDepthwiseMaxTaps];
        int64_t slotRow[kDepthwiseMaxTaps]; // the input row each slot holds, -1: none
        std::fill(slotRow, slotRow + win.kernel[1], int64_t(-1));
        for (int64_t o1 = 0; o1 < win.out[1]; ++o1) {
          // The slot of each tap row: the one holding it already, else one no other tap row
          // of this output row holds (there are as many slots as tap rows).
          int64_t slotOf[kDepthwiseMaxTaps];
          bool taken[kDepthwiseMaxTaps] = {};
          auto inputRow = [&](int64_t k1) {
            return o1 * win.stride[1] - win.padBegin[1] + k1 * win.dilation[1];
          };
          for (int64_t k1 = 0; k1 < win.kernel[1]; ++k1) {
            slotOf[k1] = -1;
            for (int64_t slot = 0; slot < win.kernel[1] && inputRow(k1) >= 0; ++slot)
              if (slotRow[slot] == inputRow(k1)) {
                slotOf[k1] = slot;
                taken[slot] = true;
              }
          }
          int64_t used = 0;
          for (int64_t k1 = 0; k1 < win.kernel[1]; ++k1) {
            const int64_t i1 = inputRow(k1);
            if (i1 < 0 || i1 >= win.in[1])
              continue;
            if (slotOf[k1] < 0) {
              slotOf[k1] = std::find(taken, taken + win.kernel[1], false) - taken;
              taken[slotOf[k1]] = true;
              slotRow[slotOf[k1]] = i1;
              phases.fill(xc + i1 * win.in[2], buffer + slotOf[k1] * phases.rowFloats);
            }
            const float *rowPhases = buffer + slotOf[k1] * phases.rowFloats;
            for (int64_t k2 = 0; k2 < win.kernel[2]; ++k2, ++used) {
              sources[used] = rowPhases + phases.tapOffset[k2];
              weights[used] = wm[k1 * win.kernel[2] + k2];
            }
          }
          depthwiseRow({used, sources, weights, init, ym + o1 * out2, out2});
        }
      } else {
        std::fill(ym, ym + outPlane, init);
        forEachTapRun(win, [&](int64_t tap, int64_t o1, int64_t base, int64_t lo, int64_t hi) {
          const float weight = wm[tap], *xrow = xc + base;
          float *yrow = ym + o1 * out2;
          for (int64_t o2 = lo; o2 < hi; ++o2)
            yrow[o2] += weight * xrow[o2 * stride2];
        });
      }
      finishRow(p.epilogue, nullptr, residual ? residual + plane * outPlane : nullptr, ym,
                outPlane);
    }
  });
}

// Planar depthwise convolutions with short rows (late MobileNet and EfficientNet stages, 28
// columns or fewer) leave the planar row kernel mostly edges (4-6 GFLOP/s): they run in blocks
// of channels instead, each block transposed channels-last into the workspace, computed by the
// channels-last row kernel (a vector of channels per tap) and transposed back. A slot holds a
// block's input, output and weights; the workspace limit decides how many slots there are,
// each thread working in its own (parallelForInSlots).
constexpr int64_t kDepthwiseBlockChannels = 64, kDepthwiseBlockMaxOutWidth = 28;

int64_t depthwiseSlotFloats(const WindowParams &w) {
  return kDepthwiseBlockChannels *
         (w.in[1] * w.in[2] + w.out[1] * w.out[2] + w.kernel[1] * w.kernel[2]);
}

bool depthwiseByChannelBlocks(const ConvParams &p) {
  const WindowParams &w = p.window;
  return isChannelsLastDepthwise(p) && !p.channelsLast && w.out[2] <= kDepthwiseBlockMaxOutWidth &&
         depthwiseSlotFloats(w) * int64_t(sizeof(float)) <= workspaceLimitOf(p);
}

int64_t depthwiseBlockCount(const ConvParams &p) {
  const int64_t perImage = (p.window.channels + kDepthwiseBlockChannels - 1) /
                           kDepthwiseBlockChannels;
  return p.window.batch * perImage;
}

int64_t depthwiseBlockSlots(const ConvParams &p) {
  const int64_t slotBytes = depthwiseSlotFloats(p.window) * int64_t(sizeof(float));
  return std::clamp<int64_t>(workspaceLimitOf(p) / slotBytes, 1, depthwiseBlockCount(p));
}

void depthwiseChannelBlocksF32(const ConvParams &p, const float *x, const float *w,
                               const float *bias, const float *residual, float *y,
                               float *workspace) {
  const WindowParams &win = p.window;
  const int64_t channels = win.channels, inPlane = win.in[1] * win.in[2];
  const int64_t outPlane = win.out[1] * win.out[2], taps = win.kernel[1] * win.kernel[2];
  const int64_t perImage = (channels + kDepthwiseBlockChannels - 1) / kDepthwiseBlockChannels;
  const int64_t blocks = depthwiseBlockCount(p), slots = depthwiseBlockSlots(p);
  const int64_t slotFloats = depthwiseSlotFloats(win);
  const bool finishes = residual || p.epilogue.activation != Activation::None;
  parallelForInSlots(
      blocks, slots, kDepthwiseBlockChannels * outPlane * taps,
      [&](int64_t slot, int64_t block) {
        float *xs = workspace + slot * slotFloats;
        float *ys = xs + kDepthwiseBlockChannels * inPlane;
        float *ws = ys + kDepthwiseBlockChannels * outPlane;
        const int64_t n = block / perImage, c0 = block % perImage * kDepthwiseBlockChannels;
        const int64_t width = std::min(kDepthwiseBlockChannels, channels - c0);
        const float *xb = x + (n * channels + c0) * inPlane;
        transposeMatrix(xb, width, inPlane, xs, sizeof(float));
        for (int64_t c = 0; c < width; ++c)
          for (int64_t t = 0; t < taps; ++t)
            ws[t * width + c] = w[(c0 + c) * taps + t];
        for (int64_t o1 = 0; o1 < win.out[1]; ++o1)
          depthwiseNhwcRow({xs, win.in[1], win.in[2], width, 0, width, ws,
                            bias ? bias + c0 : nullptr, nullptr, ys + o1 * win.out[2] * width,
                            win.out[2], win.kernel[1], win.kernel[2],
                            o1 * win.stride[1] - win.padBegin[1], win.stride[2], win.padBegin[2],
                            win.dilation[1], win.dilation[2], RowActivation{}});
        float *yb = y + (n * channels + c0) * outPlane;
        transposeMatrix(ys, outPlane, width, yb, sizeof(float));
        for (int64_t c = 0; c < width && finishes; ++c)
          finishRow(p.epilogue, nullptr,
                    residual ? residual + (n * channels + c0 + c) * outPlane : nullptr,
                    yb + c * outPlane, outPlane);
      });
}

} // namespace

namespace {
// Convolutions of many small groups (RegNet's, ResNeXt's, ShuffleNet's) run a batch of
// groups at a time, threads taking whole groups: one group's product is too small to split.
// A batch holds as many groups' whole im2col matrices as the workspace limit allows (any
// number of pointwise groups, which need none); 1 means group by group, each split.
constexpr int64_t kMinConcurrentGroups = 4;
int64_t concurrentGroups(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (p.groups < kMinConcurrentGroups || isDepthwise(p) || p.channelsLast)
    return 1;
  if (isPointwise(w))
    return p.groups;
  if (rowsPerChunk(p) < w.out[0] * w.out[1])
    return 1;
  return std::clamp<int64_t>(workspaceLimitOf(p) / int64_t(im2colWorkspaceBytes(p)), 1, p.groups);
}
} // namespace

// Whether the compiler packs the weights decides between im2col and Winograd, and the
// workspace serves both.
size_t convWorkspaceBytes(const ConvParams &p) {
  if (depthwiseByChannelBlocks(p))
    return size_t(depthwiseBlockSlots(p) * depthwiseSlotFloats(p.window)) * sizeof(float);
  if (isDepthwise(p) || p.channelsLast)
    return 0;
  const size_t planes = paddedPlanesApply(p) ? planeWorkspaceBytes(p) : 0;
  const size_t im2col =
      im2colWorkspaceBytes(p) * size_t(isPointwise(p.window) ? 1 : concurrentGroups(p));
  return std::max({im2col, planes,
                   winogradApplies(p) ? winogradWorkspaceBytes(p) : 0});
}

// A convolution with one output position (squeeze-and-excitation's 1x1 convs on pooled
// vectors) is a matrix-vector product: plain rows serve it better than GEMM panels.
bool convPacksWeights(const ConvParams &p) {
  if (p.channelsLast)
    return true;
  const GroupShape s(p);
  return !isDepthwise(p) && s.outPerGroup >= kGemmFewRows && s.outPlane > 1;
}

ConvWeightLayout convWeightLayout(const ConvParams &p) {
  if (p.channelsLast && p.planarInput)
    return ConvWeightLayout::PlanarInput;
  if (p.channelsLast)
    return isChannelsLastDepthwise(p) ? ConvWeightLayout::ChannelsLastDepthwise
                                      : ConvWeightLayout::ChannelsLast;
  if (winogradApplies(p))
    return ConvWeightLayout::Winograd;
  if (paddedPlanesApply(p))
    return ConvWeightLayout::Planes;
  return ConvWeightLayout::Im2col;
}

const char *convWeightLayoutName(ConvWeightLayout layout) {
  switch (layout) {
  case ConvWeightLayout::ChannelsLastDepthwise:
    return "channels-last depthwise";
  case ConvWeightLayout::ChannelsLast:
    return "channels-last";
  case ConvWeightLayout::PlanarInput:
    return "planar input";
  case ConvWeightLayout::Winograd:
    return "winograd";
  case ConvWeightLayout::Planes:
    return "planes";
  case ConvWeightLayout::Im2col:
    break;
  }
  return "im2col";
}

size_t packedConvWeightBytes(const ConvParams &p) {
  switch (convWeightLayout(p)) {
  case ConvWeightLayout::ChannelsLastDepthwise:
    return size_t(p.outChannels * product3(p.window.kernel)) * sizeof(float);
  case ConvWeightLayout::PlanarInput:
    return size_t(p.outChannels * p.window.channels * product3(p.window.kernel)) * sizeof(float);
  case ConvWeightLayout::ChannelsLast:
    return packedGemmBBytes(p.window.channels, p.outChannels);
  case ConvWeightLayout::Winograd:
    return winogradWeightBytes(p);
  case ConvWeightLayout::Planes:
    return planeWeightBytes(p);
  case ConvWeightLayout::Im2col:
    break;
  }
  const GroupShape s(p);
  return size_t(p.groups) * packedGemmABytes(s.outPerGroup, s.k);
}

void packConvWeights(const ConvParams &p, const float *w, float *packed) {
  switch (convWeightLayout(p)) {
  case ConvWeightLayout::ChannelsLastDepthwise: {
    // Tap-major, channels innermost: (channels x taps) transposed.
    const int64_t taps = product3(p.window.kernel);
    for (int64_t c = 0; c < p.outChannels; ++c)
      for (int64_t t = 0; t < taps; ++t)
        packed[t * p.outChannels + c] = w[c * taps + t];
    return;
  }
  case ConvWeightLayout::PlanarInput: {
    // Output channels innermost: (out channels x in channels * taps) transposed.
    const int64_t inner = p.window.channels * product3(p.window.kernel);
    for (int64_t o = 0; o < p.outChannels; ++o)
      for (int64_t i = 0; i < inner; ++i)
        packed[i * p.outChannels + o] = w[o * inner + i];
    return;
  }
  case ConvWeightLayout::ChannelsLast:
    // The weights (out x in channels) are B transposed.
    packGemmB(true, p.window.channels, p.outChannels, w, p.window.channels, packed);
    return;
  case ConvWeightLayout::Winograd:
    packWinogradWeights(p, w, packed);
    return;
  case ConvWeightLayout::Planes:
    packPlaneWeights(p, w, packed);
    return;
  case ConvWeightLayout::Im2col:
    break;
  }
  const GroupShape s(p);
  const int64_t groupFloats = int64_t(packedGemmABytes(s.outPerGroup, s.k) / sizeof(float));
  for (int64_t g = 0; g < p.groups; ++g)
    packGemmA(false, s.outPerGroup, s.k, w + s.wOffset(g), s.k, packed + g * groupFloats);
}

void convF32(const ConvParams &p, const float *x, const float *w, const float *bias,
             const float *residual, float *y, float *workspace, const float *inputScale) {
  if (p.channelsLast) {
    if (p.planarInput)
      planarInputChannelsLastF32(p, x, w, bias, residual, y);
    else if (isChannelsLastDepthwise(p))
      depthwiseChannelsLastF32(p, x, w, bias, residual, y);
    else
      pointwiseChannelsLastF32(p, x, w, bias, residual, y, inputScale);
    return;
  }
  if (depthwiseByChannelBlocks(p)) {
    depthwiseChannelBlocksF32(p, x, w, bias, residual, y, workspace);
    return;
  }
  if (isDepthwise(p)) {
    depthwiseConvF32(p, x, w, bias, residual, y);
    return;
  }
  // Packed weights are read by the kernel they were packed for: one decision for both.
  const ConvWeightLayout layout =
      p.packedWeights ? convWeightLayout(p) : ConvWeightLayout::Im2col;
  if (layout == ConvWeightLayout::Winograd) {
    winogradConvF32(p, x, w, bias, residual, y, workspace);
    return;
  }
  if (layout == ConvWeightLayout::Planes) {
    planeConvF32(p, x, w, bias, residual, y, workspace);
    return;
  }
  const GroupShape s(p);
  const int64_t out2 = p.window.out[2];
  const int64_t packedGroupFloats =
      int64_t(packedGemmABytes(s.outPerGroup, s.k) / sizeof(float));
  auto weightsOf = [&](int64_t g) {
    return p.packedWeights ? w + g * packedGroupFloats : w + s.wOffset(g);
  };
  // The product adds the bias and the residual, and clamps for a Relu or Clip, to each
  // register tile; other activations take a pass over the rows after it.
  float lo = 0.0f, hi = 0.0f;
  const bool clamp = epilogueClamp(p.epilogue, lo, hi);
  // Group g's output columns [col0, col0 + cols) = W_g * the matrix `cols` columns wide at b.
  auto productOf = [&](int64_t n, int64_t g, const float *b, int64_t cols, int64_t col0) {
    GemmArgs product{false, false, s.outPerGroup, cols, s.k, 1.0f, weightsOf(g), s.k, b, cols,
                     0.0f, y + s.yOffset(p, n, g) + col0, s.outPlane, {}, {},
                     {bias ? bias + g * s.outPerGroup : nullptr, nullptr,
                      residual ? residual + s.yOffset(p, n, g) + col0 : nullptr, s.outPlane,
                      clamp, lo, hi}};
    if (p.packedWeights) {
      product.a = nullptr;
      product.packedA = {weightsOf(g), (s.outPerGroup + kPackRows - 1) / kPackRows * kPackRows, 0};
    }
    // A scale comes only with a pointwise convolution of one group (the verifier's rule),
    // whose B rows are the input's channels.
    if (inputScale)
      product.scaleB = inputScale + n * p.window.channels + g * s.inPerGroup;
    sgemmOn(selectedCpuIsa(), product);
  };
  const bool finishes = !clamp && p.epilogue.activation != Activation::None;
  // Output rows [begin, end) of group g: an activation the product could not apply.
  auto finishRows = [&](int64_t n, int64_t g, int64_t begin, int64_t end) {
    float *yg = y + s.yOffset(p, n, g);
    for (int64_t m = begin; m < end; ++m)
      applyEpilogue(p.epilogue, yg + m * s.outPlane, s.outPlane);
  };
  if (const int64_t batchGroups = concurrentGroups(p); batchGroups > 1) {
    const int64_t groupFloats = int64_t(im2colWorkspaceBytes(p) / sizeof(float));
    // Each thread works through its groups in its own slot, which stays in cache.
    parallelForInSlots(
        p.window.batch * p.groups, batchGroups, s.outPerGroup * s.k * s.outPlane,
        [&](int64_t slot, int64_t item) {
          const int64_t n = item / p.groups, g = item % p.groups;
          float *block = workspace + slot * groupFloats;
          const float *xg = x + s.xOffset(p, n, g);
          if (!s.pointwise) {
            im2col(p.window, xg, s.inPerGroup, 0, s.outPlane / out2, block);
            xg = block;
          }
          productOf(n, g, xg, s.outPlane, 0);
          if (finishes)
            finishRows(n, g, 0, s.outPerGroup);
        });
    return;
  }
  for (int64_t n = 0; n < p.window.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float *xg = x + s.xOffset(p, n, g);
      auto product = [&](const float *b, int64_t cols, int64_t col0) {
        productOf(n, g, b, cols, col0);
      };
      if (s.pointwise) {
        product(xg, s.outPlane, 0);
      } else {
        // Each chunk of output rows is one im2col block and one product into y's columns.
        // Threads take disjoint rows of the chunk: each builds its own columns of the block
        // (in its own part of the workspace) and multiplies them. A part is never one column
        // wide, which sgemm would take as a matrix-vector product, summed in another order.
        // A chunk too narrow to give each thread a few register tiles' width is built by
        // the threads a run of channels each, and multiplied by all (sgemm then splits W's
        // rows); built by one thread, a 7x7 map's 4608 x 49 block took a tenth of ResNet-18's
        // last convs on two threads, the other waiting.
        forEachRowChunk(p, [&](int64_t r0, int64_t r1) {
          const int64_t cols = (r1 - r0) * out2;
          if (cols < activeThreadCount() * kMinColumnsPerThread) {
            const int64_t channelFloats = s.k / s.inPerGroup * cols;
            parallelForWork(s.inPerGroup, channelFloats, [&](int64_t begin, int64_t end) {
              im2col(p.window, xg + begin * s.inPlane, end - begin, r0, r1,
                     workspace + begin * channelFloats);
            });
            product(workspace, cols, r0 * out2);
            return;
          }
          parallelFor(r1 - r0, out2 == 1 ? 2 : 1, [&](int64_t begin, int64_t end) {
            float *block = workspace + s.k * begin * out2;
            im2col(p.window, xg, s.inPerGroup, r0 + begin, r0 + end, block);
            product(block, (end - begin) * out2, (r0 + begin) * out2);
          });
        });
      }
      if (finishes)
        parallelFor(s.outPerGroup, 1,
                    [&](int64_t begin, int64_t end) { finishRows(n, g, begin, end); });
    }
  }
}

// Both backward passes hold one chunk of the same im2col matrix the forward pass builds.
size_t convBackwardDataWorkspaceBytes(const ConvParams &p) { return im2colWorkspaceBytes(p); }

namespace {
// Windows that tile dx (readsEachOnce: the upsampling ConvTranspose of kernel = stride) give
// each chunk of output rows a part of dx of its own, so threads take whole chunks, each
// product serial in its own slot, a part of the one chunk's workspace: the column scatter no
// longer runs on one thread after each split product.
constexpr int64_t kTilingSlots = 4;
} // namespace

void convBackwardDataF32(const ConvParams &p, const float *dy, const float *w, float *dx,
                         float *workspace) {
  const GroupShape s(p);
  const int64_t out2 = p.window.out[2];
  // col2im accumulates, and input elements no window reads get no gradient at all; windows
  // that tile the input store each element once instead.
  const bool tiles = readsEachOnce(p.window);
  if (!s.pointwise && !tiles)
    std::fill(dx, dx + p.window.batch * p.window.channels * s.inPlane, 0.0f);
  if (tiles && !s.pointwise) {
    const int64_t rows = p.window.out[0] * p.window.out[1];
    const int64_t chunkRows = rowsPerChunk(p), slots = std::min(kTilingSlots, chunkRows);
    const int64_t slotRows = chunkRows / slots;
    const int64_t chunks = (rows + slotRows - 1) / slotRows, items = p.groups * chunks;
    parallelForInSlots(
        p.window.batch * items, slots, s.k * slotRows * out2 * s.outPerGroup,
        [&](int64_t slot, int64_t item) {
          const int64_t n = item / items, g = item % items / chunks;
          const int64_t r0 = item % chunks * slotRows, r1 = std::min(rows, r0 + slotRows);
          const int64_t cols = (r1 - r0) * out2;
          float *columns = workspace + slot * s.k * slotRows * out2;
          sgemm(true, false, s.k, cols, s.outPerGroup, 1.0f, w + s.wOffset(g), s.k,
                dy + s.yOffset(p, n, g) + r0 * out2, s.outPlane, 0.0f, columns, cols);
          col2imTiling(p.window, columns, s.inPerGroup, r0, r1, dx + s.xOffset(p, n, g));
        });
    return;
  }
  for (int64_t n = 0; n < p.window.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float *dyg = dy + s.yOffset(p, n, g), *wg = w + s.wOffset(g);
      float *dxg = dx + s.xOffset(p, n, g);
      if (s.pointwise) {
        sgemm(true, false, s.k, s.outPlane, s.outPerGroup, 1.0f, wg, s.k, dyg, s.outPlane, 0.0f,
              dxg, s.inPlane);
        continue;
      }
      // The gradient of the im2col matrix is W^T * dy, one chunk of columns at a time.
      forEachRowChunk(p, [&](int64_t r0, int64_t r1) {
        const int64_t cols = (r1 - r0) * out2;
        sgemm(true, false, s.k, cols, s.outPerGroup, 1.0f, wg, s.k, dyg + r0 * out2, s.outPlane,
              0.0f, workspace, cols);
        col2im(p.window, workspace, s.inPerGroup, r0, r1, dxg);
      });
    }
  }
}

size_t convBackwardFilterWorkspaceBytes(const ConvParams &p) { return im2colWorkspaceBytes(p); }

void convBackwardFilterF32(const ConvParams &p, const float *x, const float *dy, float *dw,
                           float *workspace) {
  const GroupShape s(p);
  const int64_t out2 = p.window.out[2];
  // Every product accumulates, so an empty batch or output still leaves dw defined.
  std::fill(dw, dw + p.outChannels * s.k, 0.0f);
  for (int64_t n = 0; n < p.window.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float *xg = x + s.xOffset(p, n, g), *dyg = dy + s.yOffset(p, n, g);
      float *dwg = dw + s.wOffset(g);
      if (s.pointwise) {
        sgemm(false, true, s.outPerGroup, s.k, s.outPlane, 1.0f, dyg, s.outPlane, xg, s.inPlane,
              1.0f, dwg, s.k);
        continue;
      }
      // dW = dy * im2col(x)^T, summed over chunks of output rows.
      forEachRowChunk(p, [&](int64_t r0, int64_t r1) {
        const int64_t cols = (r1 - r0) * out2;
        im2col(p.window, xg, s.inPerGroup, r0, r1, workspace);
        sgemm(false, true, s.outPerGroup, s.k, cols, 1.0f, dyg + r0 * out2, s.outPlane, workspace,
              cols, 1.0f, dwg, s.k);
      });
    }
  }
}

} // namespace rt
} // namespace dlc
