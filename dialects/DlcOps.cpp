#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"

#include <cstring>
#include "llvm/ADT/STLExtras.h"

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

std::optional<int64_t> checkedTensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  return checkedTensorBytes(tensor.getShape(), bits == 1 ? 1 : bits / 8);
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
  return span / stride + (ceilMode && span % stride != 0) + 1;
}

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

static LogicalResult checkResultShape(Operation *op, ArrayRef<int64_t> expected) {
  auto actual = tensorType(op->getResult(0)).getShape();
  if (actual != expected)
    return op->emitOpError("result shape ") << dimsString(actual) << " should be "
                                            << dimsString(expected);
  return success();
}

static LogicalResult verifyBinary(Operation *op) {
  auto lhs = tensorType(op->getOperand(0)), rhs = tensorType(op->getOperand(1));
  auto out = tensorType(op->getResult(0));
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != out.getElementType())
    return op->emitOpError("operand and result element types differ");
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << dimsString(lhs.getShape()) << " and " << dimsString(rhs.getShape())
           << " do not broadcast";
  return checkResultShape(op, *shape);
}

#define DLC_BINARY_VERIFIER(OP)                                                                \
  LogicalResult OP::verify() { return verifyBinary(*this); }
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
  return checkResultShape(*this, {m, n});
}

// Checks window attributes and returns the expected [N, C_out, spatial...] shape.
static FailureOr<SmallVector<int64_t>>
verifyWindow(Operation *op, ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
             int64_t outChannels, bool ceilMode) {
  if (input.size() < 3 || input.size() > 5)
    return op->emitOpError("input must have 1 to 3 spatial dims, got rank ") << input.size();
  size_t spatial = input.size() - 2;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return op->emitOpError("kernel/strides/dilations need ")
           << spatial << " entries and pads " << 2 * spatial;
  SmallVector<int64_t> out{input[0], outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 ||
        pads[i + spatial] < 0)
      return op->emitOpError("kernel, strides and dilations must be positive, pads >= 0");
    out.push_back(windowOutputSize(input[i + 2], kernel[i], strides[i], pads[i],
                                   pads[i + spatial], dilations[i], ceilMode));
  }
  return out;
}

LogicalResult ConvOp::verify() {
  auto x = tensorType(getInput()).getShape(), w = tensorType(getWeight()).getShape();
  if (w.size() != x.size())
    return emitOpError("weight rank ") << w.size() << " differs from input rank " << x.size();
  int64_t group = getGroup();
  if (group < 1 || x[1] % group || w[0] % group || w[1] * group != x[1])
    return emitOpError("channels do not match: input ")
           << x[1] << ", weight " << dimsString(w) << ", group " << group;
  if (getBias() && tensorType(getBias()).getShape() != ArrayRef<int64_t>{w[0]})
    return emitOpError("bias must have shape [") << w[0] << "]";
  auto expected = verifyWindow(*this, x, w.drop_front(2), getStrides(), getPads(),
                               getDilations(), w[0], /*ceilMode=*/false);
  if (failed(expected))
    return failure();
  return checkResultShape(*this, *expected);
}

int64_t ConvOp::getWorkspaceBytes() { return dlc::rt::convWorkspaceBytes(convParams(*this)); }

LogicalResult BatchNormOp::verify() {
  auto x = tensorType(getInput()).getShape();
  if (x.size() < 2)
    return emitOpError("input must have rank >= 2");
  for (Value param : {getScale(), getBias(), getMean(), getVariance()})
    if (tensorType(param).getShape() != ArrayRef<int64_t>{x[1]})
      return emitOpError("scale, bias, mean and variance must have shape [") << x[1] << "]";
  return checkResultShape(*this, x);
}

template <typename PoolOp> static LogicalResult verifyPool(PoolOp op) {
  auto x = tensorType(op.getInput()).getShape();
  auto expected = verifyWindow(op, x, op.getKernelShape(), op.getStrides(), op.getPads(),
                               op.getDilations(), x.size() > 1 ? x[1] : 0, op.getCeilMode());
  if (failed(expected))
    return failure();
  return checkResultShape(op, *expected);
}
LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

