// The dlc dialect and its ops. Heavy: include only from .cpp files that build or inspect IR.
#ifndef DLC_DIALECTS_DLCDIALECT_H
#define DLC_DIALECTS_DLCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "runtime/dlc_kernels.h"

#include "dialects/DlcDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/DlcTypes.h.inc"

namespace dlc {
template <typename ConcreteType>
class ViewOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, ViewOpTrait> {};

mlir::LogicalResult verifyTensorSizeLimit(mlir::Operation *op);
template <typename ConcreteType>
class TensorSizeLimit : public mlir::OpTrait::TraitBase<ConcreteType, TensorSizeLimit> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) { return verifyTensorSizeLimit(op); }
};
template <typename ConcreteType>
class StateUpdateTrait : public mlir::OpTrait::TraitBase<ConcreteType, StateUpdateTrait> {};
// The kind-chosen op families (DlcOps.td).
template <typename ConcreteType>
class UnaryKindOp : public mlir::OpTrait::TraitBase<ConcreteType, UnaryKindOp> {};
template <typename ConcreteType>
class BinaryKindOp : public mlir::OpTrait::TraitBase<ConcreteType, BinaryKindOp> {};
template <typename ConcreteType>
class ReduceKindOp : public mlir::OpTrait::TraitBase<ConcreteType, ReduceKindOp> {};
} // namespace dlc

#include "dialects/DlcInterfaces.h.inc"

namespace mlir {
class PatternRewriter; // PowOp::canonicalize; its definition stays out of this header
} // namespace mlir

#define GET_OP_CLASSES
#include "dialects/DlcOps.h.inc"

namespace dlc {
// Attribute names of the memory plan (see the dialect description).
inline constexpr const char kArenaOffsetAttr[] = "dlc.arena_offset";
inline constexpr const char kOutputAttr[] = "dlc.output";              // result lives in outputs[i]
inline constexpr const char kOutputOffsetAttr[] = "dlc.output_offset"; // ... at this byte offset
// Scratch memory the target's kernel for the op needs (set by the target's workspace sizing,
// before planning), and where the plan put it.
inline constexpr const char kWorkspaceBytesAttr[] = "dlc.workspace_bytes";
inline constexpr const char kWorkspaceOffsetAttr[] = "dlc.workspace_offset";
inline constexpr const char kViewAttr[] = "dlc.view"; // result aliases operand 0 (viewByteOffset)
inline constexpr const char kInPlaceAttr[] = "dlc.inplace"; // result overwrites operand #n
inline constexpr const char kElidedAttr[] = "dlc.elided";   // concat inputs already in place
// Arena ranges (offset, bytes pairs) whose values are all dead after this op.
inline constexpr const char kReleaseAttr[] = "dlc.release";
inline constexpr const char kArenaBytesAttr[] = "dlc.arena_bytes";
inline constexpr const char kLowerBoundAttr[] = "dlc.arena_lower_bound";
inline constexpr const char kNoReuseBytesAttr[] = "dlc.no_reuse_bytes";
// A fused epilogue (dlc-fuse-epilogues) on a conv or gemm: "relu", "sigmoid", "tanh", "silu"
// (x * sigmoid(x)), "hard_swish" (x * clip(x * float(1/6) + 0.5, 0, 1)), "leaky_relu" of slope
// activation_alpha, or "clip" to [activation_min, activation_max].
inline constexpr const char kActivationAttr[] = "dlc.activation";
inline constexpr const char kActivationMinAttr[] = "dlc.activation_min";
inline constexpr const char kActivationMaxAttr[] = "dlc.activation_max";
inline constexpr const char kActivationAlphaAttr[] = "dlc.activation_alpha";
// Graph input/output names, on the function's arguments and results.
inline constexpr const char kTensorNameAttr[] = "dlc.name";
// Training builds. On arguments: model state that lives in the model's state buffer
// (weights, running statistics, optimizer moments), state the optimizer trains, and the
// run-time hyperparameters ([lr, first step, 1 - beta1^t, 1 - beta2^t]).
inline constexpr const char kStateAttr[] = "dlc.state";
inline constexpr const char kTrainableAttr[] = "dlc.trainable";
inline constexpr const char kHyperAttr[] = "dlc.hyper";
// On results added by autodiff: the gradient of argument #n.
inline constexpr const char kGradientOfAttr[] = "dlc.gradient_of";

// Numpy broadcast of two static shapes; fails when a dim pair is neither equal nor 1.
mlir::FailureOr<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                            llvm::ArrayRef<int64_t> b);
// Bytes an element of `element` occupies in memory: bools and the 4- and 2-bit integers take
// one byte each.
int64_t elementBytes(mlir::Type element);
// Bytes a tensor of `type` occupies in memory. Every type
// on a dlc op is within kMaxTensorBytes (the TensorSizeLimit trait verifies it), so sums of
// a few such sizes cannot overflow.
int64_t tensorBytes(mlir::Type type);
// Where the op's result would lie in its operand 0's bytes as a view (dlc.view: no code, no
// memory of its own), if it can be one: a reshape (ViewOpTrait) at 0; a slice whose result is
// one contiguous run of its input (unit steps, the dims after the last sliced one whole, the
// dims before it 1: a channel split of an image) at the run's first byte.
std::optional<int64_t> viewByteOffset(mlir::Operation *op);
// Bytes of `type`, or nullopt when it exceeds dlc's tensor size limit.
std::optional<int64_t> checkedTensorBytes(mlir::Type type);
// Output extent of a sliding window, as ONNX defines it for Conv and pooling.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode);
// Runtime kernel parameters of window ops; the dialect computes them once so the workspace
// size and the generated kernel call cannot disagree.
dlc::rt::ConvParams convParams(ConvOp op);
dlc::rt::ConvParams convParams(ConvGradInputOp op);
dlc::rt::ConvParams convParams(ConvGradWeightOp op);
// For pools and pool gradients: the window runs over operand `input` and makes `output`.
dlc::rt::WindowParams windowParams(mlir::Operation *poolOp, mlir::Value input,
                                   mlir::Value output);
