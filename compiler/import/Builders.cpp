#include "compiler/import/Builders.h"

using namespace mlir;

namespace dlc {

int64_t dimsProduct(ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    auto next = checkedMul(product, d);
    if (!next)
      throw ImportError("dims " + dimsString(dims) + " multiply beyond int64");
    product = *next;
  }
  return product;
}

std::pair<int64_t, int64_t> flattenedAt(ArrayRef<int64_t> shape, int64_t axis) {
  return {dimsProduct(shape.take_front(axis)), dimsProduct(shape.drop_front(axis))};
}

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

namespace {
[[noreturn]] void refuseElementType(Type element, const char *supported) {
  std::string text;
  llvm::raw_string_ostream(text) << element;
  throw ImportError("element type " + text + " is not supported (" + supported + ")");
}
} // namespace

void requireFloat32(NodeImporter &n, int input) {
  if (!n.inputType(input).getElementType().isF32())
    refuseElementType(n.inputType(input).getElementType(), "float32 only");
}

void requireFloat(NodeImporter &n, int input) {
  Type element = n.inputType(input).getElementType();
  if (!element.isF32() && !element.isF64())
    refuseElementType(element, "float32 or float64 only");
}

Value reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  auto type = typeOf(v).clone(shape);
  if (type == v.getType())
    return v;
  return n.b.create<ReshapeOp>(n.loc(), type, v);
}

SmallVector<int64_t> broadcastOperands(Value a, Value b) {
  auto shape = broadcastShapes(typeOf(a).getShape(), typeOf(b).getShape());
  if (failed(shape))
    throw ImportError("operand shapes " + dimsString(typeOf(a).getShape()) + " and " +
                      dimsString(typeOf(b).getShape()) + " do not broadcast");
  if (typeOf(a).getElementType() != typeOf(b).getElementType())
    throw ImportError("operand element types differ");
  return *shape;
}

Value intScalar(NodeImporter &n, int64_t v, Type element) {
  auto type = RankedTensorType::get({}, element);
  APInt bits = APInt(64, static_cast<uint64_t>(v)).trunc(element.getIntOrFloatBitWidth());
  return n.b.create<ConstantOp>(n.loc(), type,
                                DenseElementsAttr::get(type, IntegerAttr::get(element, bits)));
}

Value scalar(NodeImporter &n, double v, Type element) {
  auto type = RankedTensorType::get({}, element);
  if (isa<FloatType>(element))
    return n.b.create<ConstantOp>(n.loc(), type,
                                  DenseElementsAttr::get(type, FloatAttr::get(element, v)));
  if (!(v >= -9.2e18 && v <= 9.2e18) || v != std::trunc(v))
    throw ImportError("value " + std::to_string(v) + " does not fit the integer element type");
  return intScalar(n, static_cast<int64_t>(v), element);
}

std::vector<int64_t> trailingAxes(int64_t from, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = from; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

Value castTo(NodeImporter &n, Value x, Type element, bool saturate, StringRef roundMode) {
  if (typeOf(x).getElementType() == element)
    return x;
  return n.b.create<CastOp>(n.loc(), typeOf(x).clone(element), x, saturate, roundMode);
}

Value allOnes(NodeImporter &n, Type element) {
  auto type = RankedTensorType::get({}, element);
  APInt ones = APInt::getAllOnes(element.getIntOrFloatBitWidth());
  return n.b.create<ConstantOp>(n.loc(), type,
                                DenseElementsAttr::get(type, IntegerAttr::get(element, ones)));
}

void requireInteger(NodeImporter &n, bool allowBool) {
  Type element = n.inputType(0).getElementType();
  if (!element.isInteger() || (!allowBool && element.isInteger(1)))
    throw ImportError("needs integer" + std::string(allowBool ? " or bool" : "") + " inputs");
}

Value gatherElements(NodeImporter &n, Value data, Value indices, int64_t axis) {
  auto type = typeOf(indices).clone(typeOf(data).getElementType());
  return n.b.create<GatherElementsOp>(n.loc(), type, data, indices, axis);
}

Value sliceAxis(NodeImporter &n, Value v, int64_t axis, int64_t start, int64_t step,
                int64_t count) {
  auto type = typeOf(v);
  SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1), shape(type.getShape());
  starts[axis] = count ? start : 0;
  steps[axis] = step;
  shape[axis] = count;
  return n.b.create<SliceOp>(n.loc(), type.clone(shape), v, starts, steps);
}

