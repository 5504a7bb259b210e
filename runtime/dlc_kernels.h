// The dlc kernels: what generated model code calls and the runtime implements, the contract
// the compiler and the kernels share (a model's users include only dlc_runtime.h).
// It depends only on the C++ standard library, so a model's static library ships alone.
//
// Kernels never allocate. They fail only on input data the compiler cannot see (e.g. a
// runtime Gather index out of range), by returning false before writing anything; the
// compiler has proven every shape and passes constant shapes and arena pointers. Tensors are
// dense, row-major.
#ifndef DLC_KERNELS_H
#define DLC_KERNELS_H

#include "dlc_runtime.h"
#include "scalar_ops.h" // Rounding; per-element definitions the CUDA kernels share

namespace dlc {
namespace rt {

// Allocates `bytes` aligned to 64; returns nullptr on failure (never throws).
void *alignedAlloc(size_t bytes);
void alignedFree(void *ptr);
// Fills memory with all-ones bytes: NaN as float/double, -1 as integers. Used by
// DLC_CHECK_MEMORY builds on arena memory that holds no live value.
void poison(void *ptr, size_t bytes);

// ---- elementwise -------------------------------------------------------------------------
// The unary and binary kinds are listed once, as X-macros (DLC_UNARY_KINDS in scalar_ops.h,
// with each kind's definition): the compiler names the same enumerators in
// dlc.fused_elementwise steps and checks those names against these lists.
// For float and double (T deduced from the pointers).
template <typename T> void unary(UnaryKind kind, const T *x, T *y, int64_t n);
// As unary(), on the kernels of instruction set `isa` (which the CPU must have): the compiler
// evaluates constants on the baseline, so generated files do not depend on its machine.
enum class CpuIsa;
template <typename T> void unaryOn(CpuIsa isa, UnaryKind kind, const T *x, T *y, int64_t n);
void clipF32(const float *x, float *y, int64_t n, float lo, float hi);
// An activation fused into the op that produces its input (the fuse pass), applied in place
// to that op's output as the unfused op would (the same kernels: the same bits).
// Each is an enumerator and its name as the producer's dlc.activation attribute; one list for
// the enum, the compiler's attribute checks and the code it writes. Silu is x * sigmoid(x);
// HardSwish x * clip(x * float(1/6) + 0.5, 0, 1), each step rounded as HardSigmoid's and the
// Mul's kernels round it; Clip takes min and max, LeakyRelu alpha.
#define DLC_ACTIVATIONS(X)                                                                     \
  X(None, "none") X(Relu, "relu") X(Clip, "clip") X(LeakyRelu, "leaky_relu")                    \
  X(Sigmoid, "sigmoid") X(Tanh, "tanh") X(Silu, "silu") X(HardSwish, "hard_swish")
enum class Activation : int32_t {
#define DLC_ACTIVATION_ENUMERATOR(name, attribute) name,
  DLC_ACTIVATIONS(DLC_ACTIVATION_ENUMERATOR)
#undef DLC_ACTIVATION_ENUMERATOR
};
struct Epilogue {
  Activation activation;
  float min, max; // Clip's bounds
  float alpha;    // LeakyRelu's slope
};
void applyEpilogue(const Epilogue &epilogue, float *y, int64_t n);
void leakyReluF32(const float *x, float *y, int64_t n, float alpha);
// dx = dy * f'(x) for the unary op f of `kind`. `saved` is what f' is cheapest from, the
// forward output or input, as scalar::unaryGradFrom(kind) says (kinds without a gradient
// kernel, GradFrom::None, write nothing). At 0, Relu's and Abs's gradients are 0, as in
// PyTorch.
void unaryGradF32(UnaryKind kind, const float *dy, const float *saved, float *dx, int64_t n);
// dx = dy where lo <= x <= hi (bounds included, as torch.clamp), else 0.
void clipGradF32(const float *dy, const float *x, float *dx, int64_t n, float lo, float hi);
// dx = dy * (x > 0 ? 1 : alpha).
void leakyReluGradF32(const float *dy, const float *x, float *dx, int64_t n, float alpha);

// Converts n elements as ONNX Cast: float to integer truncates toward zero (4- and 2-bit
// integers keep the low bits of the truncated value, NaN and infinities give 0), anything to
// bool is != 0, float results round to nearest even. With `saturate`, float8 results clamp to
// their largest finite value instead of overflowing to infinity or NaN (float4 always clamps).
// float8 e8m0 results round as `rounding` says (Rounding is in scalar_ops.h, shared with the
// CUDA kernels).
void cast(dlc_dtype from, const void *x, dlc_dtype to, void *y, int64_t n, bool saturate = true,
          Rounding rounding = Rounding::Up);

// X(Name, onFloats): each kind, and whether it is defined on floats (fused float chains may
// hold it). Integer division and remainder by 0 (and MIN / -1) give 0 instead of trapping.
// And, Or, Xor and the shifts are for integers and bool only; Mod takes the divisor's sign,
// FMod the dividend's.
#define DLC_BINARY_KINDS(X)                                                                    \
  X(Add, true) X(Sub, true) X(Mul, true) X(Div, true) X(Pow, true) X(Max, true) X(Min, true)    \
  X(And, false) X(Or, false) X(Xor, false) X(ShiftLeft, false) X(ShiftRight, false)             \
  X(Mod, true) X(FMod, true)
#define DLC_ENUMERATOR(name, onFloats) name,
enum class BinaryKind { DLC_BINARY_KINDS(DLC_ENUMERATOR) };
#undef DLC_ENUMERATOR
// out[i] = a[ia] op b[ib] over `rank` dims of `outShape`; aStrides/bStrides are element strides
// of each operand mapped onto the output's dims (0 where the operand is broadcast).
template <typename T>
void binary(BinaryKind kind, const T *a, const int64_t *aStrides, const T *b,
            const int64_t *bStrides, T *out, const int64_t *outShape, int rank);
// A chain of float32 elementwise ops computed in one pass (dlc-fuse-elementwise). Slots hold
// values: the chain's inputs first, then one per step in order; each step reads one or two
// earlier slots, and the last step's value is the output.
enum class FusedStepKind : int32_t { Unary, Binary, Clip, LeakyRelu };
struct FusedStep {
  FusedStepKind kind;
  UnaryKind unary;   // kind Unary
  BinaryKind binary; // kind Binary
  int32_t a, b;      // the slots read (b for Binary only)
  float p0, p1;      // Clip: min, max; LeakyRelu: alpha (p0)
};
constexpr FusedStep unaryStep(UnaryKind kind, int32_t a) {
  return {FusedStepKind::Unary, kind, BinaryKind::Add, a, 0, 0.0f, 0.0f};
}
constexpr FusedStep binaryStep(BinaryKind kind, int32_t a, int32_t b) {
  return {FusedStepKind::Binary, UnaryKind::Relu, kind, a, b, 0.0f, 0.0f};
}
constexpr FusedStep clipStep(int32_t a, float lo, float hi) {
  return {FusedStepKind::Clip, UnaryKind::Relu, BinaryKind::Add, a, 0, lo, hi};
}
constexpr FusedStep leakyReluStep(int32_t a, float alpha) {
  return {FusedStepKind::LeakyRelu, UnaryKind::Relu, BinaryKind::Add, a, 0, alpha, 0.0f};
}
// Output element i reads input element (i / repeat) % period: a same-shaped input has repeat 1
// and period >= n, a scalar period 1, a per-channel [C, 1, 1] input over [N, C, H, W] repeat
// H * W and period C.
struct FusedInput {
  const float *data;
  int64_t repeat, period;
};
// The most slots (inputs + steps) a chain may have: each thread keeps a chunk of every slot on
// its stack.
constexpr int kFusedMaxSlots = 32;
// out[0, n) = the chain's last value. Each step runs the unfused op's kernel over chunks of
// the slots, so results equal the unfused ops' bit for bit, whatever the thread count. `out`
// may be the storage of a same-shaped input (each chunk is read before it is written).
void fusedElementwiseF32(const FusedInput *inputs, int numInputs, const FusedStep *steps,
                         int numSteps, float *out, int64_t n);

// A chain as code (the compiler's default; fusedElementwiseF32 interprets the same steps, for
// comparisons): out[begin, begin + len) from the inputs, len <= kFusedChunk. The generated
// function computes each step with the scalar definition the interpreter's kernel applies,
// and the vector math steps with mathRow, so the two give the same bits; it is compiled once
// per instruction set (DLC_FUSED_CHAIN), without multiply-add contraction.
constexpr int64_t kFusedChunk = 256;
using FusedChain = void (*)(const float *const *inputs, float *out, int64_t begin, int64_t len);
// The chain's version for each CpuIsa, in enum order.
struct FusedChainVersions {
  FusedChain versions[3];
};
// Runs `chain` over [0, n) in chunks of kFusedChunk, split over the threads as
// fusedElementwiseF32 splits them. `out` may be a same-shaped input's storage.
void fusedChainF32(const FusedChainVersions &chain, const float *const *inputs, float *out,
                   int64_t n);
// buffer[0, len) = elements [begin, begin + len) of a broadcast input (FusedInput's indexing).
void fusedInputChunk(const FusedInput &input, int64_t begin, int64_t len, float *buffer);
// MathFunction's kernel on the calling thread alone (the generated chains' math steps).
enum class MathFunction;
void mathRow(MathFunction function, const float *x, float *y, int64_t n);
enum class CompareKind { Equal, Less, LessEqual, Greater, GreaterEqual };
// As binary(), with a bool (0/1 byte) result.
template <typename T>
void compare(CompareKind kind, const T *a, const int64_t *aStrides, const T *b,
             const int64_t *bStrides, uint8_t *out, const int64_t *outShape, int rank);
// out = cond ? a : b elementwise, all three broadcast (strides as in binary()), for elements of
// `elementBytes` bytes.
void select(const uint8_t *cond, const int64_t *condStrides, const void *a,
            const int64_t *aStrides, const void *b, const int64_t *bStrides, void *out,
            const int64_t *outShape, int rank, int64_t elementBytes);
// y = x broadcast to outShape (strides as in binary()), for elements of `elementBytes` bytes.
void broadcastBytes(const void *x, const int64_t *xStrides, void *y, const int64_t *outShape,
                    int rank, int64_t elementBytes);
// y = x broadcast to outShape, xStrides as in binary().
void broadcastF32(const float *x, const int64_t *xStrides, float *y, const int64_t *outShape,
                  int rank);

// ---- instruction sets and threads ---------------------------------------------------------
// Kernels with a version per instruction set pick one once per process: the widest the CPU
// has, or a narrower one named by $DLC_CPU (baseline, avx2, avx512). AVX2 and AVX-512 use
// fused multiply-adds, so results may differ from the baseline's in the last bits.
enum class CpuIsa { Baseline = 0, Avx2 = 1, Avx512 = 2 };
CpuIsa selectedCpuIsa();
const char *cpuIsaName(CpuIsa isa);

// DLC_FUSED_CHAIN(name) defines `name`'s versions for each instruction set (FusedChainVersions
// name_versions) from `static DLC_CHAIN_BODY void name(...)`: the body is inlined into a
// copy compiled for each target. DLC_NO_CONTRACT starts the body: its steps round one at a
// time, as the unfused ops' kernels do.
// DLC_NO_CONTRACT_FUNCTION marks any other function whose body starts with DLC_NO_CONTRACT.
#if defined(__clang__)
#define DLC_CHAIN_BODY inline __attribute__((always_inline))
#define DLC_NO_CONTRACT _Pragma("clang fp contract(off)")
#define DLC_CHAIN_TARGET(isa) __attribute__((target(isa)))
#define DLC_NO_CONTRACT_FUNCTION
#elif defined(__GNUC__)
#define DLC_CHAIN_BODY inline __attribute__((always_inline, optimize("fp-contract=off")))
#define DLC_NO_CONTRACT
#define DLC_CHAIN_TARGET(isa) __attribute__((target(isa), optimize("fp-contract=off")))
#define DLC_NO_CONTRACT_FUNCTION __attribute__((optimize("fp-contract=off")))
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define DLC_FUSED_CHAIN(name)                                                                  \
  DLC_CHAIN_TARGET("avx2,fma")                                                                 \
  void name##_avx2(const float *const *in, float *out, int64_t begin, int64_t len) {           \
    name(in, out, begin, len);                                                                 \
  }                                                                                            \
  DLC_CHAIN_TARGET("avx512f,avx2,fma")                                                         \
  void name##_avx512(const float *const *in, float *out, int64_t begin, int64_t len) {         \
    name(in, out, begin, len);                                                                 \
  }                                                                                            \
  const dlc::rt::FusedChainVersions name##_versions = {{name, name##_avx2, name##_avx512}};
