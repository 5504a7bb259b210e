// How each ONNX op becomes dlc ops. Adding an op is one table entry; families share builders.
#include "compiler/ImportContext.h"
#include "compiler/ModelCheck.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace dlc {

Value NodeImporter::input(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i));
  return valueOf(node.input(i));
}

RankedTensorType NodeImporter::inputType(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i));
  return typeOf(node.input(i));
}

const ConstTensor *NodeImporter::constantOrNull(int i) const {
  return hasInput(i) ? constOf(node.input(i)) : nullptr;
}

const ConstTensor &NodeImporter::constInput(int i) const {
  const ConstTensor *c = hasInput(i) ? constOf(node.input(i)) : nullptr;
  if (!c)
    throw ImportError("input #" + std::to_string(i) + " ('" +
                      (hasInput(i) ? node.input(i) : std::string()) +
                      "') must be a compile-time constant");
  return *c;
}

const onnx::AttributeProto *NodeImporter::attr(const std::string &name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::AttributeProto *NodeImporter::typedAttr(const std::string &name,
                                                    int expectedType) const {
  const auto *a = attr(name);
  if (a && a->type() != expectedType && a->type() != onnx::AttributeProto::UNDEFINED)
    throw ImportError("attribute '" + name + "' must be " + attributeTypeName(expectedType) +
                      ", got " + attributeTypeName(a->type()));
  return a;
}

int64_t NodeImporter::intAttr(const std::string &name, int64_t fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}

float NodeImporter::floatAttr(const std::string &name, float fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}

std::string NodeImporter::stringAttr(const std::string &name,
                                     const std::string &fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeImporter::intsAttr(const std::string &name,
                                            std::vector<int64_t> fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

namespace {

Value reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, cast<RankedTensorType>(v.getType()).getElementType());
  if (type == v.getType())
    return v;
  return n.b.create<ReshapeOp>(n.loc(), type, v);
}

template <typename Op> OpImport unary() {
  return {{}, [](NodeImporter &n) -> Value {
            return n.b.create<Op>(n.loc(), n.outputType(), n.input(0));
          }};
}

// ONNX's variadic Max/Min and binary arithmetic all fold left to right.
template <typename Op> OpImport binary() {
  return {{}, [](NodeImporter &n) -> Value {
            Value acc = n.input(0);
            for (int i = 1; i < n.node.input_size(); ++i) {
              auto lhs = cast<RankedTensorType>(acc.getType());
              auto shape = broadcastShapes(lhs.getShape(), n.inputType(i).getShape());
              if (failed(shape))
                throw ImportError("operand shapes do not broadcast");
              auto type = RankedTensorType::get(*shape, lhs.getElementType());
              acc = n.b.create<Op>(n.loc(), type, acc, n.input(i));
            }
            return acc;
          }};
}

// ONNX Pow may raise to an exponent of another type; dlc's binary ops want one type.
OpImport pow() {
  return {{}, [](NodeImporter &n) -> Value {
            Value exponent = n.input(1);
            auto expType = n.inputType(1);
            Type base = n.inputType(0).getElementType();
            if (expType.getElementType() != base)
              exponent = n.b.create<CastOp>(n.loc(), expType.clone(base), exponent);
            return n.b.create<PowOp>(n.loc(), n.outputType(), n.input(0), exponent);
          }};
}

// Everything that keeps the elements and changes only the shape.
OpImport view(std::vector<int> staticInputs) {
  return {std::move(staticInputs),
          [](NodeImporter &n) { return reshape(n, n.input(0), n.outputType().getShape()); }};
}

// Squeeze and Unsqueeze: when the axes are known (an attribute before opset 13, a constant
// input after), the result shape comes from them, not from shape inference, which ignores
// axes outside the rank. Axes given at run time leave the inferred (declared) shape.
template <bool isSqueeze> OpImport squeezeLike() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0).getShape();
            if (n.opset >= 13 && n.hasInput(1) && !n.constantOrNull(1))
              return reshape(n, n.input(0), n.outputType().getShape());
            std::vector<int64_t> axes = n.opset >= 13 ? (n.hasInput(1) ? n.constInput(1).asInts()
                                                                       : std::vector<int64_t>())
                                                      : n.intsAttr("axes");
            int64_t rank = isSqueeze ? in.size() : in.size() + axes.size();
            std::vector<char> marked(rank, 0);
            for (int64_t axis : axes) {
              int64_t a = normalizeAxis(axis, rank);
              if (a >= rank) // normalizeAxis lets axis 0 through for rank 0
                throw ImportError("axis " + std::to_string(axis) + " is out of range for rank 0");
              if (marked[a]++)
                throw ImportError("axis " + std::to_string(axis) + " is given twice");
              if (isSqueeze && in[a] != 1)
                throw ImportError("cannot squeeze axis " + std::to_string(axis) + " of size " +
                                  std::to_string(in[a]));
            }
            SmallVector<int64_t> out;
            if (isSqueeze) {
              for (int64_t d = 0; d < rank; ++d)
                if (axes.empty() ? in[d] != 1 : !marked[d])
                  out.push_back(in[d]);
            } else {
              auto next = in.begin();
              for (int64_t d = 0; d < rank; ++d)
                out.push_back(marked[d] ? 1 : *next++);
            }
            return reshape(n, n.input(0), out);
          }};
}