// Whether an op strictly between `first` and `last` (one block, `first` before `last`)
// updates model state in place (the optimizer's updates in a training step): a fusion that
// moves a read from `first` down to `last` would then read the updated value.
bool stateUpdateBetween(mlir::Operation *first, mlir::Operation *last);
// dlc.fused_elementwise (FusedElementwise.cpp). How a chain's input of `inShape` broadcast to
// `outShape` is read: output element i reads input element (i / repeat) % period. Nothing
// when the input's non-1 dims are not adjacent (that needs a strided walk).
std::optional<std::pair<int64_t, int64_t>> fusedInputIndexing(llvm::ArrayRef<int64_t> inShape,
                                                              llvm::ArrayRef<int64_t> outShape);
// One step of a chain in the runtime's form, with its kind's name as the step spells it.
struct DecodedFusedStep {
  dlc::rt::FusedStep step;
  llvm::StringRef kind;
};
// The op's steps decoded and checked; reports the first malformed one on the op.
mlir::FailureOr<llvm::SmallVector<DecodedFusedStep>> decodeFusedSteps(FusedElementwiseOp op);
// A step's text: `kind`, the slots it reads, then its parameters.
std::string fusedStepText(llvm::StringRef kind, llvm::ArrayRef<int64_t> slots,
                          llvm::ArrayRef<float> params);
// Whether `kind` names a float op of the runtime's UnaryKind or BinaryKind (arity 1 or 2).
bool isFusedUnaryKind(llvm::StringRef kind);
// The runtime's unary kind of that name (DLC_UNARY_KINDS), or nothing.
std::optional<rt::UnaryKind> unaryKindNamed(llvm::StringRef name);
// Every binary kind (DLC_BINARY_KINDS), and the comparisons, by their ODS kind names.
std::optional<rt::BinaryKind> binaryKindNamed(llvm::StringRef name);
std::optional<rt::CompareKind> compareKindNamed(llvm::StringRef name);
// ONNX Cast's round_mode (up, down, nearest; for float8 e8m0).
rt::Rounding roundingNamed(llvm::StringRef roundMode);