#else
#define DLC_FUSED_CHAIN(name)                                                                  \
  const dlc::rt::FusedChainVersions name##_versions = {{name, name, name}};
#endif

// Float functions evaluated a vector at a time (runtime/vector_math.h; accuracy in
// docs/architecture.md, section 9): unary(), softmax and the fused chains use them.
// Silu is x * sigmoid(x): the product of x and Sigmoid's rounded result, the bits of the
// unfused Sigmoid and Mul.
enum class MathFunction { Exp, Log, Tanh, Sigmoid, Erf, Silu, HardSwish };
void mathF32(MathFunction function, const float *x, float *y, int64_t n);
// The unary kinds whose float kernel is the vector math: the function of the same name.
inline bool vectorMathOf(UnaryKind kind, MathFunction &function) {
  switch (kind) {
  case UnaryKind::Exp: function = MathFunction::Exp; return true;
  case UnaryKind::Log: function = MathFunction::Log; return true;
  case UnaryKind::Tanh: function = MathFunction::Tanh; return true;
  case UnaryKind::Sigmoid: function = MathFunction::Sigmoid; return true;
  case UnaryKind::Erf: function = MathFunction::Erf; return true;
  default: return false;
  }
}
void mathF32On(CpuIsa isa, MathFunction function, const float *x, float *y, int64_t n);