OpImport notFolded() {
  return {{}, [](NodeImporter &) -> Value {
            throw ImportError("its value depends on a tensor whose shape is not static");
          }};
}

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

Window resolveWindow(NodeImporter &n, ArrayRef<int64_t> inputShape,
                     std::vector<int64_t> kernel) {
  size_t spatial = inputShape.size() - 2;
  if (kernel.size() != spatial)
    throw ImportError("kernel_shape needs " + std::to_string(spatial) + " entries");
  Window w{kernel, n.intsAttr("strides", std::vector<int64_t>(spatial, 1)),
           n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0)),
           n.intsAttr("dilations", std::vector<int64_t>(spatial, 1))};
  if (w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial)
    throw ImportError("strides/dilations/pads do not match the input's spatial rank");
  std::vector<int64_t> window(spatial); // dilated kernel extent
  for (size_t i = 0; i < spatial; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1)
      throw ImportError("kernel, strides and dilations must be positive");
    auto dilated = checkedMul(kernel[i] - 1, w.dilations[i]);
    if (!dilated || *dilated >= kMaxTensorBytes)
      throw ImportError("kernel and dilations are too large on spatial axis " +
                        std::to_string(i));
    window[i] = *dilated + 1;
  }
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = inputShape[i + 2], stride = w.strides[i];
      int64_t out = in / stride + (in % stride != 0); // ceil, without overflow at huge strides
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + window[i] - in);
      int64_t small = total / 2;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.pads[i + spatial] = total - w.pads[i];
    }
  } else if (autoPad != "NOTSET") {
    throw ImportError("unknown auto_pad '" + autoPad + "'");
  }
  for (size_t i = 0; i < spatial; ++i) {
    auto padded = checkedAdd(inputShape[i + 2], w.pads[i]);
    padded = padded ? checkedAdd(*padded, w.pads[i + spatial]) : std::nullopt;
    if (!padded)
      throw ImportError("pads overflow on spatial axis " + std::to_string(i));
    if (window[i] > *padded)
      throw ImportError("dilated kernel extent " + std::to_string(window[i]) +
                        " is larger than the padded input " + std::to_string(*padded) +
                        " on spatial axis " + std::to_string(i));
  }
  return w;
}

OpImport conv() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0).getShape();
            auto wShape = n.inputType(1).getShape();
            if (x.size() < 3 || x.size() > 5 || wShape.size() != x.size())
              throw ImportError("only 1-D to 3-D convolutions with matching weight rank");
            Window w = resolveWindow(
                n, x, n.intsAttr("kernel_shape", {wShape.begin() + 2, wShape.end()}));
            Value bias = n.hasInput(2) ? n.input(2) : Value();
            return n.b.create<ConvOp>(n.loc(), n.outputType(), n.input(0), n.input(1), bias,
                                      w.strides, w.pads, w.dilations, n.intAttr("group", 1));
          }};
}

template <typename Op> OpImport pool() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0).getShape();
            if (x.size() < 3 || x.size() > 5)
              throw ImportError("only 1-D to 3-D pooling");
            if (n.intAttr("storage_order", 0) != 0)
              throw ImportError("storage_order=1 is not supported");
            Window w = resolveWindow(n, x, n.intsAttr("kernel_shape"));
            bool ceil = n.intAttr("ceil_mode", 0) != 0;
            if constexpr (std::is_same_v<Op, AvgPoolOp>)
              return n.b.create<Op>(n.loc(), n.outputType(), n.input(0), w.kernel, w.strides,
                                    w.pads, w.dilations, ceil,
                                    n.intAttr("count_include_pad", 0) != 0);
            else
              return n.b.create<Op>(n.loc(), n.outputType(), n.input(0), w.kernel, w.strides,
                                    w.pads, w.dilations, ceil);
          }};
}

