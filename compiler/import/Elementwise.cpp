// How the elementwise ONNX ops (arithmetic, activations, comparisons, logic, casts) become
// dlc ops.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace mlir;

namespace dlc {
namespace {

template <typename Op> OpImport unary() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat(n);
            return n.b.create<Op>(n.loc(), n.inputType(0), n.input(0));
          }};
}

// Neg and Abs of integers are Sub and Max, whose kernels take every integer type and wrap
// as numpy does (-MIN is MIN); an unsigned value is its own Abs.
OpImport negate(bool absolute) {
  return {{}, [absolute](NodeImporter &n) -> Value {
            Value x = n.input(0);
            Type element = n.inputType(0).getElementType();
            if (!element.isInteger() || element.isInteger(1)) {
              requireFloat(n);
              return absolute ? un<AbsOp>(n, x) : un<NegOp>(n, x);
            }
            if (absolute && element.isUnsignedInteger())
              return x;
            Value negated = bin<SubOp>(n, intScalar(n, 0, element), x);
            return absolute ? bin<MaxOp>(n, x, negated) : negated;
          }};
}

// Before opset 7, B of a binary op broadcast only with broadcast=1, its dims matched against
// A's from `axis` on (numpy's trailing alignment when axis is absent).
Value legacyBroadcastOperand(NodeImporter &n, Value b) {
  if (n.version >= 7 || !n.intAttr("broadcast", 0) || !n.attr("axis"))
    return b;
  auto a = n.inputType(0).getShape(), bShape = n.inputType(1).getShape();
  int64_t axis = normalizeAxis(n.intAttr("axis", 0), a.size());
  if (axis + bShape.size() > a.size())
    throw ImportError("B " + dimsString(bShape) + " does not fit A " + dimsString(a) +
                      " from axis " + std::to_string(axis));
  SmallVector<int64_t> aligned(bShape);
  aligned.append(a.size() - axis - bShape.size(), 1);
  return reshape(n, b, aligned);
}

// ONNX's variadic Max/Min and binary arithmetic all fold left to right.
template <typename Op> OpImport binary() {
  return {{}, [](NodeImporter &n) -> Value {
            if (n.node.input_size() == 2 && n.version < 7)
              return bin<Op>(n, n.input(0), legacyBroadcastOperand(n, n.input(1)));
            Value acc = n.input(0);
            for (int i = 1; i < n.node.input_size(); ++i)
              acc = bin<Op>(n, acc, n.input(i));
            return acc;
          }};
}

// ONNX Pow may raise to an exponent of another type; dlc's binary ops want one type.
OpImport pow() {
  return {{}, [](NodeImporter &n) -> Value {
            Value exponent = legacyBroadcastOperand(n, n.input(1));
            auto expType = typeOf(exponent);
            Type base = n.inputType(0).getElementType();
            if (expType.getElementType() != base)
              exponent = n.b.create<CastOp>(n.loc(), expType.clone(base), exponent);
            return bin<PowOp>(n, n.input(0), exponent);
          }};
}

OpImport clip() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            auto type = n.inputType(0);
            float lo = -std::numeric_limits<float>::infinity(), hi = -lo;
            if (n.version < 11)
              return n.b.create<ClipOp>(n.loc(), type, x,
                                        n.b.getF32FloatAttr(n.floatAttr("min", lo)),
                                        n.b.getF32FloatAttr(n.floatAttr("max", hi)));
            const ConstTensor *min = n.hasInput(1) ? n.constantOrNull(1) : nullptr;
            const ConstTensor *max = n.hasInput(2) ? n.constantOrNull(2) : nullptr;
            for (const ConstTensor *bound : {min, max})
              if (bound && bound->numElements() != 1)
                throw ImportError("min and max must be scalars");
            bool boundsKnown = (!n.hasInput(1) || min) && (!n.hasInput(2) || max);
            if (boundsKnown && type.getElementType().isF32())
              return n.b.create<ClipOp>(n.loc(), type, x,
                                        n.b.getF32FloatAttr(min ? min->asDoubles().at(0) : lo),
                                        n.b.getF32FloatAttr(max ? max->asDoubles().at(0) : hi));
            // Bounds known only at run time (or non-float data): clip = min(max(x, lo), hi).
            if (n.hasInput(1))
              x = n.b.create<MaxOp>(n.loc(), type, x, n.input(1));
            if (n.hasInput(2))
              x = n.b.create<MinOp>(n.loc(), type, x, n.input(2));
            return x;
          }};
}