Value concatAxis(NodeImporter &n, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts[0];
  SmallVector<int64_t> shape(typeOf(parts[0]).getShape());
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += typeOf(p).getDimSize(axis);
  return n.b.create<ConcatOp>(n.loc(), typeOf(parts[0]).clone(shape), parts, axis);
}

Value broadcastTo(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  auto type = typeOf(v).clone(shape);
  if (type == v.getType())
    return v;
  return n.b.create<BroadcastOp>(n.loc(), type, v);
}

Value scalarOf(NodeImporter &n, const ConstTensor &c, Type element) {
  if (c.numElements() != 1)
    throw ImportError("the value must be a single element");
  return scalar(n, c.asDoubles()[0], element);
}

Value transposeValue(NodeImporter &n, Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(typeOf(v).getDimSize(p));
  return n.b.create<TransposeOp>(n.loc(), typeOf(v).clone(shape), v, perm);
}

Value classIndices(NodeImporter &n, int64_t depth, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = depth;
  if (depth > kMaxBuiltConstantElements)
    throw ImportError("depth " + std::to_string(depth) + " is too large");
  auto type = RankedTensorType::get(shape, n.b.getI64Type());
  std::vector<char> bytes(depth * 8);
  for (int64_t i = 0; i < depth; ++i)
    std::memcpy(&bytes[i * 8], &i, 8);
  return ConstantOp::fromBytes(n.b, n.loc(), type, bytes, "classes");
}

Value matmulOf(NodeImporter &n, Value lhs, Value rhs) {
  // 1-D operands are promoted to matrices and the extra dim dropped afterwards.
  SmallVector<int64_t> a(typeOf(lhs).getShape()), b(typeOf(rhs).getShape());
  if (a.empty() || b.empty())
    throw ImportError("MatMul operands must have rank >= 1");
  bool vectorA = a.size() == 1, vectorB = b.size() == 1;
  if (a.back() != b[b.size() == 1 ? 0 : b.size() - 2])
    throw ImportError("inner dims differ: " + dimsString(a) + " x " + dimsString(b));
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  auto batch =
      broadcastShapes(ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2));
  if (failed(batch))
    throw ImportError("batch dims do not broadcast");
  SmallVector<int64_t> shape(*batch);
  shape.append({a[a.size() - 2], b.back()});
  Value product = n.b.create<MatMulOp>(n.loc(), typeOf(lhs).clone(shape), reshape(n, lhs, a),
                                       reshape(n, rhs, b));
  if (vectorB)
    shape.pop_back();
  if (vectorA)
    shape.erase(shape.end() - (vectorB ? 1 : 2));
  return reshape(n, product, shape);
}

Value insertUnitDim(NodeImporter &n, Value v, int64_t axis) {
  SmallVector<int64_t> shape(typeOf(v).getShape());
  shape.insert(shape.begin() + axis, 1);
  return reshape(n, v, shape);
}

// ---- Compositions shared by several imports (activations of ops and of recurrent cells).

// relu(x) + alpha * (exp(min(x, 0) / scale) - 1): Elu at scale 1, Celu at scale alpha.
Value eluLike(NodeImporter &n, Value x, double alpha, double scale) {
  Type f = typeOf(x).getElementType();
  Value negativePart = un<NegOp>(n, un<ReluOp>(n, un<NegOp>(n, x))); // min(x, 0)
  if (scale != 1.0)
    negativePart = bin<DivOp>(n, negativePart, scalar(n, scale, f));
  Value expm1 = bin<SubOp>(n, un<ExpOp>(n, negativePart), scalar(n, 1.0, f));
  return bin<AddOp>(n, un<ReluOp>(n, x), bin<MulOp>(n, scalar(n, alpha, f), expm1));
}

Value hardSigmoidOf(NodeImporter &n, Value x, double alpha, double beta) {
  Type f = typeOf(x).getElementType();
  Value linear = bin<AddOp>(n, bin<MulOp>(n, scalar(n, alpha, f), x), scalar(n, beta, f));
  return n.b.create<ClipOp>(n.loc(), typeOf(linear), linear, n.b.getF32FloatAttr(0.0f),
                            n.b.getF32FloatAttr(1.0f));
}

Value thresholdedReluOf(NodeImporter &n, Value x, double alpha) {
  Type f = typeOf(x).getElementType();
  Value above = comparison<GreaterOp>(n, x, scalar(n, alpha, f));
  return n.b.create<WhereOp>(n.loc(), typeOf(x), above, x, scalar(n, 0.0, f));
}

} // namespace dlc
