#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "dialects/Verifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace dlc {

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t elementBytes(Type element) {
  if (isa<Float4E2M1Type, Float8E8M0Type>(element))
    return 1;
  return (element.getIntOrFloatBitWidth() + 7) / 8;
}

std::optional<int64_t> checkedTensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return checkedTensorBytes(tensor.getShape(), elementBytes(tensor.getElementType()));
}

int64_t tensorBytes(Type type) {
  auto bytes = checkedTensorBytes(type);
  assert(bytes && "tensor type above the size limit escaped verification");
  return bytes.value_or(kMaxTensorBytes);
}

static LogicalResult verifyTensorSize(Operation *op, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor && !tensor.hasStaticShape())
    return op->emitOpError("needs static shapes, got ") << type;
  if (tensor && !checkedTensorBytes(type))
    return op->emitOpError("tensor ")
           << type << " is too large: above dlc's limit of " << kMaxTensorBytesText;
  return success();
}

LogicalResult verifyTensorSizeLimit(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (failed(verifyTensorSize(op, type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(verifyTensorSize(op, type)))
      return failure();
  return success();
}

int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode) {
  // Attributes may come from hand-written IR: sums that leave int64 give -1, which no result
  // shape matches.
  auto padded = checkedAdd(in, padBegin);
  padded = padded ? checkedAdd(*padded, padEnd) : std::nullopt;
  auto extent = checkedMul(dilation, kernel - 1);
  if (!padded || !extent)
    return -1;
  int64_t span = *padded - *extent - 1;
  if (span < 0)
    return 0;
  int64_t out = span / stride + 1;
  // Ceil mode adds a partial last window, unless it would start in the end padding.
  if (ceilMode && span % stride != 0 && out * stride < in + padBegin)
    ++out;
  return out;
}

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

// An empty tensor's other dims may multiply past int64 (they are checked only through the
// element count, which is 0): its products and strides, which no kernel reads, are then 0.
int64_t product(ArrayRef<int64_t> dims) { return checkedElementCount(dims).value_or(0); }

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = checkedMul(strides[i + 1], shape[i + 1]).value_or(0);
  return strides;
}

// Numpy broadcasting aligns trailing dims, and a size-1 (or missing) dim repeats: stride 0.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> own = stridesOf(shape), strides(outShape.size(), 0);
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    strides[i + offset] = shape[i] == 1 ? 0 : own[i];
  return strides;
}

std::pair<int64_t, int64_t> outerInner(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), product(shape.drop_front(axis + 1))};
}

LogicalResult checkResultShape(Operation *op, ArrayRef<int64_t> expected) {
  auto actual = tensorType(op->getResult(0)).getShape();
  if (actual != expected)
    return op->emitOpError("result shape ") << dimsString(actual) << " should be "
                                            << dimsString(expected);
  return success();
}

LogicalResult sameShapes(Operation *op, ValueRange values, Value like) {
  for (Value v : values)
    if (tensorType(v).getShape() != tensorType(like).getShape())
      return op->emitOpError("operand shape ")
             << dimsString(tensorType(v).getShape()) << " should be "
             << dimsString(tensorType(like).getShape());
  return success();
}

static LogicalResult verifyBinary(Operation *op, bool boolResult = false) {
  auto lhs = tensorType(op->getOperand(0)), rhs = tensorType(op->getOperand(1));
  auto out = tensorType(op->getResult(0));
  if (lhs.getElementType() != rhs.getElementType() ||
      (!boolResult && lhs.getElementType() != out.getElementType()))
    return op->emitOpError("operand and result element types differ");
  Type element = lhs.getElementType();
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  bool integerOnly = kind == "And" || kind == "Or" || kind == "Xor" || kind == "ShiftLeft" ||
                     kind == "ShiftRight";
  bool arithmetic = !integerOnly && !boolResult;
  if ((integerOnly && !element.isInteger()) || (arithmetic && element.isInteger(1)))
    return op->emitOpError("no ") << kind << " for element type " << element;
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << dimsString(lhs.getShape()) << " and " << dimsString(rhs.getShape())
           << " do not broadcast";
  return checkResultShape(op, *shape);
}

#define DLC_BINARY_VERIFIER(OP)                                                                \
  LogicalResult OP::verify() { return verifyBinary(*this); }
