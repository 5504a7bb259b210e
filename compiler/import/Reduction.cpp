// How ONNX reductions, softmax, normalizations, search and losses become dlc ops.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace dlc {
namespace {

OpImport softmax(bool log) {
  return {{}, [log](NodeImporter &n) -> Value {
            requireFloat(n);
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = normalizeAxis(n.intAttr("axis", n.version < 13 ? 1 : -1), rank);
            if (n.version >= 13)
              return n.b.create<SoftmaxOp>(n.loc(), n.inputType(0), n.input(0), axis, log);
            // Before opset 13 softmax ran over all dims from `axis` on, flattened.
            auto [outer, inner] = flattenedAt(shape, axis);
            Value flat = reshape(n, n.input(0), {outer, inner});
            Value result = n.b.create<SoftmaxOp>(n.loc(), flat.getType(), flat, 1, log);
            return reshape(n, result, shape);
          }};
}

Value standardize(NodeImporter &n, Value x, ArrayRef<int64_t> axes, double epsilon) {
  return standardizeWithStatistics(n, x, axes, epsilon).y;
}

// Scale (and bias) broadcast over the normalized trailing axes.
Value scaleAndShift(NodeImporter &n, Value y, int scaleInput,
                    std::optional<int> biasInput = std::nullopt) {
  y = bin<MulOp>(n, y, n.input(scaleInput));
  if (biasInput && n.hasInput(*biasInput))
    y = bin<AddOp>(n, y, n.input(*biasInput));
  if (typeOf(y) != n.inputType(0))
    throw ImportError("scale or bias do not broadcast to the input's shape");
  return y;
}

// The axes a layer norm (plain or root-mean-square) normalizes over: `axis` and after.
std::vector<int64_t> normalizedAxes(NodeImporter &n) {
  requireFloat32(n);
  int64_t rank = n.inputType(0).getRank();
  if (n.intAttr("stash_type", 1) != 1)
    throw ImportError("stash_type other than float32 is not supported");
  return trailingAxes(normalizeAxis(n.intAttr("axis", -1), rank), rank);
}

// Y, and the Mean and InvStdDev outputs.
OpImport layerNorm() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            std::vector<int64_t> axes = normalizedAxes(n);
            Standardized s =
                standardizeWithStatistics(n, n.input(0), axes, n.floatAttr("epsilon", 1e-5f));
            return {scaleAndShift(n, s.y, 1, 2), s.mean, s.invStdDev};
          }};
}

// x / sqrt(mean(x^2) + eps) * scale, and (ONNX Runtime's SimplifiedLayerNormalization) the
// inverse of the root mean square.
OpImport rmsNorm() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            std::vector<int64_t> axes = normalizedAxes(n);
            auto [y, invRms] =
                rootMeanSquareNormalize(n, n.input(0), axes, n.floatAttr("epsilon", 1e-5f));
            return {scaleAndShift(n, y, 1), invRms};
          }};
}

// Per sample and channel over the spatial dims; scale and bias are per channel.
OpImport instanceNorm() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    auto shape = typeOf(x).getShape();
    if (shape.size() < 3)
      throw ImportError("input must have rank >= 3 (N, C, spatial)");
    Value y = standardize(n, x, trailingAxes(2, shape.size()), n.floatAttr("epsilon", 1e-5f));
    SmallVector<int64_t> perChannel(shape.size() - 1, 1);
    perChannel[0] = shape[1];
    y = bin<MulOp>(n, y, reshape(n, n.input(1), perChannel));
    y = bin<AddOp>(n, y, reshape(n, n.input(2), perChannel));
    if (typeOf(y) != typeOf(x))
      throw ImportError("scale and bias must have one value per channel");
    return y;
  });
}