LogicalResult GlobalAvgPoolOp::verify() {
  auto x = tensorType(getInput()).getShape();
  if (x.size() < 3)
    return emitOpError("input must have spatial dims");
  SmallVector<int64_t> expected(x.begin(), x.begin() + 2);
  expected.append(x.size() - 2, 1);
  return checkResultShape(*this, expected);
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
#undef DLC_REDUCE_VERIFIER

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

std::vector<char> ConstantOp::getBytes() {
  std::vector<char> bytes(tensorBytes(getType()));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(getValue())) {
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    std::memcpy(bytes.data(), data.data(), std::min(bytes.size(), data.size()));
    return bytes;
  }
  auto dense = cast<DenseElementsAttr>(getValue());
  if (getType().getElementType().isInteger(1)) { // DenseElementsAttr packs bools as bits
    for (auto [i, bit] : llvm::enumerate(dense.getValues<bool>()))
      bytes[i] = bit;
    return bytes;
  }
  ArrayRef<char> raw = dense.getRawData(); // one element when splat
  for (size_t offset = 0; offset < bytes.size(); offset += raw.size())
    std::memcpy(bytes.data() + offset, raw.data(), std::min(raw.size(), bytes.size() - offset));
  return bytes;
}

ConstantOp ConstantOp::fromBytes(OpBuilder &builder, Location loc, RankedTensorType type,
                                 ArrayRef<char> bytes, StringRef blobName) {
  ElementsAttr value;
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    value = DenseElementsAttr::get(type, bits);
  } else if (bytes.size() <= 64) {
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  } else {
    auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes);
    value = DenseResourceElementsAttr::get(type, blobName, std::move(blob));
  }
  return builder.create<ConstantOp>(loc, type, value);
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getOutput());
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A reshaped constant is a constant: same bytes, new type.
  auto type = cast<ShapedType>(getType());
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(type);
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

LogicalResult GatherOp::verify() {
  auto in = tensorType(getInput()).getShape(), idx = tensorType(getIndices()).getShape();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOpError("axis ") << axis << " out of range";
  SmallVector<int64_t> expected(in.begin(), in.begin() + axis);
  expected.append(idx.begin(), idx.end());
  expected.append(in.begin() + axis + 1, in.end());
  return checkResultShape(*this, expected);
}

LogicalResult SliceOp::verify() {
  auto in = tensorType(getInput()).getShape(), out = tensorType(getOutput()).getShape();
  if (getStarts().size() != in.size() || getSteps().size() != in.size() ||
      out.size() != in.size())
    return emitOpError("starts, steps and result need one entry per input dim");
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t step = getSteps()[i], start = getStarts()[i];
    if (step == 0)
      return emitOpError("step must be non-zero");
    if (out[i] == 0)
      continue;
    int64_t last = start + (out[i] - 1) * step;
    if (start < 0 || start >= in[i] || last < 0 || last >= in[i])
      return emitOpError("slice leaves dim ") << i << " bounds";
  }
  return success();
}

static void fillWindow(dlc::rt::WindowParams &p, ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                       ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  size_t spatial = in.size() - 2, skip = 3 - spatial;
  p.batch = in[0];
  p.channels = in[1];
  for (size_t i = 0; i < 3; ++i) {
    bool used = i >= skip;
    size_t j = i - skip;
    p.in[i] = used ? in[j + 2] : 1;
    p.out[i] = used ? out[j + 2] : 1;
    p.kernel[i] = used ? kernel[j] : 1;
    p.stride[i] = used ? strides[j] : 1;
    p.padBegin[i] = used ? pads[j] : 0;
    p.dilation[i] = used ? dilations[j] : 1;
  }
}

dlc::rt::ConvParams convParams(ConvOp op) {
  dlc::rt::ConvParams p{};
  auto w = tensorType(op.getWeight()).getShape();
  fillWindow(p.window, tensorType(op.getInput()).getShape(),
             tensorType(op.getOutput()).getShape(), w.drop_front(2), op.getStrides(),
             op.getPads(), op.getDilations());
  p.outChannels = w[0];
  p.groups = op.getGroup();
  return p;
}

dlc::rt::WindowParams windowParams(Operation *poolOp) {
  dlc::rt::WindowParams p{};
  auto in = tensorType(poolOp->getOperand(0)).getShape();
  auto out = tensorType(poolOp->getResult(0)).getShape();
  auto attr = [&](StringRef name) {
    return cast<DenseI64ArrayAttr>(poolOp->getAttr(name)).asArrayRef();
  };
  fillWindow(p, in, out, attr("kernel_shape"), attr("strides"), attr("pads"),
             attr("dilations"));
  return p;
}

} // namespace dlc

#define GET_OP_CLASSES
#include "dialects/DlcOps.cpp.inc"
#include "dialects/DlcInterfaces.cpp.inc"