#define DLC_COMPARE_VERIFIER(OP)                                                               \
  LogicalResult OP::verify() { return verifyBinary(*this, /*boolResult=*/true); }
DLC_BINARY_VERIFIER(AndOp)
DLC_BINARY_VERIFIER(OrOp)
DLC_BINARY_VERIFIER(XorOp)
DLC_BINARY_VERIFIER(ShiftLeftOp)
DLC_BINARY_VERIFIER(ShiftRightOp)
DLC_BINARY_VERIFIER(ModOp)
DLC_BINARY_VERIFIER(FModOp)
DLC_COMPARE_VERIFIER(EqualOp)
DLC_COMPARE_VERIFIER(LessOp)
DLC_COMPARE_VERIFIER(LessEqualOp)
DLC_COMPARE_VERIFIER(GreaterOp)
DLC_COMPARE_VERIFIER(GreaterEqualOp)

LogicalResult WhereOp::verify() {
  auto lhs = tensorType(getLhs()), rhs = tensorType(getRhs()), out = tensorType(getOutput());
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != out.getElementType())
    return emitOpError("operand and result element types differ");
  auto shape = broadcastShapes(tensorType(getCondition()).getShape(), lhs.getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, rhs.getShape());
  if (failed(shape))
    return emitOpError("operand shapes do not broadcast");
  return checkResultShape(*this, *shape);
}
DLC_BINARY_VERIFIER(AddOp)
DLC_BINARY_VERIFIER(SubOp)
DLC_BINARY_VERIFIER(MulOp)
DLC_BINARY_VERIFIER(DivOp)
DLC_BINARY_VERIFIER(PowOp)
DLC_BINARY_VERIFIER(MaxOp)
DLC_BINARY_VERIFIER(MinOp)
#undef DLC_BINARY_VERIFIER

LogicalResult CastOp::verify() {
  if (tensorType(getInput()).getShape() != tensorType(getOutput()).getShape())
    return emitOpError("changes the shape");
  return success();
}

LogicalResult MatMulOp::verify() {
  auto a = tensorType(getLhs()).getShape(), b = tensorType(getRhs()).getShape();
  if (a.size() < 2 || b.size() < 2)
    return emitOpError("operands must have rank >= 2");
  if (a.back() != b[b.size() - 2])
    return emitOpError("contraction dims differ: ") << a.back() << " vs " << b[b.size() - 2];
  auto batch = broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (failed(batch))
    return emitOpError("batch dims do not broadcast");
  SmallVector<int64_t> expected(*batch);
  expected.append({a[a.size() - 2], b.back()});
  return checkResultShape(*this, expected);
}

SmallVector<int64_t> flatOffsets(ArrayRef<int64_t> dims, ArrayRef<int64_t> strides,
                                 int64_t base) {
  SmallVector<int64_t> offsets;
  for (int64_t flat = 0, count = product(dims); flat < count; ++flat) {
    int64_t rest = flat, offset = base;
    for (int64_t d = (int64_t)dims.size() - 1; d >= 0; --d) {
      offset += rest % dims[d] * strides[d];
      rest /= dims[d];
    }
    offsets.push_back(offset);
  }
  return offsets;
}

// A fused activation (dlc-fuse-epilogues) must be one the runtime has, with its parameters.
LogicalResult verifyEpilogue(Operation *op) {
  Attribute attr = op->getAttr(kActivationAttr);
  if (!attr)
    return success();
  auto name = dyn_cast<StringAttr>(attr);
  auto hasFloat = [&](const char *param) { return isa_and_nonnull<FloatAttr>(op->getAttr(param)); };
  static const llvm::StringSet<> known = {
#define DLC_ACTIVATION_NAME(enumerator, attribute) attribute,
      DLC_ACTIVATIONS(DLC_ACTIVATION_NAME)
#undef DLC_ACTIVATION_NAME
  };
  // Clip and LeakyRelu take parameters (below); "none" is written as no attribute at all.
  if (name && known.contains(name.getValue()) && name.getValue() != "none" &&
      name.getValue() != "clip" && name.getValue() != "leaky_relu")
    return success();
  if (name && name.getValue() == "leaky_relu" && hasFloat(kActivationAlphaAttr))
    return success();
  if (name && name.getValue() == "clip" && hasFloat(kActivationMinAttr) &&
      hasFloat(kActivationMaxAttr))
    return success();
  return op->emitOpError("unknown fused activation ")
         << attr << " (or its float parameter is missing)";
}