// A model's worker threads (declared in dlc_runtime.h). Kernels run on a thread that holds a
// ThreadScope split their work into at most that many fixed parts; everywhere else they run
// serially.
constexpr int kMaxThreads = 64;
// $DLC_THREADS when set, else the cores this process may run on.
int defaultThreadCount();
// Null for threads <= 1 (or without memory). Starts no thread until its first parallel run;
// destroyThreadPool joins them.
ThreadPool *createThreadPool(int threads);
void destroyThreadPool(ThreadPool *pool);
class ThreadScope {
public:
  explicit ThreadScope(ThreadPool *pool);
  ~ThreadScope();
  ThreadScope(const ThreadScope &) = delete;
  ThreadScope &operator=(const ThreadScope &) = delete;

private:
  ThreadPool *previous_;
};
int activeThreadCount();
// The most threads one parallel region of the current pool ran on since the last call (1 when
// none ran in parallel); resets the count.
int takeWidestRun();

// Times one op of a model compiled with --profile into its entry, from construction to
// destruction (which an early error return also reaches).
class OpTimer {
public:
  explicit OpTimer(dlc_op_profile &op);
  ~OpTimer();
  OpTimer(const OpTimer &) = delete;
  OpTimer &operator=(const OpTimer &) = delete;

private:
  dlc_op_profile &op_;
};
// Runs task(context, part) for every part in [0, parts), part 0 on the calling thread, and
// returns when all have finished. Parts must not depend on each other; which thread runs a
// part past the first one each is decided at run time (the first thread free claims it).
void parallelRun(int parts, void (*task)(void *context, int part), void *context);

