// How ONNX linear quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear)
// becomes dlc ops: float32 arithmetic with round-half-to-even and saturating casts (float8
// results: the cast's own rounding and saturation).
#include "compiler/import/Builders.h"

#include <cstring>

using namespace mlir;

namespace dlc {
namespace {

// The [lowest, highest] integers of a quantized element type.
std::pair<double, double> quantizedRange(Type t) {
  if (!t.isInteger() || t.isInteger(1) || t.getIntOrFloatBitWidth() > 16)
    throw ImportError("quantized type must be a float8 type or a 2-, 4-, 8- or 16-bit integer");
  unsigned bits = t.getIntOrFloatBitWidth();
  if (t.isUnsignedInteger())
    return {0.0, double((1u << bits) - 1)};
  return {-double(1u << (bits - 1)), double((1u << (bits - 1)) - 1)};
}

// A scale or zero point made broadcastable to x (float32): a scalar stays, a per-axis vector
// lies along `axis`, a blocked one repeats each entry block_size times along it.
Value quantParameter(NodeImporter &n, Value p, ArrayRef<int64_t> x, int64_t axis,
                     int64_t blockSize) {
  p = castTo(n, p, n.b.getF32Type());
  auto shape = typeOf(p).getShape();
  if (typeOf(p).getNumElements() == 1)
    return reshape(n, p, {});
  axis = normalizeAxis(axis, x.size());
  if (!blockSize) {
    if (shape.size() != 1 || shape[0] != x[axis])
      throw ImportError("a per-axis scale or zero point needs " + std::to_string(x[axis]) +
                        " values along axis " + std::to_string(axis) + ", got " +
                        dimsString(shape));
    SmallVector<int64_t> along(x.size(), 1);
    along[axis] = x[axis];
    return reshape(n, p, along);
  }
  if (blockSize < 0 || (int64_t)shape.size() != (int64_t)x.size())
    throw ImportError("blocked quantization needs a positive block_size and a parameter of the "
                      "input's rank");
  for (size_t d = 0; d < x.size(); ++d) {
    int64_t want = (int64_t)d == axis ? (x[d] + blockSize - 1) / blockSize : x[d];
    if (shape[d] != want)
      throw ImportError("the blocked parameter " + dimsString(shape) + " does not fit " +
                        dimsString(x) + " in blocks of " + std::to_string(blockSize));
  }
  if (x[axis] > kMaxBuiltConstantElements)
    throw ImportError("axis " + std::to_string(axis) + " is too long for blocked parameters");
  std::vector<int64_t> blockOf(x[axis]);
  for (int64_t i = 0; i < x[axis]; ++i)
    blockOf[i] = i / blockSize;
  std::vector<char> bytes(blockOf.size() * 8);
  std::memcpy(bytes.data(), blockOf.data(), bytes.size());
  Value table = ConstantOp::fromBytes(
      n.b, n.loc(), RankedTensorType::get({x[axis]}, n.b.getI64Type()), bytes, "quant_blocks");
  SmallVector<int64_t> repeated(shape);
  repeated[axis] = x[axis];
  return n.b.create<GatherOp>(n.loc(), typeOf(p).clone(repeated), p, table, axis);
}

// saturate(round_half_even(x / scale) + zero_point) as `element`; for float8, x / scale +
// zero_point cast with ONNX's `saturate`.
Value quantize(NodeImporter &n, Value x, Value scale, Value zeroPoint, Type element,
               bool saturate = true) {
  if (isa<FloatType, Float4E2M1Type>(element)) {
    Value q = bin<DivOp>(n, x, scale);
    if (zeroPoint)
      q = bin<AddOp>(n, q, zeroPoint);
    return castTo(n, q, element, saturate);
  }
  auto [lowest, highest] = quantizedRange(element);
  Value q = un<RoundOp>(n, bin<DivOp>(n, x, scale));
  if (zeroPoint)
    q = bin<AddOp>(n, q, zeroPoint);
  q = n.b.create<ClipOp>(n.loc(), typeOf(q), q, n.b.getF32FloatAttr(lowest),
                         n.b.getF32FloatAttr(highest));
  return castTo(n, q, element);
}

struct QuantAxes {
  int64_t axis, blockSize;
};

QuantAxes quantAxes(NodeImporter &n) {
  // The axis matters (and is checked) only for per-axis and blocked parameters.
  return {n.version >= 13 ? n.intAttr("axis", 1) : 1,
          n.version >= 21 ? n.intAttr("block_size", 0) : 0};
}

OpImport quantizeLinear() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto x = n.inputType(0).getShape();
            QuantAxes q = quantAxes(n);
            Type element = n.hasInput(2) ? n.inputType(2).getElementType() : Type();
            if (n.version >= 21 && n.intAttr("output_dtype", 0)) {
              Type declared = elementTypeFor(*n.b.getContext(), n.intAttr("output_dtype", 0));
              if (!declared || (element && element != declared))
                throw ImportError("output_dtype is unsupported or differs from the zero point's");
              element = declared;
            }
            if (!element)
              element = IntegerType::get(n.b.getContext(), 8, IntegerType::Unsigned);
            Value scale = quantParameter(n, n.input(1), x, q.axis, q.blockSize);
            Value zeroPoint =
                n.hasInput(2) ? quantParameter(n, n.input(2), x, q.axis, q.blockSize) : Value();
            return quantize(n, n.input(0), scale, zeroPoint, element,
                            n.version < 19 || n.intAttr("saturate", 1) != 0);
          }};
}