// Kernel geometry: the arguments the emitters write and compile-time evaluation passes, from
// one definition each.
int64_t product(llvm::ArrayRef<int64_t> dims);
// Row-major element strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
// Element strides of a tensor of `shape` read as broadcast to `outShape`.
llvm::SmallVector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> shape,
                                            llvm::ArrayRef<int64_t> outShape);
// How dlc.attention reads each operand and writes its result (DlcOps.td): for each matrix,
// element offset + sum of index * stride over [batch..., rows, columns] of its tensor's
// row-major buffer. Without the view attributes, the contiguous layout of the shapes.
struct AttentionView {
  int64_t offset = 0;
  llvm::SmallVector<int64_t> strides;
};
struct AttentionGeometry {
  llvm::SmallVector<int64_t> batch;
  int64_t queries = 0, depth = 0, keys = 0, valueDepth = 0;
  // The keys' view is of [batch..., D, T]; the bias's strides are empty without a bias.
  AttentionView query, keyMatrix, values, bias, output;
  // The logical dims of each matrix: [rows, columns].
  std::pair<int64_t, int64_t> queryDims() const { return {queries, depth}; }
  std::pair<int64_t, int64_t> keyDims() const { return {depth, keys}; }
  std::pair<int64_t, int64_t> valueDims() const { return {keys, valueDepth}; }
  std::pair<int64_t, int64_t> scoreDims() const { return {queries, keys}; }
  std::pair<int64_t, int64_t> outputDims() const { return {queries, valueDepth}; }
};
// Fails (without a diagnostic) where the views are missing or malformed; the verifier says why.
mlir::FailureOr<AttentionGeometry> attentionGeometry(AttentionOp op);
// Per query row of dlc.attention, the keys from which on its constant mask, shared by every
// entry, hides all scores (a causal mask); nothing when it hides none that way.
std::optional<llvm::SmallVector<int64_t>> attentionVisibleKeys(AttentionOp op);
// dlc.rotary's x: the input transposed by its perm (verified).
mlir::FailureOr<llvm::SmallVector<int64_t>> rotaryInputShape(RotaryOp op);
// For each entry of `dims` in row-major order, `base` plus the sum of its indices times `strides`.
llvm::SmallVector<int64_t> flatOffsets(llvm::ArrayRef<int64_t> dims,
                                       llvm::ArrayRef<int64_t> strides, int64_t base = 0);
// A tensor seen as [outer, shape[axis], inner]: the products of the dims before and after.
std::pair<int64_t, int64_t> outerInner(llvm::ArrayRef<int64_t> shape, int64_t axis);
bool isFusedBinaryKind(llvm::StringRef kind);
void registerGradients(mlir::DialectRegistry &registry);
// The elements as dense little-endian bytes, bools one byte each (dlc's memory layout).
std::vector<char> elementsBytes(mlir::ElementsAttr value);
// The value of a one-element float32 dlc.constant (a scale or epsilon as exporters write
// it); nullopt for anything else.
std::optional<float> scalarF32Constant(mlir::Value v);
// On state arguments: the initial value (absent: zeros).
inline constexpr const char kInitialValueAttr[] = "dlc.initial_value";
// On batch norms imported from ONNX: the running statistics' momentum, ONNX's convention
// (running = momentum * running + (1 - momentum) * batch).
inline constexpr const char kMomentumAttr[] = "dlc.momentum";
// On batch norms exported in training mode (ONNX training_mode=1): normalize with the
// batch's statistics. Training builds use them in the train step only.
inline constexpr const char kBatchStatisticsAttr[] = "dlc.batch_statistics";
} // namespace dlc

#endif