// ---- linear algebra ----------------------------------------------------------------------
// C = alpha * op(A) * op(B) + beta * C, row-major; op(X) = X or X^T. beta == 0 ignores C's
// previous contents (it may be uninitialised).
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
           const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
           int64_t ldc);
// Constant operands packed ahead of time (by the compiler, into the weights) in the one layout
// every instruction set's kernels read: op(A) (m x k) and op(B) (k x n).
size_t packedGemmABytes(int64_t m, int64_t k);
size_t packedGemmBBytes(int64_t k, int64_t n);
void packGemmA(bool transA, int64_t m, int64_t k, const float *a, int64_t lda, float *packed);
void packGemmB(bool transB, int64_t k, int64_t n, const float *b, int64_t ldb, float *packed);
// What the packed products add to each element (i, j) of C after its last product, in the
// order of the unfused ops: + rowBias[i] or + columnBias[j] (a convolution's bias, one per
// output channel: a row of C in NCHW, a column in NHWC), + residual[i * ldr + j], then
// scalar::clampValue(v, lo, hi) when `clamp` (Relu and Clip). The same bits as those ops run
// after the product; value-initialized ({}) it adds nothing.
struct GemmEpilogue {
  const float *rowBias, *columnBias, *residual;
  int64_t ldr;
  bool clamp;
  float lo, hi;
};
// sgemm with op(A) or op(B) packed.
void sgemmPackedA(int64_t m, int64_t n, int64_t k, float alpha, const float *packedA,
                  bool transB, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                  const GemmEpilogue &epilogue = GemmEpilogue{});
void sgemmPackedB(bool transA, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, const float *packedB, float beta, float *c, int64_t ldc,
                  const GemmEpilogue &epilogue = GemmEpilogue{});
// Batched matmul: for each batch i, C_i[m,n] = A[aOffsets[i]..] (m x k) * B[bOffsets[i]..] (k x n).
// Offsets are element offsets, so broadcast batch dims cost nothing.
void batchedMatmulF32(const float *a, const int64_t *aOffsets, const float *b,
                      const int64_t *bOffsets, float *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k);