// (x - zero_point) * scale, in the scale's type.
OpImport dequantizeLinear() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0).getShape();
            Type stored = n.inputType(0).getElementType();
            if (stored.isInteger(1) || stored.isF32())
              throw ImportError("needs a quantized (integer or float8) input");
            QuantAxes q = quantAxes(n);
            requireFloat32(n, 1);
            Value y = castTo(n, n.input(0), n.b.getF32Type());
            if (n.hasInput(2))
              y = bin<SubOp>(n, y, quantParameter(n, n.input(2), x, q.axis, q.blockSize));
            return bin<MulOp>(n, y, quantParameter(n, n.input(1), x, q.axis, q.blockSize));
          }};
}

// uint8 quantization of x with the scale and zero point that map [min(x, 0), max(x, 0)] onto
// [0, 255].
OpImport dynamicQuantizeLinear() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            Value x = n.input(0);
            Type f = n.b.getF32Type(),
                 u8 = IntegerType::get(n.b.getContext(), 8, IntegerType::Unsigned);
            auto all = trailingAxes(0, typeOf(x).getRank());
            Value zero = scalar(n, 0.0, f);
            Value high = bin<MaxOp>(n, reduceOrKeep<ReduceMaxOp>(n, x, all, false), zero);
            Value low = bin<MinOp>(n, reduceOrKeep<ReduceMinOp>(n, x, all, false), zero);
            Value range = bin<SubOp>(n, high, low);
            // A zero range (x all 0) uses scale 1/255, as the reference does.
            Value empty = comparison<EqualOp>(n, range, zero);
            range = n.b.create<WhereOp>(n.loc(), typeOf(range), empty, scalar(n, 1.0, f), range);
            Value scale = bin<DivOp>(n, range, scalar(n, 255.0, f));
            Value initial = bin<SubOp>(n, zero, bin<DivOp>(n, low, scale));
            Value zeroPoint = un<RoundOp>(n, n.b.create<ClipOp>(n.loc(), typeOf(initial), initial,
                                                                n.b.getF32FloatAttr(0.0f),
                                                                n.b.getF32FloatAttr(255.0f)));
            return {quantize(n, x, scale, zeroPoint, u8), scale, castTo(n, zeroPoint, u8)};
          }};
}

// ---- Integer matrix products and convolutions.

// Input `x` minus its zero point (input `zp`, optional) in `element`. A zero point with one
// entry per row of a [..., M, K] left operand, or per output channel of a convolution weight,
// is laid along that axis; otherwise it broadcasts as ONNX broadcasts.
Value centered(NodeImporter &n, int x, int zp, Type element, int64_t perAxis) {
  Type stored = n.inputType(x).getElementType();
  if (!stored.isInteger(8))
    throw ImportError("input #" + std::to_string(x) + " must be int8 or uint8");
  Value v = castTo(n, n.input(x), element);
  if (!n.hasInput(zp))
    return v;
  Value z = castTo(n, n.input(zp), element);
  auto zs = typeOf(z).getShape(), xs = typeOf(v).getShape();
  int64_t rank = xs.size();
  if (zs.size() == 1 && zs[0] != 1 && perAxis >= 0 && perAxis < rank && zs[0] == xs[perAxis]) {
    SmallVector<int64_t> along(rank - perAxis, 1);
    along[0] = zs[0];
    z = reshape(n, z, along);
  }
  return bin<SubOp>(n, v, z);
}

// MatMulInteger: (A - a_zero_point) x (B - b_zero_point), exactly, in int32.
OpImport matMulInteger() {
  return {{}, [](NodeImporter &n) -> Value {
            Type i32 = n.b.getI32Type();
            int64_t rows = n.inputType(0).getRank() - 2;
            return matmulOf(n, centered(n, 0, 2, i32, rows), centered(n, 1, 3, i32, -1));
          }};
}