OpImport matmul() {
  return {{}, [](NodeImporter &n) -> Value {
            // 1-D operands are promoted to matrices and the extra dim dropped afterwards.
            SmallVector<int64_t> a(n.inputType(0).getShape()), b(n.inputType(1).getShape());
            if (a.empty() || b.empty())
              throw ImportError("MatMul operands must have rank >= 1");
            if (a.size() == 1)
              a.insert(a.begin(), 1);
            if (b.size() == 1)
              b.push_back(1);
            auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                                         ArrayRef<int64_t>(b).drop_back(2));
            if (failed(batch))
              throw ImportError("batch dims do not broadcast");
            SmallVector<int64_t> shape(*batch);
            shape.append({a[a.size() - 2], b.back()});
            auto type = RankedTensorType::get(shape, n.outputType().getElementType());
            Value product = n.b.create<MatMulOp>(n.loc(), type, reshape(n, n.input(0), a),
                                                 reshape(n, n.input(1), b));
            return reshape(n, product, n.outputType().getShape());
          }};
}

OpImport gemm() {
  return {{}, [](NodeImporter &n) -> Value {
            Value c = n.hasInput(2) ? n.input(2) : Value();
            return n.b.create<GemmOp>(n.loc(), n.outputType(), n.input(0), n.input(1), c,
                                      n.b.getBoolAttr(n.intAttr("transA", 0) != 0),
                                      n.b.getBoolAttr(n.intAttr("transB", 0) != 0),
                                      n.b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
                                      n.b.getF32FloatAttr(n.floatAttr("beta", 1.0f)));
          }};
}

OpImport clip() {
  return {{}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            float lo = -std::numeric_limits<float>::infinity(), hi = -lo;
            if (n.opset < 11)
              return n.b.create<ClipOp>(n.loc(), n.outputType(), x,
                                        n.b.getF32FloatAttr(n.floatAttr("min", lo)),
                                        n.b.getF32FloatAttr(n.floatAttr("max", hi)));
            const ConstTensor *min = n.hasInput(1) ? n.constantOrNull(1) : nullptr;
            const ConstTensor *max = n.hasInput(2) ? n.constantOrNull(2) : nullptr;
            for (const ConstTensor *bound : {min, max})
              if (bound && bound->numElements() != 1)
                throw ImportError("min and max must be scalars");
            bool boundsKnown = (!n.hasInput(1) || min) && (!n.hasInput(2) || max);
            if (boundsKnown && n.outputType().getElementType().isF32())
              return n.b.create<ClipOp>(n.loc(), n.outputType(), x,
                                        n.b.getF32FloatAttr(min ? min->asDoubles().at(0) : lo),
                                        n.b.getF32FloatAttr(max ? max->asDoubles().at(0) : hi));
            // Bounds known only at run time (or non-float data): clip = min(max(x, lo), hi).
            if (n.hasInput(1))
              x = n.b.create<MaxOp>(n.loc(), n.outputType(), x, n.input(1));
            if (n.hasInput(2))
              x = n.b.create<MinOp>(n.loc(), n.outputType(), x, n.input(2));
            return x;
          }};
}

OpImport softmax(bool log) {
  return {{}, [log](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = normalizeAxis(n.intAttr("axis", n.opset < 13 ? 1 : -1), rank);
            if (n.opset >= 13)
              return n.b.create<SoftmaxOp>(n.loc(), n.outputType(), n.input(0), axis, log);
            // Before opset 13 softmax ran over all dims from `axis` on, flattened.
            int64_t outer = 1, inner = 1;
            for (int64_t i = 0; i < rank; ++i)
              (i < axis ? outer : inner) *= shape[i];
            Value flat = reshape(n, n.input(0), {outer, inner});
            Value result = n.b.create<SoftmaxOp>(n.loc(), flat.getType(), flat, 1, log);
            return reshape(n, result, shape);
          }};
}