// Scaled dot-product attention (dlc.attention): for each of `batch` entries, out (S x E) =
// softmax over each row of (query (S x D) x keys (D x T), multiplied or divided by scale,
// plus bias) times values (T x E). Only a block of query rows' scores exists at a time, in
// the workspace (attentionWorkspaceBytes), beside packed copies of some entries' keys and values.
// Each matrix of entry b starts at its offsets[b] (elements) and has contiguous rows `rowStride`
// apart, but for the keys, which are either [D, T] (rows T-contiguous) or, `keysByRow`, [T, D]
// (each key's D contiguous): split heads read in place. Entries with the same keys and values
// (grouped-query attention) are packed once.
struct AttentionMatrix {
  const int64_t *offsets;
  int64_t rowStride;
};
struct AttentionParams {
  int64_t batch, queries, depth, keys, valueDepth;
  float scale;
  bool divide; // the scores are divided by scale; else multiplied (unless it is 1)
  AttentionMatrix query, keyMatrix, values, output;
  bool keysByRow;
  const float *bias;          // or null
  const int64_t *biasOffsets; // bias's first element for each batch entry
  int64_t biasRowStride, biasColumnStride;
  // Or null: per query row, the keys from which on a mask shared by every entry hides all
  // (a causal mask). Their scores are not computed: probability 0, as the masked scores'
  // exponentials round to. Blocks of rows are then smaller (workspace: `skipsMaskedKeys`).
  const int64_t *visibleKeys;
};
size_t attentionWorkspaceBytes(int64_t batch, int64_t queries, int64_t depth, int64_t keys,
                               int64_t valueDepth, bool skipsMaskedKeys);
void attentionF32(const AttentionParams &p, const float *query, const float *keys,
                  const float *values, float *out, float *workspace);
// Rotary position embedding (dlc.rotary): each row of n (even) floats of x becomes
// x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[n/2:], x[:n/2]], each step rounded as
// the unfused ops round it. The rows of y are contiguous; row `index` (over `dims`, row-major)
// of x, cos and sin starts at the sum of its indices times their strides. cos's and sin's
// elements are `cosStep` and `sinStep` apart in a row (0: one value, broadcast).
struct RotaryParams {
  int64_t rank;
  const int64_t *dims, *inputStrides, *cosStrides, *sinStrides;
  int64_t n, cosStep, sinStep;
};
void rotaryF32(const RotaryParams &p, const float *x, const float *cos, const float *sin,
               float *y);
// The same on int32 (MatMulInteger, QLinearMatMul): exact, sums wrap modulo 2^32.
void batchedMatmulI32(const int32_t *a, const int64_t *aOffsets, const int32_t *b,
                      const int64_t *bOffsets, int32_t *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k);
// The same on float64, accumulated in double (a plain loop: float64 models are rare).
void batchedMatmulF64(const double *a, const int64_t *aOffsets, const double *b,
                      const int64_t *bOffsets, double *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k);
// The determinants of `count` m x m matrices, by LU decomposition with partial pivoting in
// double; workspace holds at least m * m doubles (one matrix at a time).
void detF32(const float *x, float *y, int64_t count, int64_t m, void *workspace);

// ---- convolution and pooling (NC + up to 3 spatial dims; lower ranks use size-1 dims) ----
struct WindowParams {
  int64_t batch, channels;
  int64_t in[3], out[3], kernel[3], stride[3], padBegin[3], dilation[3];
};
struct ConvParams {
  WindowParams window; // window.channels = input channels
  int64_t outChannels, groups;
  // Bound on the workspace (0: 1 MiB for im2col, 4 MiB for Winograd). A larger im2col matrix
  // or set of Winograd tiles is built and multiplied in pieces, so a big early convolution does
  // not set the arena's peak.
  int64_t workspaceLimit;
  // The weights come packed by packConvWeights (constant weights, packed by the compiler).
  bool packedWeights;
  Epilogue epilogue; // after the bias
  // x, y and the residual are channels-last (N, H, W, C) instead of (N, C, H, W); only where
  // channelsLastApplies, and only with packed weights.
  bool channelsLast;
  // With channelsLast: x stays (N, C, H, W), only y and the residual are channels-last (a
  // network's first layer, reading an image).
  bool planarInput;
};
// Whether a channels-last kernel exists for p's shape: a 2-D depthwise convolution (one
// output channel per input channel) or a 2-D pointwise one (1x1, unit stride, one group);
// with planarInput, a 2-D convolution of one group over up to kMaxPlanarInputChannels.
bool channelsLastApplies(const ConvParams &p);
// An image's channels (gray, RGB, RGBA): with more, the channels-first kernels' products over
// the channels beat a kernel that broadcasts every input value.
constexpr int64_t kMaxPlanarInputChannels = 4;
// Whether convF32 runs p (with packed weights) as a product over zero-padded input planes: a
// 2-d convolution of stride 1 or 2, no dilation, up to 7x7, with at least 4 output channels
// per group, grouped (RegNet's, ResNeXt's) or with few channels (detectors' early layers),
// whose planes fit the workspace limit in bands of output rows.
bool paddedPlanesApply(const ConvParams &p);
// Bytes of scratch memory convF32 needs for these parameters (0 when it can skip im2col:
// pointwise and depthwise convolutions), for im2col or Winograd, whichever packedWeights picks.
size_t convWorkspaceBytes(const ConvParams &p);
// Whether packing the weights ahead of time pays (not for a few output channels per group),
// and the packed form: what convF32 reads when p.packedWeights is set.
bool convPacksWeights(const ConvParams &p);
bool winogradApplies(const ConvParams &p);
// The layout packConvWeights gives p's weights: the kernel convF32 runs them through decides
// it, so the same weights pack differently for convolutions of other shapes (a detector head
// shared by maps of several sizes). Together with the groups, which split the weights, it
// names the packed form: the compiler keeps one packed copy per name.
enum class ConvWeightLayout {
  ChannelsLastDepthwise,
  ChannelsLast,
  PlanarInput,
  Winograd,
  Planes,
  Im2col,
};
ConvWeightLayout convWeightLayout(const ConvParams &p);
const char *convWeightLayoutName(ConvWeightLayout layout);
size_t packedConvWeightBytes(const ConvParams &p);
void packConvWeights(const ConvParams &p, const float *w, float *packed);
// y = activation(conv(x, w) + bias + residual); bias and residual may be null. The residual
// (y's shape; a fused Add) must not overlap y. inputScale (pointwise convolutions only, of
// one group and more than one input channel; N x C floats) multiplies each image's input
// channels first: a fused broadcast Mul (squeeze-and-excitation's gate).
void convF32(const ConvParams &p, const float *x, const float *w, const float *bias,
             const float *residual, float *y, float *workspace,
             const float *inputScale = nullptr);