LogicalResult GemmOp::verify() {
  auto a = tensorType(getA()).getShape(), b = tensorType(getB()).getShape();
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("operands must be matrices");
  int64_t m = getTransA() ? a[1] : a[0], k = getTransA() ? a[0] : a[1];
  int64_t kb = getTransB() ? b[1] : b[0], n = getTransB() ? b[0] : b[1];
  if (k != kb)
    return emitOpError("contraction dims differ: ") << k << " vs " << kb;
  if (getC()) {
    auto c = broadcastShapes(tensorType(getC()).getShape(), {m, n});
    if (failed(c) || (*c)[0] != m || (*c)[1] != n)
      return emitOpError("bias shape does not broadcast to [") << m << "," << n << "]";
  }
  if (failed(verifyEpilogue(*this)))
    return failure();
  return checkResultShape(*this, {m, n});
}

LogicalResult DetOp::verify() {
  auto x = tensorType(getInput()).getShape();
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    return emitOpError("input ") << dimsString(x) << " is not a stack of square matrices";
  return checkResultShape(*this, x.drop_back(2));
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = tensorType(getInput()).getRank(), axis = getAxis();
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return emitOpError("axis ") << axis << " out of range for rank " << rank;
  return success();
}

static LogicalResult verifyReduce(Operation *op, ArrayRef<int64_t> axes) {
  auto x = tensorType(op->getOperand(0)).getShape();
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis < 0 || axis >= (int64_t)x.size() || (i && axes[i - 1] >= axis))
      return op->emitOpError("axes must be sorted, unique and in [0, ") << x.size() << ")";
  SmallVector<int64_t> kept, dropped;
  for (auto [i, d] : llvm::enumerate(x)) {
    bool reduced = llvm::is_contained(axes, (int64_t)i);
    kept.push_back(reduced ? 1 : d);
    if (!reduced)
      dropped.push_back(d);
  }
  auto actual = tensorType(op->getResult(0)).getShape();
  if (actual != ArrayRef<int64_t>(kept) && actual != ArrayRef<int64_t>(dropped))
    return op->emitOpError("result shape ") << dimsString(actual) << " should be "
                                            << dimsString(kept) << " or "
                                            << dimsString(dropped);
  return success();
}
#define DLC_REDUCE_VERIFIER(OP)                                                                \
  LogicalResult OP::verify() { return verifyReduce(*this, getAxes()); }
DLC_REDUCE_VERIFIER(ReduceSumOp)
DLC_REDUCE_VERIFIER(ReduceMeanOp)
DLC_REDUCE_VERIFIER(ReduceMaxOp)
DLC_REDUCE_VERIFIER(ReduceMinOp)
DLC_REDUCE_VERIFIER(ReduceProdOp)

static LogicalResult verifyArgReduce(Operation *op, int64_t axis) {
  auto x = tensorType(op->getOperand(0)).getShape();
  if (axis < 0 || axis >= (int64_t)x.size())
    return op->emitOpError("axis ") << axis << " is outside [0, " << x.size() << ")";
  if (x[axis] == 0)
    return op->emitOpError("the axis is empty");
  int64_t reduced[] = {axis};
  return verifyReduce(op, reduced);
}
LogicalResult ArgMaxOp::verify() { return verifyArgReduce(*this, int64_t(getAxis())); }
LogicalResult ArgMinOp::verify() { return verifyArgReduce(*this, int64_t(getAxis())); }

template <typename Op> static LogicalResult verifyRunning(Op op) {
  int64_t axis = static_cast<int64_t>(op.getAxis()), rank = tensorType(op.getInput()).getRank();
  if (axis < 0 || axis >= rank)
    return op.emitOpError("axis ") << axis << " is outside [0, " << rank << ")";
  return success();
}
LogicalResult CumSumOp::verify() { return verifyRunning(*this); }
LogicalResult CumProdOp::verify() { return verifyRunning(*this); }

// GatherElements and ScatterElements: indices of the input's rank, no larger off the axis.
static LogicalResult verifyElementIndices(Operation *op, RankedTensorType x,
                                          RankedTensorType idx, int64_t axis) {
  if (x.getRank() != idx.getRank() || x.getRank() == 0)
    return op->emitOpError("input and indices must have the same non-zero rank");
  if (axis < 0 || axis >= x.getRank())
    return op->emitOpError("axis out of range");
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d != axis && idx.getDimSize(d) > x.getDimSize(d))
      return op->emitOpError("indices dim ") << d << " exceeds the input's";
  return success();
}