// Channels split into groups, each standardized over its channels and the spatial dims; scale
// and bias per channel (opset 21; opset 18 had them per group).
OpImport groupNorm() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    auto shape = typeOf(x).getShape();
    int64_t groups = n.intAttr("num_groups", 0);
    if (shape.size() < 3)
      throw ImportError("input must have rank >= 3 (N, C, spatial)");
    if (groups <= 0 || shape[1] % groups)
      throw ImportError("num_groups " + std::to_string(groups) + " does not divide " +
                        std::to_string(shape[1]) + " channels");
    int64_t spatial = dimsProduct(shape.drop_front(2));
    Value grouped = reshape(n, x, {shape[0], groups, dimsProduct({shape[1] / groups, spatial})});
    Value y = reshape(n, standardize(n, grouped, {2}, n.floatAttr("epsilon", 1e-5f)), shape);
    int64_t perScale = n.version >= 21 ? shape[1] : groups;
    if (n.inputType(1).getNumElements() != perScale || n.inputType(2).getNumElements() != perScale)
      throw ImportError("scale and bias must have " + std::to_string(perScale) + " values");
    auto expand = [&](Value v) {
      if (perScale == shape[1])
        return reshape(n, v, {shape[1], 1});
      // One value per group, repeated over the group's channels.
      Value perGroup = reshape(n, v, {groups, 1, 1});
      Value ones = n.b.create<BroadcastOp>(
          n.loc(), typeOf(perGroup).clone({groups, shape[1] / groups, 1}), perGroup);
      return reshape(n, ones, {shape[1], 1});
    };
    SmallVector<int64_t> channelShape(shape.size() - 1, 1);
    channelShape[0] = shape[1];
    y = bin<MulOp>(n, y, reshape(n, expand(n.input(1)), channelShape));
    return bin<AddOp>(n, y, reshape(n, expand(n.input(2)), channelShape));
  });
}

// (x - mean) / sqrt(var), over `axes` (default N and the spatial dims), epsilon 1e-9.
OpImport meanVarianceNorm() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    int64_t rank = typeOf(x).getRank();
    std::vector<int64_t> axes = n.intsAttr("axes", {0, 2, 3});
    for (int64_t &a : axes)
      a = normalizeAxis(a, rank);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return standardize(n, x, axes, 1e-9);
  });
}

// x / ||x||_p along one axis (p = 1 or 2); 0 where the norm is 0.
OpImport lpNorm() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    int64_t axis = normalizeAxis(n.intAttr("axis", -1), typeOf(x).getRank());
    int64_t p = n.intAttr("p", 2);
    Value norm;
    if (p == 1)
      norm = red<ReduceSumOp>(n, un<AbsOp>(n, x), {axis}, true);
    else if (p == 2)
      norm = un<SqrtOp>(n, red<ReduceSumOp>(n, bin<MulOp>(n, x, x), {axis}, true));
    else
      throw ImportError("p must be 1 or 2, got " + std::to_string(p));
    // A zero norm gives 0, not 0 / 0, as ONNX's reference does.
    Type f = typeOf(x).getElementType();
    Value zero = comparison<EqualOp>(n, norm, scalar(n, 0.0, f));
    Value safeNorm = n.b.create<WhereOp>(n.loc(), typeOf(norm), zero, scalar(n, 1.0, f), norm);
    Value y = bin<DivOp>(n, x, safeNorm);
    return n.b.create<WhereOp>(n.loc(), typeOf(y), zero, scalar(n, 0.0, f), y);
  });
}

// ArgMax/ArgMin: int64 indices along one axis.
// Integers up to 32 bits are compared as doubles, which hold them exactly (CLIP takes the
// ArgMax of its int32 token ids).
template <typename Op> OpImport argReduce() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            Type element = n.inputType(0).getElementType();
            bool exact = element.isInteger() && !element.isInteger(1) &&
                         element.getIntOrFloatBitWidth() <= 32;
            if (exact)
              x = castTo(n, x, n.b.getF64Type());
            else
              requireFloat(n);
            auto in = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), in.getRank());
            bool keep = n.intAttr("keepdims", 1) != 0;
            SmallVector<int64_t> shape;
            for (int64_t d = 0; d < in.getRank(); ++d)
              if (d != axis || keep)
                shape.push_back(d == axis ? 1 : in.getDimSize(d));
            return n.b.create<Op>(n.loc(), RankedTensorType::get(shape, n.b.getI64Type()), x,
                                  axis, n.intAttr("select_last_index", 0) != 0);
          }};
}

// CumSum and CumProd.
template <typename Op> OpImport running() {
  return {{1}, [](NodeImporter &n) -> Value {
            const ConstTensor &axisValue = n.constInput(1);
            if (axisValue.numElements() != 1)
              throw ImportError("axis must be a scalar");
            int64_t axis = normalizeAxis(axisValue.asInts()[0], n.inputType(0).getRank());
            Type element = n.inputType(0).getElementType();
            if (!element.isF32() && !element.isF64() && !element.isSignlessInteger(32) &&
                !element.isSignlessInteger(64))
              throw ImportError("needs float, double, int32 or int64 input");
            return n.b.create<Op>(n.loc(), n.inputType(0), n.input(0), axis,
                                        n.intAttr("exclusive", 0) != 0,
                                        n.intAttr("reverse", 0) != 0);
          }};
}