// Gradients of convF32 from dy: dx (all of it written) and dw (summed over the batch). Each
// holds im2col chunks in its workspace under the same limit (0 for a pointwise convolution;
// depthwise ones need it although convF32 does not).
size_t convBackwardDataWorkspaceBytes(const ConvParams &p);
void convBackwardDataF32(const ConvParams &p, const float *dy, const float *w, float *dx,
                         float *workspace);
size_t convBackwardFilterWorkspaceBytes(const ConvParams &p);
void convBackwardFilterF32(const ConvParams &p, const float *x, const float *dy, float *dw,
                           float *workspace);
void maxPoolF32(const WindowParams &p, const float *x, float *y);
// Where each maxPoolF32 output came from: its flat index in x (over batch and channels too),
// the spatial part row-major or, with columnMajor, column-major; -1 for an all-padding window.
void maxPoolIndicesF32(const WindowParams &p, const float *x, int64_t *indices, bool columnMajor);
// ONNX RoiAlign over x [batch, channels, height, width]: for each region (x1, y1, x2, y2 in
// rois, of image batchIndices[r]) and channel, outHeight x outWidth bins of bilinear samples,
// averaged (or, with `max`, the largest weighted tap), into y [rois, channels, out...].
// samplingRatio 0 takes ceil(bin size) samples per axis. False, before anything of the
// region is written, for a batch index out of range, a non-finite coordinate, or a region
// needing more than kMaxRoiSamplesPerAxis samples along an axis of a bin.
constexpr int64_t kMaxRoiSamplesPerAxis = 4096;
struct RoiAlignParams {
  int64_t batch, channels, height, width, rois, outHeight, outWidth, samplingRatio;
  float spatialScale;
  bool halfPixel, max;
};
bool roiAlignF32(const RoiAlignParams &p, const float *x, const float *rois,
                 const int64_t *batchIndices, float *y);
// Routes each dy to the element of x maxPoolF32 took (the first maximum, or a NaN); dx is all
// written, and an element no window took gets 0.
void maxPoolGradF32(const WindowParams &p, const float *x, const float *dy, float *dx);
// padEnd[3] has padBegin's dim layout. With countIncludePad, ONNX divides by the number of
// window positions inside the padded extent [-padBegin, in + padEnd), so a ceil_mode window
// hanging past the end pads counts fewer.
void avgPoolF32(const WindowParams &p, const int64_t *padEnd, bool countIncludePad,
                const float *x, float *y);
// The adjoint of avgPoolF32 with the same arguments; dx is all written.
void avgPoolGradF32(const WindowParams &p, const int64_t *padEnd, bool countIncludePad,
                    const float *dy, float *dx);
void globalAvgPoolF32(const float *x, float *y, int64_t batchChannels, int64_t spatial);
void globalAvgPoolGradF32(const float *dy, float *dx, int64_t batchChannels, int64_t spatial);
void batchNormF32(const float *x, const float *scale, const float *bias, const float *mean,
                  const float *var, float epsilon, float *y, int64_t batch, int64_t channels,
                  int64_t spatial);
