// Internal to the runtime (and its tests): the blocked GEMM and the depthwise row kernel,
// built once per instruction set (gemm.cpp, isa_avx2.cpp, isa_avx512.cpp) and chosen at run
// time by CPUID. Only plain declarations, here and in dlc_runtime.h: translation units
// compiled for a wider target include this, and an inline function they compiled could be
// picked by the linker for every caller (the one helper here is internal).
#ifndef DLC_RUNTIME_GEMM_H
#define DLC_RUNTIME_GEMM_H

#include "dlc_kernels.h"

#include <stdint.h>

namespace dlc {
namespace rt {

// Operands packed ahead of time (packGemmA, packGemmB) use one layout for every instruction
// set: k in blocks of gemmBlockDepth(k); within a block, A in panels of kPackRows rows stored
// column by column and B in panels of kPackCols columns stored row by row, zero-padded. Each
// kernel's register tile divides the panel, so it reads a panel with a stride.
constexpr int64_t kPackRows = 12, kPackCols = 32;
// Floats in a cache line (the unit prefetches ask for).
constexpr int64_t kFloatsPerLine = 64 / sizeof(float);

namespace {
// k split into equal blocks of at most kMaxBlockDepth: a short last block would pay for
// loading and storing C over only a few multiply-adds. (Internal linkage: this header is
// compiled for several targets.)
constexpr int64_t kMaxBlockDepth = 256;
constexpr int64_t gemmBlockDepth(int64_t k) {
  return k <= kMaxBlockDepth ? k : (k + (k + kMaxBlockDepth - 1) / kMaxBlockDepth - 1) /
                                        ((k + kMaxBlockDepth - 1) / kMaxBlockDepth);
}
} // namespace

// The blocked kernels pack A (or read it in place) at most this many rows at a time and walk
// the k block of B once per such block of rows (a multiple of every kernel's tile rows).
constexpr int64_t kGemmRowBlock = 96;

// Fewer rows than this (of an unpacked A) take row-by-row loops instead of the tiled kernel,
// which would mostly multiply padding.
constexpr int64_t kGemmFewRows = 4;

// A packed operand of the whole product: `padded` is its rows (A) or columns (B) rounded up
// to the panel, `first` the row or column where this (part of the) product starts.
struct PackedOperand {
  const float *data;
  int64_t padded, first;
};

// C = alpha * op(A) * op(B) + beta * C, row-major, as sgemm takes it; packedA / packedB, when
// their data is set, replace a / b.
struct GemmArgs {
  bool transA, transB;
  int64_t m, n, k;
  float alpha;
  const float *a;
  int64_t lda;
  const float *b;
  int64_t ldb;
  float beta;
  float *c;
  int64_t ldc;
  PackedOperand packedA, packedB;
  GemmEpilogue epilogue; // after the product (dlc_kernels.h)
  // Column p of op(A) times scaleA[p] (k floats; not with packedA): a fused per-channel Mul
  // of A, each product rounded as the Mul rounds it. Row p of B times scaleB[p] likewise (not
  // with packedB or transB): a channels-first pointwise convolution's input.
  const float *scaleA = nullptr;
  const float *scaleB = nullptr;
};

// sgemm on the kernels of one instruction set, which the CPU must have (tests, benchmarks).
void sgemmOn(CpuIsa isa, const GemmArgs &g);

void sgemmBlockedBaseline(const GemmArgs &g);
// Defined only on x86-64 (isa_*.cpp); call them only where the CPU has the instructions.
void sgemmBlockedAvx2(const GemmArgs &g);
void sgemmBlockedAvx512(const GemmArgs &g);

// One output row of a depthwise convolution: y[j] = init + sum over taps t (in order) of
// weights[t] * sources[t][j], for j < n. Each source row must be readable (zero-padded) up to
// n rounded up to 16 floats, the widest vector.
struct DepthwiseRowArgs {
  int64_t taps;
  const float *const *sources;
  const float *weights;
  float init;
  float *y;
  int64_t n;
};
constexpr int64_t kDepthwiseRowPad = 16;
// On the instruction set chosen for sgemm, or on a given one the CPU has (tests).
void depthwiseRow(const DepthwiseRowArgs &r);
void depthwiseRowOn(CpuIsa isa, const DepthwiseRowArgs &r);
void depthwiseRowBaseline(const DepthwiseRowArgs &r);
void depthwiseRowAvx2(const DepthwiseRowArgs &r);
void depthwiseRowAvx512(const DepthwiseRowArgs &r);

// What a channels-last row kernel applies to its sums in registers before it stores them: a
// clamp (Relu, Clip) or one math function (SiLU, HardSwish...), or neither.
struct RowActivation {
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  bool applyMath = false;
  MathFunction math = MathFunction::Exp;
};

// One output row of a channels-last depthwise convolution: for o < outWidth and c in
// [channelBegin, channelEnd), y[o][c] = bias[c] + the sum over taps (k1, k2) in order, those
// inside the image only, of weights[k1][k2][c] * x[i1][i2][c], + residual[o][c], then
// `activation`: clamped to [lo, hi] (scalar::clampValue) if `clamp`, or the vector math's
// function applied (mathF32's bits) if `applyMath`.
struct DepthwiseNhwcRowArgs {
  const float *x; // the image: inHeight x inWidth x channels
  int64_t inHeight, inWidth, channels;
  // The channels this call computes, [channelBegin, channelEnd).
  int64_t channelBegin, channelEnd;
  const float *weights;  // kernelHeight x kernelWidth x channels
  const float *bias;     // channels, or null
  const float *residual; // outWidth x channels, or null
  float *y;              // outWidth x channels
  int64_t outWidth, kernelHeight, kernelWidth;
  int64_t firstRow; // the input row of tap row 0 (may lie outside the image)
  int64_t strideWidth, padWidth, dilationHeight, dilationWidth;
  RowActivation activation;
};
void depthwiseNhwcRow(const DepthwiseNhwcRowArgs &r);
void depthwiseNhwcRowOn(CpuIsa isa, const DepthwiseNhwcRowArgs &r);
void depthwiseNhwcRowBaseline(const DepthwiseNhwcRowArgs &r);
void depthwiseNhwcRowAvx2(const DepthwiseNhwcRowArgs &r);
void depthwiseNhwcRowAvx512(const DepthwiseNhwcRowArgs &r);

// One output row of a channels-last convolution over planar input (planar_input_kernel.h):
// a network's first layer, whose few input channels (an image's) stay planes, and every
// output position's channels come out together, so that no transpose follows.
struct PlanarInputRowArgs {
  const float *x; // the image: channels x inHeight x inWidth
  int64_t channels, inHeight, inWidth;
  const float *weights;  // channels x kernelHeight x kernelWidth x outChannels
  const float *bias;     // outChannels, or null
  const float *residual; // outWidth x outChannels, or null
  float *y;              // outWidth x outChannels
  int64_t outChannels, outWidth, kernelHeight, kernelWidth;
  int64_t firstRow; // the input row of tap row 0 (may lie outside the image)
  int64_t strideWidth, padWidth, dilationHeight, dilationWidth;
  RowActivation activation;
};
void planarInputRow(const PlanarInputRowArgs &r);
void planarInputRowOn(CpuIsa isa, const PlanarInputRowArgs &r);
void planarInputRowBaseline(const PlanarInputRowArgs &r);
void planarInputRowAvx2(const PlanarInputRowArgs &r);
void planarInputRowAvx512(const PlanarInputRowArgs &r);

// Rows of a channels-last pointwise convolution (runtime/pointwise_kernel.h): y (rows x n) =
// x (rows x k) times weights packed by packGemmB (k <= kMaxBlockDepth, so one block), plus
// bias and residual where set, clamped to [lo, hi] when `clamp`. y's and the residual's rows
// are ld >= n floats apart; the weights may start at a panel boundary inside wider ones.
struct PointwiseNhwcArgs {
  const float *x;
  int64_t rows, k, n, ld;
  const float *packedWeights;
  const float *bias;     // n, or null
  const float *residual; // rows x ld, or null
  float *y;
  bool clamp;
  float lo, hi;
};
void pointwiseNhwc(const PointwiseNhwcArgs &a);
void pointwiseNhwcOn(CpuIsa isa, const PointwiseNhwcArgs &a);
void pointwiseNhwcBaseline(const PointwiseNhwcArgs &a);
void pointwiseNhwcAvx2(const PointwiseNhwcArgs &a);
void pointwiseNhwcAvx512(const PointwiseNhwcArgs &a);

// Max pooling of planes [planeBegin, planeEnd) of a planar window (isPlanar, window.h) from x
// to y (runtime/pool_kernel.h), in the caller's scratch: rows and windows of the padded row's
// length ((out[2] - 1) * stride[2] + (kernel[2] - 1) * dilation[2] + 1) plus
// kMaxPoolRowSlack floats each, and a pointer per kernel row and column.
constexpr int64_t kMaxPoolRowSlack = 64;
struct MaxPoolPlanesArgs {
  const WindowParams *window;
  const float *x;
  float *y;
  int64_t planeBegin, planeEnd;
  float *rows, *windows;
  const float **sources;
};
void maxPoolPlanes(const MaxPoolPlanesArgs &a);
void maxPoolPlanesOn(CpuIsa isa, const MaxPoolPlanesArgs &a);
void maxPoolPlanesBaseline(const MaxPoolPlanesArgs &a);
void maxPoolPlanesAvx2(const MaxPoolPlanesArgs &a);
void maxPoolPlanesAvx512(const MaxPoolPlanesArgs &a);

// Winograd's transforms of a run of tiles along one tile row (runtime/winograd_kernel.h),
// `tile` 6 for F(4x4, 3x3) or 4 for F(2x2, 3x3), kOut = tile - 2 outputs wide. Input: tile q
// reads rows firstRow + i and columns firstColumn + kOut q + j of the plane (zero outside it)
// and stores its transform at out[pos * stride + q]. Output: the tiles from the products
// m[pos * stride + q], plus bias and residual (null: none), clamped to [lo, hi], written from
// origin (rows outCols apart), where only `rows` rows and `columns` columns exist; m is read
// in whole vectors, up to 15 floats past its last product.
struct WinogradInputArgs {
  int tile;
  const float *plane;
  int64_t inRows, inCols, firstRow, firstColumn, count;
  float *out;
  int64_t stride;
};
struct WinogradOutputArgs {
  int tile;
  const float *m;
  int64_t stride, count;
  float bias, lo, hi;
  const float *residual;
  float *origin;
  int64_t outCols, rows, columns;
};
void winogradInput(const WinogradInputArgs &a);
void winogradOutput(const WinogradOutputArgs &a);
void winogradInputBaseline(const WinogradInputArgs &a);
void winogradInputAvx2(const WinogradInputArgs &a);
void winogradInputAvx512(const WinogradInputArgs &a);
void winogradOutputBaseline(const WinogradOutputArgs &a);
void winogradOutputAvx2(const WinogradOutputArgs &a);
void winogradOutputAvx512(const WinogradOutputArgs &a);

// A convolution over zero-padded input planes (runtime/plane_conv_kernel.h): output channel
// o < outChannels at position p < output.rows * output.phaseCols is the sum over c < channels
// and t < taps of weight(o, c, t) * input[c * channelStride + tapOffsets[t] + p], the weights
// packed in panels of kPlaneConvRows output channels, each stored k = c * taps + t major.
// Positions are computed in whole vectors: input must hold kPlaneConvSlack floats past the
// last position. Of every phaseCols positions (a padded row) the first cols are finished
// into y: plus bias[o], plus the residual (laid out as y), clamped to [lo, hi] where `clamp`,
// in that order (the GEMM epilogue's), channel o's rows at y + o * channelStride, cols apart.
constexpr int64_t kPlaneConvRows = 8, kPlaneConvSlack = 48;
struct PlaneConvOutput {
  float *y;
  int64_t channelStride, rows, cols, phaseCols;
  const float *bias, *residual;
  bool clamp;
  float lo, hi;
};
struct PlaneConvArgs {
  const float *input;
  int64_t channels, channelStride;
  const int64_t *tapOffsets;
  int64_t taps;
  const float *packedWeights;
  int64_t outChannels;
  PlaneConvOutput output;
};
void planeConv(const PlaneConvArgs &a);
void planeConvOn(CpuIsa isa, const PlaneConvArgs &a);
void planeConvBaseline(const PlaneConvArgs &a);
void planeConvAvx2(const PlaneConvArgs &a);
void planeConvAvx512(const PlaneConvArgs &a);

// The padded planes planeConv reads, from one band of `channels` input planes (inRows x
// inCols, inPlane apart) at x: input row iy, column ix lands in phase ((iy - firstRow) % stride,
// (ix + padLeft) % stride) at row (iy - firstRow) / stride, column (ix + padLeft) / stride of
// it (stride 1 or 2; phases phaseFloats apart in phaseRows rows of phaseCols, channels
// channelFloats apart). Only the positions that read the plane are written, but for the phase
// rows above and below it in the band, which are zeroed: the other padding is zero already.
struct PlanePhasesArgs {
  const float *x;
  int64_t channels, inPlane, inRows, inCols, stride, firstRow, padLeft;
  float *planes;
  int64_t phaseRows, phaseCols, phaseFloats, channelFloats;
};
void planePhases(const PlanePhasesArgs &a);
void planePhasesOn(CpuIsa isa, const PlanePhasesArgs &a);
void planePhasesBaseline(const PlanePhasesArgs &a);
void planePhasesAvx2(const PlanePhasesArgs &a);
void planePhasesAvx512(const PlanePhasesArgs &a);

// mathF32 (dlc_kernels.h) per instruction set (runtime/vector_math.h).
void mathBaseline(MathFunction function, const float *x, float *y, int64_t n);
void mathAvx2(MathFunction function, const float *x, float *y, int64_t n);
void mathAvx512(MathFunction function, const float *x, float *y, int64_t n);

// Softmax (or log-softmax) of `rows` contiguous float rows of n, serially, on the selected
// instruction set (runtime/vector_math.h), and per instruction set. With `sums` (not with
// log), y gets the unnormalized exponentials exp(x - row max) and sums each row's sum.
void softmaxRows(const float *x, float *y, int64_t rows, int64_t n, bool log, float *sums);
void softmaxRowsOn(CpuIsa isa, const float *x, float *y, int64_t rows, int64_t n, bool log,
                   float *sums);
void softmaxRowsBaseline(const float *x, float *y, int64_t rows, int64_t n, bool log,
                         float *sums);
void softmaxRowsAvx2(const float *x, float *y, int64_t rows, int64_t n, bool log, float *sums);
void softmaxRowsAvx512(const float *x, float *y, int64_t rows, int64_t n, bool log, float *sums);
// Softmax (or log-softmax) down `width` columns of x[j * inner + l], j < n, serially, on the
// selected instruction set (runtime/vector_math.h), and per instruction set.
void softmaxColumns(const float *x, float *y, int64_t n, int64_t inner, int64_t width, bool log);
void softmaxColumnsOn(CpuIsa isa, const float *x, float *y, int64_t n, int64_t inner,
                      int64_t width, bool log);
void softmaxColumnsBaseline(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                            bool log);
void softmaxColumnsAvx2(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                        bool log);
void softmaxColumnsAvx512(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                          bool log);

// Layer normalization of `rows` contiguous rows of n floats (layerNormF32, dlc_kernels.h),
// serially, on the selected instruction set (runtime/vector_math.h), and per instruction set.
struct LayerNormRowsArgs {
  const float *x, *scale, *bias; // scale and bias: n floats each, or null
  float *y;
  int64_t rows, n;
  float epsilon;
  bool rms; // RMSNorm: no mean subtracted
};
void layerNormRows(const LayerNormRowsArgs &a);
void layerNormRowsOn(CpuIsa isa, const LayerNormRowsArgs &a);
void layerNormRowsBaseline(const LayerNormRowsArgs &a);
void layerNormRowsAvx2(const LayerNormRowsArgs &a);
void layerNormRowsAvx512(const LayerNormRowsArgs &a);

} // namespace rt
} // namespace dlc

#endif
