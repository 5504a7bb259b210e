#include "compiler/import/Builders.h"

#include <cmath>

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
  Value product;
  if (b.size() == 2 && typeOf(lhs).getElementType().isF32()) {
    // A stack of matrices times one matrix is one taller product: [..., M, K] x [K, N] as
    // [(...) * M, K] x [K, N]. Exporters write Linear layers on 3-D activations this way
    // (PyTorch's attention projections as [seq, batch = 1, K] x [K, N]), and a batch of
    // single-row products runs far slower than one GEMM; as a Gemm, a constant B is packed
    // once at compile time.
    int64_t rows = dimsProduct(ArrayRef<int64_t>(a).drop_back());
    product = n.b.create<GemmOp>(n.loc(), typeOf(lhs).clone({rows, b[1]}),
                                 reshape(n, lhs, {rows, a.back()}), reshape(n, rhs, b), Value(),
                                 n.b.getBoolAttr(false), n.b.getBoolAttr(false),
                                 n.b.getF32FloatAttr(1.0f), n.b.getF32FloatAttr(1.0f));
  } else {
    product = n.b.create<MatMulOp>(n.loc(), typeOf(lhs).clone(shape), reshape(n, lhs, a),
                                   reshape(n, rhs, b));
  }
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

Value geluOf(NodeImporter &n, Value x, bool tanhApproximation) {
  Type f = typeOf(x).getElementType();
  Value inner;
  if (tanhApproximation) {
    Value cube = bin<MulOp>(n, x, bin<MulOp>(n, x, x));
    Value poly = bin<AddOp>(n, x, bin<MulOp>(n, scalar(n, 0.044715, f), cube));
    inner = un<TanhOp>(n, bin<MulOp>(n, scalar(n, std::sqrt(2.0 / M_PI), f), poly));
  } else {
    inner = un<ErfOp>(n, bin<MulOp>(n, x, scalar(n, M_SQRT1_2, f)));
  }
  Value half = bin<MulOp>(n, scalar(n, 0.5, f), x);
  return bin<MulOp>(n, half, bin<AddOp>(n, scalar(n, 1.0, f), inner));
}

Standardized standardizeWithStatistics(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                                       double epsilon) {
  Type f = typeOf(x).getElementType();
  Value mean = red<ReduceMeanOp>(n, x, axes, true);
  Value centered = bin<SubOp>(n, x, mean);
  Value variance = red<ReduceMeanOp>(n, bin<MulOp>(n, centered, centered), axes, true);
  Value invStdDev =
      un<ReciprocalOp>(n, un<SqrtOp>(n, bin<AddOp>(n, variance, scalar(n, epsilon, f))));
  return {bin<MulOp>(n, centered, invStdDev), mean, invStdDev};
}

std::pair<Value, Value> rootMeanSquareNormalize(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                                                double epsilon) {
  Type f = typeOf(x).getElementType();
  Value meanSquare = red<ReduceMeanOp>(n, bin<MulOp>(n, x, x), axes, true);
  Value rms = un<SqrtOp>(n, bin<AddOp>(n, meanSquare, scalar(n, epsilon, f)));
  return {bin<DivOp>(n, x, rms), un<ReciprocalOp>(n, rms)};
}