template <typename Op> OpImport reduce() {
  return {{1}, [](NodeImporter &n) -> Value {
            int64_t rank = n.inputType(0).getRank();
            bool axesFromInput = n.opset >= 13 && std::is_same_v<Op, ReduceSumOp>;
            std::vector<int64_t> axes =
                axesFromInput ? (n.hasInput(1) ? n.constInput(1).asInts() : std::vector<int64_t>{})
                              : n.intsAttr("axes");
            if (axes.empty()) {
              if (n.intAttr("noop_with_empty_axes", 0))
                return reshape(n, n.input(0), n.outputType().getShape());
              for (int64_t i = 0; i < rank; ++i)
                axes.push_back(i);
            }
            for (int64_t &axis : axes)
              axis = normalizeAxis(axis, rank);
            std::sort(axes.begin(), axes.end());
            axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
            return n.b.create<Op>(n.loc(), n.outputType(), n.input(0), axes);
          }};
}

OpImport transpose() {
  return {{}, [](NodeImporter &n) -> Value {
            int64_t rank = n.inputType(0).getRank();
            std::vector<int64_t> reversed;
            for (int64_t i = rank - 1; i >= 0; --i)
              reversed.push_back(i);
            return n.b.create<TransposeOp>(n.loc(), n.outputType(), n.input(0),
                                           n.intsAttr("perm", reversed));
          }};
}

OpImport concat() {
  return {{}, [](NodeImporter &n) -> Value {
            SmallVector<Value> inputs;
            for (int i = 0; i < n.node.input_size(); ++i)
              inputs.push_back(n.input(i));
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), n.inputType(0).getRank());
            return n.b.create<ConcatOp>(n.loc(), n.outputType(), inputs, axis);
          }};
}

OpImport gather() {
  return {{}, [](NodeImporter &n) -> Value {
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), n.inputType(0).getRank());
            int64_t size = n.inputType(0).getDimSize(axis);
            if (const ConstTensor *indices = n.constantOrNull(1))
              for (int64_t i : indices->asInts())
                if (i < -size || i >= size)
                  throw ImportError("index " + std::to_string(i) + " is out of range for axis " +
                                    std::to_string(axis) + " of size " + std::to_string(size));
            return n.b.create<GatherOp>(n.loc(), n.outputType(), n.input(0), n.input(1), axis);
          }};
}

OpImport slice() {
  return {{1, 2, 3, 4}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            std::vector<int64_t> starts, ends, axes, steps;
            if (n.opset < 10) {
              starts = n.intsAttr("starts");
              ends = n.intsAttr("ends");
              axes = n.intsAttr("axes");
            } else {
              starts = n.constInput(1).asInts();
              ends = n.constInput(2).asInts();
              if (n.hasInput(3))
                axes = n.constInput(3).asInts();
              if (n.hasInput(4))
                steps = n.constInput(4).asInts();
            }
            if (axes.empty())
              for (size_t i = 0; i < starts.size(); ++i)
                axes.push_back(i);
            if (steps.empty())
              steps.assign(starts.size(), 1);
            if (ends.size() != starts.size() || axes.size() != starts.size() ||
                steps.size() != starts.size())
              throw ImportError("starts, ends, axes and steps differ in length");
            std::vector<int64_t> outStart(rank, 0), outStep(rank, 1);
            SmallVector<int64_t> outShape(shape);
            for (size_t i = 0; i < axes.size(); ++i) {
              int64_t axis = normalizeAxis(axes[i], rank), dim = shape[axis], step = steps[i];
              if (step == 0)
                throw ImportError("slice step must be non-zero");
              int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
              int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
              // Start and end are clamped to the dim, so only the step can be huge: the
              // count is formed from the distance without adding the step to anything.
              if (step > 0) {
                start = std::clamp<int64_t>(start, 0, dim);
                end = std::clamp<int64_t>(end, 0, dim);
              } else {
                start = std::clamp<int64_t>(start, -1, dim - 1);
                end = std::clamp<int64_t>(end, -1, dim - 1);
              }
              uint64_t distance = step > 0 ? end - start : start - end;
              uint64_t stride = step > 0 ? uint64_t(step) : uint64_t(-(step + 1)) + 1;
              int64_t size = (step > 0 ? end > start : start > end)
                                 ? int64_t((distance - 1) / stride + 1)
                                 : 0;
              outStart[axis] = size ? start : 0;
              outStep[axis] = step;
              outShape[axis] = size;
            }
            auto type = RankedTensorType::get(outShape, n.outputType().getElementType());
            return n.b.create<SliceOp>(n.loc(), type, n.input(0), outStart, outStep);
          }};
}