// Identity at inference. Exported in training mode (training_mode a constant true, opset 12
// and later) it becomes dlc.dropout, which a training build's step applies with a mask.
// Y, and (from opset 10, when nothing is dropped) the mask: every element kept.
OpImport dropout() {
  return {{1, 2}, [](NodeImporter &n) -> OpImport::Results {
            // Outside training mode, or at ratio 0, dropout changes nothing.
            auto unchanged = [&]() -> OpImport::Results {
              if (n.version < 10 || n.node.output_size() < 2)
                return {n.input(0)};
              Value kept = intScalar(n, 1, n.b.getI1Type());
              return {n.input(0), broadcastTo(n, kept, n.inputType(0).getShape())};
            };
            // The ratio: an attribute before opset 12, then an optional input (0.5 when absent);
            // outside training mode it does not matter (it may even be a run-time input).
            std::optional<double> ratio = 0.5;
            if (n.version < 12)
              ratio = n.floatAttr("ratio", 0.5f);
            else if (n.hasInput(1))
              ratio = n.constantOrNull(1) && n.constInput(1).asDoubles().size() == 1
                          ? std::optional<double>(n.constInput(1).asDoubles()[0])
                          : std::nullopt;
            if (n.version >= 12 && n.hasInput(2) && !n.constantOrNull(2)) {
              if (ratio == 0.0)
                return unchanged();
              throw ImportError("training_mode must be a constant (or the ratio a constant 0)");
            }
            bool training = n.version >= 12 && n.hasInput(2) && !n.constInput(2).asInts().empty() &&
                            n.constInput(2).asInts()[0];
            if (!training)
              return unchanged();
            if (!ratio)
              throw ImportError("ratio must be a constant scalar");
            if (!(*ratio >= 0.0 && *ratio < 1.0))
              throw ImportError("ratio must be in [0, 1), got " + std::to_string(*ratio));
            if (*ratio == 0.0)
              return unchanged();
            return {n.b.create<DropoutOp>(n.loc(), n.inputType(0), n.input(0),
                                          n.b.getF32FloatAttr(float(*ratio)))};
          }};
}

// ---- Compositions: ops whose meaning is written with existing dlc ops, which brings their
// kernels, memory planning and gradients along (a fusion pass may merge them later).

OpImport elu() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    return eluLike(n, x, n.floatAttr("alpha", 1.0f), 1.0);
  });
}

OpImport celu() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    double alpha = n.floatAttr("alpha", 1.0f);
    if (alpha == 0.0)
      throw ImportError("alpha must be non-zero");
    return eluLike(n, x, alpha, alpha);
  });
}

OpImport selu() {
  return floatComposition([](NodeImporter &n, Value x, Type f) {
    Value elu = eluLike(n, x, n.floatAttr("alpha", 1.67326319217681884765625f), 1.0);
    return bin<MulOp>(n, scalar(n, n.floatAttr("gamma", 1.05070102214813232421875f), f), elu);
  });
}

OpImport hardSigmoid() {
  return floatComposition([](NodeImporter &n, Value x, Type) -> Value {
    return hardSigmoidOf(n, x, n.floatAttr("alpha", 0.2f), n.floatAttr("beta", 0.5f));
  });
}

// x * sigmoid(alpha x)
Value swishOf(NodeImporter &n, Value x, Type f) {
  double alpha = n.floatAttr("alpha", 1.0f);
  Value scaled = alpha == 1.0 ? x : bin<MulOp>(n, x, scalar(n, alpha, f));
  return bin<MulOp>(n, x, un<SigmoidOp>(n, scaled));
}

OpImport swish() { return floatComposition(swishOf); }