LogicalResult GatherElementsOp::verify() {
  auto x = tensorType(getInput()), idx = tensorType(getIndices());
  if (failed(verifyElementIndices(*this, x, idx, static_cast<int64_t>(getAxis()))))
    return failure();
  if (tensorType(getOutput()) != idx.clone(x.getElementType()))
    return emitOpError("result must have the indices' shape and the input's element type");
  return success();
}
static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitOpError("unknown reduction '") << reduction << "'";
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto x = tensorType(getInput()), idx = tensorType(getIndices());
  if (failed(verifyElementIndices(*this, x, idx, static_cast<int64_t>(getAxis()))))
    return failure();
  if (tensorType(getUpdates()) != idx.clone(x.getElementType()))
    return emitOpError("updates must have the indices' shape and the input's element type");
  if (getType() != x)
    return emitOpError("result type must be the input's");
  return verifyReduction(*this, getReduction());
}

LogicalResult ScatterNDOp::verify() {
  auto x = tensorType(getInput()), idx = tensorType(getIndices());
  if (idx.getRank() == 0 || idx.getShape().back() > x.getRank())
    return emitOpError("index tuples must not be longer than the input's rank");
  SmallVector<int64_t> updates(idx.getShape().drop_back());
  llvm::append_range(updates, x.getShape().drop_front(idx.getShape().back()));
  if (tensorType(getUpdates()) != x.clone(updates))
    return emitOpError("updates must be indices.shape[:-1] + input.shape[k:]");
  if (getType() != x)
    return emitOpError("result type must be the input's");
  return verifyReduction(*this, getReduction());
}

LogicalResult GatherNDOp::verify() {
  auto x = tensorType(getInput()), idx = tensorType(getIndices());
  int64_t batch = static_cast<int64_t>(getBatchDims());
  if (idx.getRank() < 1 || batch < 0 || batch >= std::min(x.getRank(), idx.getRank()) ||
      batch + idx.getShape().back() > x.getRank())
    return emitOpError("batch_dims and index tuples do not fit the input");
  for (int64_t d = 0; d < batch; ++d)
    if (x.getDimSize(d) != idx.getDimSize(d))
      return emitOpError("batch dim ") << d << " differs between input and indices";
  SmallVector<int64_t> shape(idx.getShape().drop_back());
  llvm::append_range(shape, x.getShape().drop_front(batch + idx.getShape().back()));
  if (getType() != x.clone(shape))
    return emitOpError("result must be indices.shape[:-1] + input.shape[batch_dims + k:]");
  return success();
}

LogicalResult TopKOp::verify() {
  auto x = tensorType(getInput()), y = tensorType(getOutput());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= x.getRank() || y.getRank() != x.getRank())
    return emitOpError("axis out of range");
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d == axis ? y.getDimSize(d) > x.getDimSize(d) : y.getDimSize(d) != x.getDimSize(d))
      return emitOpError("result must be the input's shape with at most its size along the axis");
  return success();
}

#undef DLC_REDUCE_VERIFIER

bool stateUpdateBetween(Operation *first, Operation *last) {
  for (Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode())
    if (op->hasTrait<StateUpdateTrait>())
      return true;
  return false;
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getOutput());
  if (elementBytes(in.getElementType()) != elementBytes(out.getElementType()))
    return emitOpError("element width changes");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A reshaped constant is a constant: same bytes, new type. (DenseElementsAttr packs bools
  // as bits, so a bit cast to or from bool is left to run.)
  auto type = cast<ShapedType>(getType());
  Type from = tensorType(getInput()).getElementType(), to = type.getElementType();
  if (from != to && (from.isInteger(1) || to.isInteger(1)))
    return {};
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return from == to ? dense.reshape(type)
                      : DenseElementsAttr::getFromRawBuffer(type, dense.getRawData());
  if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(adaptor.getInput()))
    return DenseResourceElementsAttr::get(type, resource.getRawHandle());
  // reshape(reshape(x)) needs only the outer shape.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::verify() {
  auto in = tensorType(getInput()).getShape();
  auto perm = getPerm();
  if (perm.size() != in.size())
    return emitOpError("perm needs ") << in.size() << " entries";
  SmallVector<bool> seen(in.size());
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
    expected.push_back(in[p]);
  }
  return checkResultShape(*this, expected);
}

static bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, dim] : llvm::enumerate(perm))
    if (dim != int64_t(i))
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto inner = getInput().getDefiningOp<TransposeOp>();
  if (!inner)
    return isIdentityPermutation(getPerm()) ? getInput() : OpFoldResult();
  // Dim i of the result is dim perm[i] of the inner result: dim innerPerm[perm[i]] of x.
  SmallVector<int64_t> composed;
  for (int64_t dim : getPerm())
    composed.push_back(inner.getPerm()[dim]);
  if (isIdentityPermutation(composed))
    return inner.getInput();
  setPerm(composed);
  getInputMutable().assign(inner.getInput());
  return getResult();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  auto first = tensorType(getInputs()[0]);
  int64_t axis = getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOpError("axis ") << axis << " out of range";
  SmallVector<int64_t> expected(first.getShape());
  expected[axis] = 0;
  for (Value in : getInputs()) {
    auto t = tensorType(in);
    if (t.getRank() != first.getRank() || t.getElementType() != first.getElementType())
      return emitOpError("inputs differ in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOpError("inputs differ in dim ") << d;
    expected[axis] += t.getDimSize(axis);
  }
  return checkResultShape(*this, expected);
}

FailureOr<SmallVector<int64_t>> gatheredShape(Operation *op, ArrayRef<int64_t> in,
                                                     ArrayRef<int64_t> indices, int64_t axis) {
  if (axis < 0 || axis >= (int64_t)in.size())
    return op->emitOpError("axis ") << axis << " out of range for rank " << in.size();
  SmallVector<int64_t> gathered(in.begin(), in.begin() + axis);
  gathered.append(indices.begin(), indices.end());
  gathered.append(in.begin() + axis + 1, in.end());
  return gathered;
}

LogicalResult GatherOp::verify() {
  auto expected = gatheredShape(*this, tensorType(getInput()).getShape(),
                                tensorType(getIndices()).getShape(), getAxis());
  return failed(expected) ? failure() : checkResultShape(*this, *expected);
}

LogicalResult verifySliceBounds(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                       ArrayRef<int64_t> starts, ArrayRef<int64_t> steps) {
  if (starts.size() != in.size() || steps.size() != in.size() || out.size() != in.size())
    return op->emitOpError("starts, steps and the sliced shape need one entry per dim");
  for (size_t i = 0; i < in.size(); ++i) {
    if (steps[i] == 0)
      return op->emitOpError("step must be non-zero");
    if (out[i] == 0)
      continue;
    // Steps may be negative: signed overflow checks, not the size helpers'.
    int64_t offset, last;
    if (starts[i] < 0 || starts[i] >= in[i] ||
        __builtin_mul_overflow(out[i] - 1, steps[i], &offset) ||
        __builtin_add_overflow(starts[i], offset, &last) || last < 0 || last >= in[i])
      return op->emitOpError("slice leaves dim ") << i << " bounds";
  }
  return success();
}

std::optional<int64_t> viewByteOffset(Operation *op) {
  if (op->hasTrait<ViewOpTrait>())
    return 0;
  auto slice = dyn_cast<SliceOp>(op);
  if (!slice)
    return std::nullopt;
  auto in = tensorType(slice.getInput()).getShape();
  auto out = tensorType(slice.getOutput()).getShape();
  if (llvm::any_of(slice.getSteps(), [](int64_t step) { return step != 1; }))
    return std::nullopt;
  int64_t last = int64_t(in.size()) - 1;
  while (last >= 0 && out[last] == in[last])
    --last;
  int64_t offset = 0, stride = 1;
  for (int64_t d = int64_t(in.size()) - 1; d >= 0; --d) {
    if (d < last && out[d] != 1)
      return std::nullopt;
    offset += slice.getStarts()[d] * stride;
    stride *= in[d];
  }
  return offset * elementBytes(tensorType(slice.getInput()).getElementType());
}

LogicalResult SliceOp::verify() {
  return verifySliceBounds(*this, tensorType(getInput()).getShape(),
                           tensorType(getOutput()).getShape(), getStarts(), getSteps());
}

} // namespace dlc

#define GET_OP_CLASSES
#include "dialects/DlcOps.cpp.inc"
#include "dialects/DlcInterfaces.cpp.inc"