// Identity at inference. Exported in training mode (training_mode a constant true, opset 12
// and later) it becomes dlc.dropout, which a training build's step applies with a mask.
OpImport dropout() {
  return {{1, 2}, [](NodeImporter &n) -> Value {
            if (n.opset >= 12 && n.hasInput(2) && !n.constantOrNull(2))
              throw ImportError("training_mode must be a constant");
            bool training = n.opset >= 12 && n.hasInput(2) &&
                            !n.constInput(2).asInts().empty() && n.constInput(2).asInts()[0];
            // Outside training mode the ratio does not matter (it may even be a run-time input).
            if (!training)
              return reshape(n, n.input(0), n.outputType().getShape());
            double ratio = 0.5;
            if (n.opset >= 12 && n.hasInput(1)) {
              if (!n.constantOrNull(1) || n.constInput(1).asDoubles().size() != 1)
                throw ImportError("ratio must be a constant scalar");
              ratio = n.constInput(1).asDoubles()[0];
            } else if (n.opset < 12) {
              ratio = n.floatAttr("ratio", 0.5f);
            }
            if (!(ratio >= 0.0 && ratio < 1.0))
              throw ImportError("ratio must be in [0, 1), got " + std::to_string(ratio));
            if (ratio == 0.0)
              return reshape(n, n.input(0), n.outputType().getShape());
            return n.b.create<DropoutOp>(n.loc(), n.outputType(), n.input(0),
                                         n.b.getF32FloatAttr(float(ratio)));
          }};
}

OpImport batchNorm() {
  return {{}, [](NodeImporter &n) -> Value {
            auto bn = n.b.create<BatchNormOp>(
                n.loc(), n.outputType(), n.input(0), n.input(1), n.input(2), n.input(3),
                n.input(4), n.b.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f)));
            bn->setAttr(kMomentumAttr, n.b.getF32FloatAttr(n.floatAttr("momentum", 0.9f)));
            if (n.intAttr("training_mode", 0))
              bn->setAttr(kBatchStatisticsAttr, n.b.getUnitAttr());
            return bn;
          }};
}

} // namespace

const std::map<std::string, OpImport> &opImportTable() {
  static const std::map<std::string, OpImport> table = {
      {"Relu", unary<ReluOp>()},
      {"Sigmoid", unary<SigmoidOp>()},
      {"Tanh", unary<TanhOp>()},
      {"Exp", unary<ExpOp>()},
      {"Log", unary<LogOp>()},
      {"Sqrt", unary<SqrtOp>()},
      {"Neg", unary<NegOp>()},
      {"Abs", unary<AbsOp>()},
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
      {"LeakyRelu", {{}, [](NodeImporter &n) -> Value {
                       return n.b.create<LeakyReluOp>(n.loc(), n.outputType(), n.input(0),
                                                      n.b.getF32FloatAttr(n.floatAttr("alpha", 0.01f)));
                     }}},
      {"Clip", clip()},
      {"Add", binary<AddOp>()},
      {"Sub", binary<SubOp>()},
      {"Mul", binary<MulOp>()},
      {"Div", binary<DivOp>()},
      {"Pow", pow()},
      {"Max", binary<MaxOp>()},
      {"Min", binary<MinOp>()},
      {"MatMul", matmul()},
      {"Gemm", gemm()},
      {"Conv", conv()},
      {"BatchNormalization", batchNorm()},
      {"Dropout", dropout()},
      {"MaxPool", pool<MaxPoolOp>()},
      {"AveragePool", pool<AvgPoolOp>()},
      {"GlobalAveragePool", {{}, [](NodeImporter &n) -> Value {
                               return n.b.create<GlobalAvgPoolOp>(n.loc(), n.outputType(),
                                                                  n.input(0));
                             }}},
      {"Softmax", softmax(false)},
      {"LogSoftmax", softmax(true)},
      {"ReduceSum", reduce<ReduceSumOp>()},
      {"ReduceMean", reduce<ReduceMeanOp>()},
      {"ReduceMax", reduce<ReduceMaxOp>()},
      {"ReduceMin", reduce<ReduceMinOp>()},
      {"Reshape", view({1})},
      {"Flatten", view({})},
      {"Squeeze", squeezeLike<true>()},
      {"Unsqueeze", squeezeLike<false>()},
      {"Identity", view({})},
      {"Transpose", transpose()},
      {"Concat", concat()},
      {"Gather", gather()},
      {"Slice", slice()},
      {"Constant", notFolded()},
      {"Shape", notFolded()},
      {"Size", notFolded()},
  };
  return table;
}

} // namespace dlc