// Hardmax: 1 at the first maximum along the axis, else 0 (flattened from axis before 13).
OpImport hardmax() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat(n);
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = normalizeAxis(n.intAttr("axis", n.version < 13 ? 1 : -1), rank);
            Value x = n.input(0);
            if (n.version < 13) {
              auto [outer, inner] = flattenedAt(shape, axis);
              x = reshape(n, x, {outer, inner});
              axis = 1;
            }
            auto xType = typeOf(x);
            SmallVector<int64_t> kept(xType.getShape());
            kept[axis] = 1;
            Value best = n.b.create<ArgMaxOp>(
                n.loc(), RankedTensorType::get(kept, n.b.getI64Type()), x, axis, false);
            Value hot = comparison<EqualOp>(
                n, best, classIndices(n, xType.getDimSize(axis), axis, xType.getRank()));
            return reshape(n, castTo(n, hot, xType.getElementType()), shape);
          }};
}

// NegativeLogLikelihoodLoss over log-probabilities [N, C, d...] and targets [N, d...]:
// -input[n, target, d...] * weight[target], ignore_index masked, then none/sum/mean
// (mean divides by the summed weights).
Value nllLoss(NodeImporter &n, Value logProbs, Value target, int weightInput) {
  auto in = typeOf(logProbs);
  if (in.getRank() < 2 || typeOf(target).getRank() != in.getRank() - 1)
    throw ImportError("input must be [N, C, ...] and target [N, ...]");
  Type f = in.getElementType();
  Value t = castTo(n, target, n.b.getI64Type());
  Value valid;
  if (n.attr("ignore_index")) {
    Value ignored =
        comparison<EqualOp>(n, t, intScalar(n, n.intAttr("ignore_index", 0), n.b.getI64Type()));
    valid = bin<XorOp>(n, ignored, allOnes(n, n.b.getI1Type()));
    t = n.b.create<WhereOp>(n.loc(), typeOf(t), valid, t, intScalar(n, 0, n.b.getI64Type()));
  }
  Value picked = gatherElements(n, logProbs, insertUnitDim(n, t, 1), 1);
  picked = reshape(n, picked, typeOf(t).getShape());
  Value weight;
  if (n.hasInput(weightInput))
    weight = n.b.create<GatherOp>(n.loc(), typeOf(t).clone(f), n.input(weightInput), t, 0);
  if (valid) {
    Value one = weight ? weight : broadcastTo(n, scalar(n, 1.0, f), typeOf(t).getShape());
    weight = n.b.create<WhereOp>(n.loc(), typeOf(one), valid, one, scalar(n, 0.0, f));
  }
  Value loss = un<NegOp>(n, weight ? bin<MulOp>(n, picked, weight) : picked);
  std::string reduction = n.stringAttr("reduction", "mean");
  std::vector<int64_t> all = trailingAxes(0, typeOf(loss).getRank());
  if (reduction == "none")
    return loss;
  if (reduction == "sum")
    return reduceOrKeep<ReduceSumOp>(n, loss, all, false);
  if (reduction != "mean")
    throw ImportError("reduction must be none, sum or mean, got '" + reduction + "'");
  if (!weight)
    return reduceOrKeep<ReduceMeanOp>(n, loss, all, false);
  return bin<DivOp>(n, reduceOrKeep<ReduceSumOp>(n, loss, all, false),
                    reduceOrKeep<ReduceSumOp>(n, weight, all, false));
}

OpImport nllLossOp() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            return nllLoss(n, n.input(0), n.input(1), 2);
          }};
}

// SoftmaxCrossEntropyLoss: NLL of the log-softmax over dim 1; the log-probabilities are the
// optional second output.
OpImport softmaxCrossEntropy() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            Value logProbs = n.b.create<SoftmaxOp>(n.loc(), n.inputType(0), n.input(0), 1, true);
            return {nllLoss(n, logProbs, n.input(1), 2), logProbs};
          }};
}