// Batch norm in training mode, over x viewed [batch, channels, spatial]. `stats` holds
// 3 * channels floats: the batch mean, 1 / sqrt(biased variance + epsilon), and the biased
// variance.
void batchNormStatsF32(const float *x, float epsilon, float *stats, int64_t batch,
                       int64_t channels, int64_t spatial);
void batchNormApplyF32(const float *x, const float *stats, const float *scale, const float *bias,
                       float *y, int64_t batch, int64_t channels, int64_t spatial);
// dx, with the batch statistics as functions of x.
void batchNormGradInputF32(const float *dy, const float *x, const float *stats,
                           const float *scale, float *dx, int64_t batch, int64_t channels,
                           int64_t spatial);
// dscale in out[0, channels), dbias in out[channels, 2 * channels).
void batchNormGradParamsF32(const float *dy, const float *x, const float *stats, float *out,
                            int64_t batch, int64_t channels, int64_t spatial);
// running = (1 - momentum) * running + momentum * batch statistic, with the variance unbiased
// (times count / (count - 1), count = batch * spatial, unless count is 1), as in PyTorch.
void batchNormRunningUpdateF32(float *runningMean, float *runningVar, const float *stats,
                               float momentum, int64_t channels, int64_t count);

// ---- normalisation and reductions -------------------------------------------------------
// Softmax over the middle dim of an [outer, n, inner] view.
template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool log);
// Layer normalization (dlc.layer_norm) of `rows` contiguous rows of n floats:
// (x - mean) / sqrt(variance + epsilon), times scale[j] and plus bias[j] where they are set;
// with `rms` (RMSNorm) x / sqrt(mean(x^2) + epsilon). Threads take whole rows.
void layerNormF32(const float *x, const float *scale, const float *bias, float *y, int64_t rows,
                  int64_t n, float epsilon, bool rms);
// dx from dy and softmax's output y (the log-softmax with `log`).
void softmaxGradF32(const float *dy, const float *y, float *dx, int64_t outer, int64_t n,
                    int64_t inner, bool log);
// Negative log-likelihood: minus the mean, over the outer * inner positions, of the
// log-probabilities logp (viewed [outer, classes, inner]) at each position's label (labels
// viewed [outer, inner]). False, with nothing written, when a label is outside [0, classes).
bool nllLossF32(const float *logp, const int64_t *labels, float *loss, int64_t outer,
                int64_t classes, int64_t inner);
// dlogp = -*dloss / (outer * inner) at each label's class, 0 elsewhere; false as nllLossF32.
bool nllLossGradF32(const float *dloss, const int64_t *labels, float *dlogp, int64_t outer,
                    int64_t classes, int64_t inner);
enum class ReduceKind { Sum, Mean, Max, Min, Prod };
// Reduces x (shape inShape, `rank` dims) into y; outStrides maps each input dim onto y's
// elements (0 for reduced dims). reducedCount = number of input elements per output element.
template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *inShape, const int64_t *outStrides,
            int rank, T *y, int64_t outCount, int64_t reducedCount);

// y[o, i] = index of the max (or min) of x[o, :, i] over an [outer, n, inner] view; the first
// such index, or the last with selectLast. NaN counts as larger than (and, for the min,
// smaller than) everything, as in NumPy's argmax/argmin.
template <typename T>
void argReduce(bool max, bool selectLast, const T *x, int64_t *y, int64_t outer, int64_t n,
               int64_t inner);
// Running sums (products) along the middle dim of an [outer, n, inner] view; `exclusive` leaves
// out the element itself, `reverse` runs from the end. Integers wrap.
template <typename T>
void cumsum(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
            bool reverse);
template <typename T>
void cumprod(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
            bool reverse);

// ---- data movement (type-agnostic, elemSize bytes per element) --------------------------
void copyBytes(const void *x, void *y, size_t bytes);
void transpose(const void *x, void *y, size_t elemSize, const int64_t *inShape,
               const int64_t *perm, int rank);
// y[j][i] = x[i][j] for a rows x cols matrix of elemSize-byte elements, in tiles.
void transposeMatrix(const void *x, int64_t rows, int64_t cols, void *y, size_t elemSize);
// Concatenates `count` inputs along an axis of an [outer, axisSize_i, inner] view.
void concat(const void *const *inputs, const int64_t *axisSizes, int count, void *y,
            int64_t outer, int64_t inner, size_t elemSize);
// y[o, j, i] = x[o, idx[j] (negative wraps), i] over an [outer, axisDim, inner] view of x.
// False, with nothing written, when an index is outside [-axisDim, axisDim).
template <typename Index>
bool gather(const void *x, const Index *indices, int64_t numIndices, void *y, int64_t outer,
            int64_t axisDim, int64_t inner, size_t elemSize);