// SwiGLU: Swish(A) * B, the two of one shape.
OpImport swiGlu() {
  return floatComposition([](NodeImporter &n, Value a, Type f) {
    requireFloat32(n, 1);
    if (n.inputType(0) != n.inputType(1))
      throw ImportError("A and B must have the same shape (no broadcasting)");
    return bin<MulOp>(n, swishOf(n, a, f), n.input(1));
  });
}

// x * tanh(softplus(x))
// Gelu, with approximate="none" (erf) or "tanh" (geluOf).
OpImport gelu() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    std::string approximate = n.stringAttr("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      throw ImportError("approximate must be 'none' or 'tanh', got '" + approximate + "'");
    return geluOf(n, x, approximate == "tanh");
  });
}

// relu(x) - slope * relu(-x), the slope broadcast onto x.
OpImport prelu() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    Value slope = n.input(1);
    // Before opset 7 a slope of one value per channel lined up with dim 1.
    auto xShape = typeOf(x).getShape();
    if (n.version < 7 && typeOf(slope).getRank() == 1 && xShape.size() > 2 &&
        typeOf(slope).getDimSize(0) == xShape[1]) {
      SmallVector<int64_t> perChannel(xShape.size() - 1, 1);
      perChannel[0] = xShape[1];
      slope = reshape(n, slope, perChannel);
    }
    auto shape = broadcastShapes(typeOf(x).getShape(), typeOf(slope).getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != typeOf(x).getShape())
      throw ImportError("slope " + dimsString(typeOf(slope).getShape()) +
                        " does not broadcast to the input " + dimsString(typeOf(x).getShape()));
    Value negative = bin<MulOp>(n, slope, un<ReluOp>(n, un<NegOp>(n, x)));
    return bin<SubOp>(n, un<ReluOp>(n, x), negative);
  });
}

// Cast and CastLike; `saturate` (opset 19) decides how out-of-range values reach float8,
// `round_mode` (opset 24) how values round to float8 e8m0.
Value castNode(NodeImporter &n, Type element) {
  std::string mode = n.version >= 24 ? n.stringAttr("round_mode", "up") : "up";
  if (mode != "up" && mode != "down" && mode != "nearest")
    throw ImportError("round_mode must be up, down or nearest, got '" + mode + "'");
  return castTo(n, n.input(0), element, n.version < 19 || n.intAttr("saturate", 1) != 0, mode);
}

OpImport castOp() {
  return {{}, [](NodeImporter &n) {
            int64_t to = n.intAttr("to", 0);
            Type element = elementTypeFor(*n.b.getContext(), to);
            if (!element)
              throw ImportError("cast to " + dtypeName(to) + " is not supported");
            return castNode(n, element);
          }};
}

OpImport castLike() {
  return {{}, [](NodeImporter &n) { return castNode(n, n.inputType(1).getElementType()); }};
}

// ---- Comparisons, logic and selection.

template <typename Op> OpImport compare() {
  return {{}, [](NodeImporter &n) { return comparison<Op>(n, n.input(0), n.input(1)); }};
}

// Logical ops take bool, the bitwise ones integers: both run on the same kernels.
template <typename Op> OpImport logical(bool onBool) {
  return {{}, [onBool](NodeImporter &n) -> Value {
            if (n.inputType(0).getElementType().isInteger(1) != onBool)
              throw ImportError(onBool ? "needs bool inputs" : "needs integer inputs");
            requireInteger(n, onBool);
            return bin<Op>(n, n.input(0), n.input(1));
          }};
}

// Not and BitwiseNot: x xor all-ones.
OpImport invert(bool onBool) {
  return {{}, [onBool](NodeImporter &n) -> Value {
            Type element = n.inputType(0).getElementType();
            if (element.isInteger(1) != onBool)
              throw ImportError(onBool ? "needs a bool input" : "needs an integer input");
            requireInteger(n, onBool);
            return bin<XorOp>(n, n.input(0), allOnes(n, element));
          }};
}