// The float32 scale of a matrix operand: a per-row one lies along the rows.
Value matrixScale(NodeImporter &n, int input, int64_t rows) {
  Value s = castTo(n, n.input(input), n.b.getF32Type());
  auto shape = typeOf(s).getShape();
  if (shape.size() == 1 && shape[0] != 1 && rows >= 0)
    s = reshape(n, s, {shape[0], 1});
  return s;
}

// The quantized result of an exact integer accumulation: round(acc * multiplier) + zero
// point, saturated to `element` (the reference's rint and clip).
Value requantize(NodeImporter &n, Value acc, Value multiplier, int zeroPoint, Type element) {
  auto [lowest, highest] = quantizedRange(element);
  Value q = un<RoundOp>(n, bin<MulOp>(n, castTo(n, acc, n.b.getF32Type()), multiplier));
  if (n.hasInput(zeroPoint))
    q = bin<AddOp>(n, q, castTo(n, n.input(zeroPoint), n.b.getF32Type()));
  q = n.b.create<ClipOp>(n.loc(), typeOf(q), q, n.b.getF32FloatAttr(lowest),
                         n.b.getF32FloatAttr(highest));
  return castTo(n, q, element);
}

// QLinearMatMul: the exact int32 product of the centered operands, requantized by
// a_scale * b_scale / y_scale.
OpImport qLinearMatMul() {
  return {{}, [](NodeImporter &n) -> Value {
            Type i32 = n.b.getI32Type();
            int64_t rows = n.inputType(0).getRank() - 2;
            Value product = matmulOf(n, centered(n, 0, 2, i32, rows), centered(n, 3, 5, i32, -1));
            Value multiplier = bin<DivOp>(
                n, bin<MulOp>(n, matrixScale(n, 1, rows), matrixScale(n, 4, -1)),
                matrixScale(n, 6, rows));
            Type element = n.hasInput(7) ? n.inputType(7).getElementType()
                                         : n.inputType(0).getElementType();
            return requantize(n, product, multiplier, 7, element);
          }};
}

// Convolutions of 8-bit integers run in float32, which holds every integer below 2^24
// exactly: refused when a sum of (C / group) * kernel products of at most 255^2 could pass it.
void requireExactIntegerConv(NodeImporter &n, int weight) {
  auto w = n.inputType(weight).getShape();
  if (w.size() < 3)
    throw ImportError("the weight must have rank 3 or more, got " + dimsString(w));
  int64_t terms = dimsProduct(w.drop_front(1));
  if (terms > ((int64_t(1) << 24) - 1) / (255 * 255))
    throw ImportError("each output sums " + std::to_string(terms) +
                      " products of 8-bit values, more than dlc accumulates exactly "
                      "(at most 258)");
}

// ConvInteger: Conv of the centered input and weight (a zero point per output channel lies
// along the weight's first axis), exact in int32.
OpImport convInteger() {
  return {{}, [](NodeImporter &n) -> Value {
            requireExactIntegerConv(n, 1);
            Type f = n.b.getF32Type();
            Value y = convOf(n, centered(n, 0, 2, f, -1), centered(n, 1, 3, f, 0), Value());
            return castTo(n, y, n.b.getI32Type());
          }};
}

// QLinearConv: the exact integer convolution (plus the int32 bias), requantized by
// x_scale * w_scale / y_scale (w_scale per output channel or per tensor).
OpImport qLinearConv() {
  return {{}, [](NodeImporter &n) -> Value {
            requireExactIntegerConv(n, 3);
            Type f = n.b.getF32Type();
            Value bias = n.hasInput(8) ? castTo(n, n.input(8), f) : Value();
            Value acc = convOf(n, centered(n, 0, 2, f, -1), centered(n, 3, 5, f, 0), bias);
            Value wScale = castTo(n, n.input(4), f);
            auto ws = typeOf(wScale).getShape();
            if (ws.size() == 1 && ws[0] != 1) { // per output channel: axis 1 of [N, M, ...]
              SmallVector<int64_t> along(typeOf(acc).getRank(), 1);
              along[1] = ws[0];
              wScale = reshape(n, wScale, along);
            }
            Value multiplier = bin<DivOp>(n, bin<MulOp>(n, castTo(n, n.input(1), f), wScale),
                                          castTo(n, n.input(6), f));
            return requantize(n, acc, multiplier, 7, n.inputType(7).getElementType());
          }};
}

} // namespace

void addQuantizationImports(ImportTable &table) {
  table.insert({{"QuantizeLinear", quantizeLinear()},
                {"DequantizeLinear", dequantizeLinear()},
                {"DynamicQuantizeLinear", dynamicQuantizeLinear()},
                {"MatMulInteger", matMulInteger()},
                {"QLinearMatMul", qLinearMatMul()},
                {"ConvInteger", convInteger()},
                {"QLinearConv", qLinearConv()}});
}

} // namespace dlc