// dx = 0, then dx[o, idx[j], i] += dy[o, j, i]: gather's gradient, with indices gather has
// already checked.
template <typename Index>
void gatherGradF32(const float *dy, const Index *indices, int64_t numIndices, float *dx,
                   int64_t outer, int64_t axisDim, int64_t inner);
// ONNX GatherElements: y[i...] = x[i... with i_axis = idx[i...]] (negative indices wrap);
// y has the shape of `indices`, x's other dims are at least as large. False, with nothing
// written, when an index is outside [-x's axis dim, x's axis dim).
template <typename Index>
bool gatherElements(const void *x, const int64_t *xShape, const Index *indices,
                    const int64_t *indexShape, void *y, int rank, int axis, size_t elemSize);
// How a scatter combines an update with the element it lands on (ONNX's `reduction`).
enum class ScatterReduction { None, Add, Mul, Max, Min };
// ONNX ScatterElements: y = x, then y[i... with i_axis = idx[i...]] (op)= updates[i...] in
// order; `updates` has the indices' shape. x may alias y. False, with y unspecified, when an
// index is outside [-x's axis dim, x's axis dim).
template <typename T, typename Index>
bool scatterElements(const T *x, const int64_t *xShape, const Index *indices,
                     const int64_t *indexShape, const T *updates, T *y, int rank, int axis,
                     ScatterReduction reduction);
// ONNX ScatterND: y = x, then for each of `tuples` index tuples of length k (negative
// entries wrap), the slice of y it addresses (prod(xShape[k:]) elements) (op)= the next slice
// of `updates`. x may alias y. False when an index is out of range.
template <typename T>
bool scatterND(const T *x, const int64_t *xShape, int rank, const int64_t *indices, int64_t tuples,
               int k, const T *updates, T *y, ScatterReduction reduction);
// ONNX GatherND: the first `batchDims` dims of x and of the indices are a shared batch of
// `batches` entries; in each, `tuples` index tuples of length k each select a slice of x's
// dims past batchDims + k (negative entries wrap). False, with nothing written, when an index
// is out of range.
bool gatherND(const void *x, const int64_t *xShape, int rank, int batchDims, const int64_t *indices,
              int64_t batches, int64_t tuples, int k, void *y, size_t elemSize);
// The indices of the k largest (or smallest) elements of each [outer, ., inner] line along
// the middle axis, best first; equal values in index order (ONNX TopK, sorted).
template <typename T>
void topK(const T *x, int64_t *indices, int64_t outer, int64_t n, int64_t inner, int64_t k,
          bool largest);
// Strided slice: y[i...] = x[starts + i*steps ...]; steps may be negative.
void slice(const void *x, void *y, size_t elemSize, const int64_t *inShape,
           const int64_t *starts, const int64_t *steps, const int64_t *outShape, int rank);
// slice()'s gradient, with slice()'s arguments: dx = 0, then dx[starts + i*steps ...] = dy[i...].
void sliceGrad(const float *dy, float *dx, const int64_t *inShape, const int64_t *starts,
               const int64_t *steps, const int64_t *outShape, int rank);

// ---- training: optimizer updates and dropout ------------------------------------------
// Optimizer steps update their state in place with torch.optim's arithmetic.
// SGD (no dampening): d = g + weightDecay * w; with momentum != 0,
// buf = firstStep ? d : momentum * buf + d and d = nesterov ? d + momentum * buf : buf;
// then w -= lr * d. momentumBuf may be null when momentum == 0.
void sgdUpdateF32(float *w, const float *g, float *momentumBuf, int64_t n, float lr,
                  float momentum, float weightDecay, bool nesterov, bool firstStep);
// Adam (decoupled false: g += weightDecay * w) or AdamW (decoupled: w *= 1 - lr * weightDecay
// first), non-amsgrad, with moments m and v. The caller computes biasCorrection1 =
// 1 - beta1^t and biasCorrection2 = 1 - beta2^t in double from the step count t (from 1).
// w -= lr / biasCorrection1 * m / (sqrt(v) / sqrt(biasCorrection2) + eps).
void adamUpdateF32(float *w, const float *g, float *m, float *v, int64_t n, float lr, float beta1,
                   float beta2, float eps, float weightDecay, bool decoupled,
                   float biasCorrection1, float biasCorrection2);
// mask[i] = 0 with probability ratio, else 1 / (1 - ratio), for ratio in [0, 1). The mask is a
// pure function of (seed, counter, i) (a splitmix64 hash), so a step's mask is reproducible
// from the seed and, say, the step number as counter.
void dropoutMaskF32(uint64_t seed, uint64_t counter, float ratio, float *mask, int64_t n);

} // namespace rt
} // namespace dlc
#endif // DLC_KERNELS_H