OpImport bitShift() {
  return {{}, [](NodeImporter &n) -> Value {
            // Signed integers shift too from opset 28.
            Type element = n.inputType(0).getElementType();
            if (!element.isInteger() || element.isInteger(1) ||
                (n.version < 28 && !element.isUnsignedInteger()))
              throw ImportError(n.version < 28 ? "needs unsigned integer inputs"
                                               : "needs integer inputs");
            std::string direction = n.stringAttr("direction", "");
            if (direction == "LEFT")
              return bin<ShiftLeftOp>(n, n.input(0), n.input(1));
            if (direction == "RIGHT")
              return bin<ShiftRightOp>(n, n.input(0), n.input(1));
            throw ImportError("direction must be LEFT or RIGHT, got '" + direction + "'");
          }};
}

OpImport mod() {
  return {{}, [](NodeImporter &n) -> Value {
            bool fmod = n.intAttr("fmod", 0) != 0;
            return fmod ? bin<FModOp>(n, n.input(0), n.input(1))
                        : bin<ModOp>(n, n.input(0), n.input(1));
          }};
}

OpImport where() {
  return {{}, [](NodeImporter &n) -> Value {
            if (!n.inputType(0).getElementType().isInteger(1))
              throw ImportError("the condition must be bool");
            if (n.inputType(1).getElementType() != n.inputType(2).getElementType())
              throw ImportError("X and Y element types differ");
            auto shape = broadcastShapes(n.inputType(0).getShape(), n.inputType(1).getShape());
            if (succeeded(shape))
              shape = broadcastShapes(*shape, n.inputType(2).getShape());
            if (failed(shape))
              throw ImportError("condition, X and Y shapes do not broadcast");
            return n.b.create<WhereOp>(n.loc(), n.inputType(1).clone(*shape), n.input(0),
                                       n.input(1), n.input(2));
          }};
}

// x != x
OpImport isNaN() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            if (!isa<FloatType>(typeOf(x).getElementType()))
              throw ImportError("needs a floating-point input");
            Value same = comparison<EqualOp>(n, x, x);
            return bin<XorOp>(n, same, allOnes(n, n.b.getI1Type()));
          }};
}

OpImport isInf() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            Type f = typeOf(x).getElementType();
            if (!isa<FloatType>(f))
              throw ImportError("needs a floating-point input");
            bool positive = n.intAttr("detect_positive", 1),
                 negative = n.intAttr("detect_negative", 1);
            double inf = std::numeric_limits<double>::infinity();
            Value result;
            if (positive)
              result = comparison<EqualOp>(n, x, scalar(n, inf, f));
            if (negative) {
              Value isNegative = comparison<EqualOp>(n, x, scalar(n, -inf, f));
              result = result ? bin<OrOp>(n, result, isNegative) : isNegative;
            }
            if (!result) // neither: all false
              result = comparison<LessOp>(n, x, x);
            return result;
          }};
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
OpImport shrink() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            Type t = typeOf(x).getElementType();
            if (!isa<FloatType>(t))
              throw ImportError("needs a floating-point input");
            double lambd = n.floatAttr("lambd", 0.5f), bias = n.floatAttr("bias", 0.0f);
            Value below = comparison<LessOp>(n, x, scalar(n, -lambd, t));
            Value above = comparison<GreaterOp>(n, x, scalar(n, lambd, t));
            Value zero = broadcastTo(n, scalar(n, 0.0, t), typeOf(x).getShape());
            Value high = n.b.create<WhereOp>(n.loc(), typeOf(x), above,
                                             bin<SubOp>(n, x, scalar(n, bias, t)), zero);
            return n.b.create<WhereOp>(n.loc(), typeOf(x), below,
                                       bin<AddOp>(n, x, scalar(n, bias, t)), high);
          }};
}

// ThresholdedRelu: x above alpha, else 0.
OpImport thresholdedRelu() {
  return floatComposition([](NodeImporter &n, Value x, Type) -> Value {
    return thresholdedReluOf(n, x, n.floatAttr("alpha", 1.0f));
  });
}