Value splitHeads(NodeImporter &n, Value x, int64_t heads, const char *name) {
  auto s = typeOf(x).getShape();
  if (s.size() != 3 || heads <= 0 || s[2] % heads)
    throw ImportError(std::string(name) + "'s hidden size " + std::to_string(s.back()) +
                      " does not split into " + std::to_string(heads) + " heads");
  return transposeValue(n, reshape(n, x, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

Value gemmOf(NodeImporter &n) {
  Value c = n.hasInput(2) ? n.input(2) : Value();
  auto a = n.inputType(0).getShape(), b = n.inputType(1).getShape();
  if (a.size() != 2 || b.size() != 2)
    throw ImportError("A and B must be matrices (ranks " + std::to_string(a.size()) + " and " +
                      std::to_string(b.size()) + ")");
  bool transA = n.intAttr("transA", 0) != 0, transB = n.intAttr("transB", 0) != 0;
  auto type = n.inputType(0).clone({a[transA ? 1 : 0], b[transB ? 0 : 1]});
  return n.b.create<GemmOp>(n.loc(), type, n.input(0), n.input(1), c, n.b.getBoolAttr(transA),
                            n.b.getBoolAttr(transB),
                            n.b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
                            n.b.getF32FloatAttr(n.floatAttr("beta", 1.0f)));
}

Value rotaryEmbeddingOf(NodeImporter &n, Value x, Value cos, Value sin, int64_t heads,
                        int64_t rotated, bool interleaved) {
  auto original = typeOf(x).getShape();
  if (original.size() == 4) // [B, heads, S, D] -> [B, S, heads, D]
    x = transposeValue(n, x, {0, 2, 1, 3});
  else if (original.size() == 3 && heads > 0 && original[2] % heads == 0)
    x = reshape(n, x, {original[0], original[1], heads, original[2] / heads});
  else
    throw ImportError("input must be [B, S, heads * size] or [B, heads, S, size]");
  auto shape = typeOf(x).getShape(); // [B, S, heads, D]
  int64_t head = shape[3];
  if (rotated < 2 || rotated > head || rotated % 2)
    throw ImportError("rotary_embedding_dim must be even and at most the head size");
  auto angles = [&](Value cache) {
    auto cs = typeOf(cache).getShape();
    if (cs.size() != 3 || cs[0] != shape[0] || cs[1] != shape[1] || cs[2] != rotated / 2)
      throw ImportError("cos/sin caches must give [batch, sequence, " +
                        std::to_string(rotated / 2) + "], got " + dimsString(cs));
    return insertUnitDim(n, cache, 2); // [B, S, 1, rotated / 2]
  };
  cos = angles(cos);
  sin = angles(sin);
  Value part = sliceAxis(n, x, 3, 0, 1, rotated);
  Value x1 = interleaved ? sliceAxis(n, part, 3, 0, 2, rotated / 2)
                         : sliceAxis(n, part, 3, 0, 1, rotated / 2);
  Value x2 = interleaved ? sliceAxis(n, part, 3, 1, 2, rotated / 2)
                         : sliceAxis(n, part, 3, rotated / 2, 1, rotated / 2);
  Value real = bin<SubOp>(n, bin<MulOp>(n, cos, x1), bin<MulOp>(n, sin, x2));
  Value imag = bin<AddOp>(n, bin<MulOp>(n, sin, x1), bin<MulOp>(n, cos, x2));
  Value turned;
  if (interleaved) {
    SmallVector<int64_t> pairs(shape);
    pairs[3] = rotated / 2;
    pairs.push_back(1);
    turned = reshape(n, concatAxis(n, {reshape(n, real, pairs), reshape(n, imag, pairs)}, 4),
                     typeOf(part).getShape());
  } else {
    turned = concatAxis(n, {real, imag}, 3);
  }
  if (rotated < head)
    turned = concatAxis(n, {turned, sliceAxis(n, x, 3, rotated, 1, head - rotated)}, 3);
  return original.size() == 4 ? transposeValue(n, turned, {0, 2, 1, 3})
                              : reshape(n, turned, original);
}

Value activationOf(NodeImporter &n, const NamedActivation &a, Value x) {
  Type f = typeOf(x).getElementType();
  std::string k = llvm::StringRef(a.name).lower();
  if (k == "sigmoid")
    return un<SigmoidOp>(n, x);
  if (k == "tanh")
    return un<TanhOp>(n, x);
  if (k == "relu")
    return un<ReluOp>(n, x);
  if (k == "softsign")
    return un<SoftsignOp>(n, x);
  if (k == "softplus")
    return un<SoftplusOp>(n, x);
  if (k == "leakyrelu")
    return n.b.create<LeakyReluOp>(n.loc(), typeOf(x), x, n.b.getF32FloatAttr(a.alpha));
  if (k == "affine")
    return bin<AddOp>(n, bin<MulOp>(n, x, scalar(n, a.alpha, f)), scalar(n, a.beta, f));
  if (k == "scaledtanh")
    return bin<MulOp>(n, un<TanhOp>(n, bin<MulOp>(n, x, scalar(n, a.beta, f))),
                      scalar(n, a.alpha, f));
  if (k == "hardsigmoid")
    return hardSigmoidOf(n, x, a.alpha, a.beta);
  if (k == "thresholdedrelu")
    return thresholdedReluOf(n, x, a.alpha);
  if (k == "elu")
    return eluLike(n, x, a.alpha, 1.0);
  throw ImportError("unknown activation '" + a.name + "'");
}

Value int64Constant(NodeImporter &n, ArrayRef<int64_t> shape, const std::vector<int64_t> &values,
                    const char *name) {
  std::vector<char> bytes(values.size() * 8);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get(shape, n.b.getI64Type()), bytes,
                               name);
}

Value thresholdedReluOf(NodeImporter &n, Value x, double alpha) {
  Type f = typeOf(x).getElementType();
  Value above = comparison<GreaterOp>(n, x, scalar(n, alpha, f));
  return n.b.create<WhereOp>(n.loc(), typeOf(x), above, x, scalar(n, 0.0, f));
}

} // namespace dlc