// Reductions: the axes (an attribute, or an input from opset 13 for ReduceSum and 18 for the
// others; none means all, unless noop_with_empty_axes) and keepdims, then `build` over them.
// Axes come sorted and unique; with no axes `build` only transforms elementwise.
template <typename Build> OpImport reduction(Build build) {
  return {{1}, [build](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            int64_t rank = in.getRank();
            bool axesFromInput = n.version >= (n.node.op_type() == "ReduceSum" ? 13 : 18);
            std::vector<int64_t> axes =
                axesFromInput ? (n.hasInput(1) ? n.constInput(1).asInts() : std::vector<int64_t>{})
                              : n.intsAttr("axes");
            if (axes.empty() && !n.intAttr("noop_with_empty_axes", 0))
              axes = trailingAxes(0, rank);
            for (int64_t &axis : axes)
              axis = normalizeAxis(axis, rank);
            std::sort(axes.begin(), axes.end());
            axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
            bool keep = n.intAttr("keepdims", 1) != 0;
            Type element = in.getElementType();
            // Max and min of bools and integers of up to 16 bits: exact in float32, and an
            // empty reduction clamps to the type's lowest (highest) value as the reference's.
            bool extremum = n.node.op_type() == "ReduceMax" || n.node.op_type() == "ReduceMin";
            if (extremum && element.isInteger() && element.getIntOrFloatBitWidth() <= 16) {
              double lowest = 0, highest = 1;
              if (!element.isInteger(1)) {
                unsigned bits = element.getIntOrFloatBitWidth();
                lowest = element.isUnsignedInteger() ? 0 : -std::ldexp(1.0, bits - 1);
                highest = (element.isUnsignedInteger() ? std::ldexp(1.0, bits)
                                                       : std::ldexp(1.0, bits - 1)) - 1;
              }
              Value wide = build(n, castTo(n, n.input(0), n.b.getF32Type()),
                                 ArrayRef<int64_t>(axes), keep);
              wide = n.b.create<ClipOp>(n.loc(), typeOf(wide), wide,
                                        n.b.getF32FloatAttr(lowest), n.b.getF32FloatAttr(highest));
              return castTo(n, wide, element);
            }
            requireFloat(n);
            return build(n, n.input(0), ArrayRef<int64_t>(axes), keep);
          }};
}

template <typename Op> OpImport reduce() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
    return reduceOrKeep<Op>(n, x, axes, keep);
  });
}

OpImport reduceL1() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
    return reduceOrKeep<ReduceSumOp>(n, un<AbsOp>(n, x), axes, keep);
  });
}

OpImport reduceSumSquare() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
    return reduceOrKeep<ReduceSumOp>(n, bin<MulOp>(n, x, x), axes, keep);
  });
}

OpImport reduceL2() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
    return un<SqrtOp>(n, reduceOrKeep<ReduceSumOp>(n, bin<MulOp>(n, x, x), axes, keep));
  });
}

OpImport reduceLogSum() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
    return un<LogOp>(n, reduceOrKeep<ReduceSumOp>(n, x, axes, keep));
  });
}

// max + log(sum(exp(x - max))), stable for large inputs.
OpImport reduceLogSumExp() {
  return reduction([](NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) -> Value {
    if (axes.empty())
      return x;
    Value max = red<ReduceMaxOp>(n, x, axes, true);
    Value sum = red<ReduceSumOp>(n, un<ExpOp>(n, bin<SubOp>(n, x, max)), axes, keep);
    Value shift = keep ? max : reshape(n, max, typeOf(sum).getShape());
    return bin<AddOp>(n, un<LogOp>(n, sum), shift);
  });
}

} // namespace

void addReductionImports(ImportTable &table) {
  table.insert({
      {"ReduceProd", reduce<ReduceProdOp>()},
      {"ArgMax", argReduce<ArgMaxOp>()},
      {"ArgMin", argReduce<ArgMinOp>()},
      {"CumSum", running<CumSumOp>()},
      {"CumProd", running<CumProdOp>()},
      {"Hardmax", hardmax()},
      {"NegativeLogLikelihoodLoss", nllLossOp()},
      {"SoftmaxCrossEntropyLoss", softmaxCrossEntropy()},
      {"LayerNormalization", layerNorm().atEveryOpset()},
      {"RMSNormalization", rmsNorm()},
      // ONNX Runtime's RMS norm in the default domain (its optimizer writes it for T5, LLaMA).
      {"SimplifiedLayerNormalization", rmsNorm()},
      {"InstanceNormalization", instanceNorm()},
      {"GroupNormalization", groupNorm()},
      {"MeanVarianceNormalization", meanVarianceNorm()},
      {"LpNormalization", lpNorm()},
      {"ReduceL1", reduceL1()},
      {"ReduceL2", reduceL2()},
      {"ReduceSumSquare", reduceSumSquare()},
      {"ReduceLogSum", reduceLogSum()},
      {"ReduceLogSumExp", reduceLogSumExp()},
      {"Softmax", softmax(false)},
      {"LogSoftmax", softmax(true)},
      {"ReduceSum", reduce<ReduceSumOp>()},
      {"ReduceMean", reduce<ReduceMeanOp>()},
      {"ReduceMax", reduce<ReduceMaxOp>()},
      {"ReduceMin", reduce<ReduceMinOp>()},
  });
}

} // namespace dlc