// Sum and Mean of any number of inputs, broadcast.
OpImport variadicSum(bool mean) {
  return {{}, [mean](NodeImporter &n) -> Value {
            Value acc = n.input(0);
            for (int i = 1; i < n.node.input_size(); ++i)
              acc = bin<AddOp>(n, acc, n.input(i));
            if (!mean)
              return acc;
            requireFloat32(n);
            return bin<DivOp>(n, acc, scalar(n, n.node.input_size(), typeOf(acc).getElementType()));
          }};
}

} // namespace

void addElementwiseImports(ImportTable &table) {
  table.insert({
      {"Relu", unary<ReluOp>()},
      {"Sigmoid", unary<SigmoidOp>()},
      {"Tanh", unary<TanhOp>()},
      {"Exp", unary<ExpOp>()},
      {"Log", unary<LogOp>()},
      {"Sqrt", unary<SqrtOp>()},
      {"Neg", negate(false)},
      {"Abs", negate(true)},
      {"Erf", unary<ErfOp>()},
      {"Reciprocal", unary<ReciprocalOp>()},
      {"Sin", unary<SinOp>()},
      {"Cos", unary<CosOp>()},
      {"Tan", unary<TanOp>()},
      {"Asin", unary<AsinOp>()},
      {"Acos", unary<AcosOp>()},
      {"Atan", unary<AtanOp>()},
      {"Sinh", unary<SinhOp>()},
      {"Cosh", unary<CoshOp>()},
      {"Asinh", unary<AsinhOp>()},
      {"Acosh", unary<AcoshOp>()},
      {"Atanh", unary<AtanhOp>()},
      {"Softsign", unary<SoftsignOp>()},
      {"HardSwish", unary<HardSwishOp>()},
      {"Sign", unary<SignOp>()},
      {"Round", unary<RoundOp>()},
      {"Floor", unary<FloorOp>()},
      {"Ceil", unary<CeilOp>()},
      {"Softplus", unary<SoftplusOp>()},
      {"LeakyRelu",
       {{},
        [](NodeImporter &n) -> Value {
          return n.b.create<LeakyReluOp>(n.loc(), n.inputType(0), n.input(0),
                                         n.b.getF32FloatAttr(n.floatAttr("alpha", 0.01f)));
        }}},
      {"Clip", clip()},
      {"Elu", elu()},
      {"Celu", celu()},
      {"Selu", selu()},
      {"HardSigmoid", hardSigmoid()},
      {"Mish", unary<MishOp>()},
      {"Swish", swish()},
      {"SwiGLU", swiGlu()},
      {"Gelu", gelu()},
      {"PRelu", prelu().withLegacyVersions()},
      {"Sum", variadicSum(false)},
      {"Cast", castOp()},
      {"Equal", compare<EqualOp>()},
      {"Less", compare<LessOp>()},
      {"LessOrEqual", compare<LessEqualOp>()},
      {"Greater", compare<GreaterOp>()},
      {"GreaterOrEqual", compare<GreaterEqualOp>()},
      {"And", logical<AndOp>(true)},
      {"Or", logical<OrOp>(true)},
      {"Xor", logical<XorOp>(true)},
      {"Not", invert(true)},
      {"BitwiseAnd", logical<AndOp>(false)},
      {"BitwiseOr", logical<OrOp>(false)},
      {"BitwiseXor", logical<XorOp>(false)},
      {"BitwiseNot", invert(false)},
      {"BitShift", bitShift()},
      {"Mod", mod()},
      {"Where", where()},
      {"IsNaN", isNaN()},
      {"IsInf", isInf()},
      {"Shrink", shrink()},
      {"ThresholdedRelu", thresholdedRelu()},
      {"CastLike", castLike()},
      {"Mean", variadicSum(true)},
      {"Add", binary<AddOp>().withLegacyVersions()},
      {"Sub", binary<SubOp>().withLegacyVersions()},
      {"Mul", binary<MulOp>().withLegacyVersions()},
      {"Div", binary<DivOp>().withLegacyVersions()},
      {"Pow", pow().withLegacyVersions()},
      {"Max", binary<MaxOp>()},
      {"Min", binary<MinOp>()},
      {"Dropout", dropout()},
  });
}

} // namespace dlc
