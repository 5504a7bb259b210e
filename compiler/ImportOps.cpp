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
  return scope.value(node.input(i));
}

RankedTensorType NodeImporter::inputType(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i));
  return scope.type(node.input(i));
}

const ConstTensor *NodeImporter::constantOrNull(int i) const {
  return hasInput(i) ? scope.constant(node.input(i)) : nullptr;
}

const ConstTensor &NodeImporter::constInput(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i) + " (a compile-time constant)");
  const ConstTensor *c = scope.constant(node.input(i));
  if (!c)
    throw ImportError("input #" + std::to_string(i) + " ('" + node.input(i) +
                      "') must be a compile-time constant: " +
                      scope.whyNotConstant(node.input(i)));
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

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

void requireFloat32(NodeImporter &n, int input = 0) {
  Type element = n.inputType(input).getElementType();
  if (!element.isF32()) {
    std::string text;
    llvm::raw_string_ostream(text) << element;
    throw ImportError("element type " + text + " is not supported (float32 only)");
  }
}

Value reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  auto type = typeOf(v).clone(shape);
  if (type == v.getType())
    return v;
  return n.b.create<ReshapeOp>(n.loc(), type, v);
}

template <typename Op> OpImport unary() {
  return {{}, [](NodeImporter &n) -> Value {
            return n.b.create<Op>(n.loc(), n.inputType(0), n.input(0));
          }};
}

// The broadcast shape of two operands of one element type.
SmallVector<int64_t> broadcastOperands(Value a, Value b) {
  auto shape = broadcastShapes(typeOf(a).getShape(), typeOf(b).getShape());
  if (failed(shape))
    throw ImportError("operand shapes " + dimsString(typeOf(a).getShape()) + " and " +
                      dimsString(typeOf(b).getShape()) + " do not broadcast");
  if (typeOf(a).getElementType() != typeOf(b).getElementType())
    throw ImportError("operand element types differ");
  return *shape;
}

template <typename Op> Value bin(NodeImporter &n, Value a, Value b);

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

OpImport identity() {
  return {{}, [](NodeImporter &n) { return n.input(0); }};
}

OpImport flatten() {
  return {{}, [](NodeImporter &n) {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = n.intAttr("axis", 1);
            if (axis < -rank || axis > rank)
              throw ImportError("axis " + std::to_string(axis) + " is out of range for rank " +
                                std::to_string(rank));
            if (axis < 0)
              axis += rank;
            int64_t outer = 1, inner = 1;
            for (int64_t i = 0; i < rank; ++i)
              (i < axis ? outer : inner) *= shape[i];
            return reshape(n, n.input(0), {outer, inner});
          }};
}

// Reshape's target: 0 copies the input's dim (unless allowzero, opset 14), -1 takes what is
// left.
OpImport reshapeOp() {
  return {{1}, [](NodeImporter &n) {
            auto in = n.inputType(0).getShape();
            std::vector<int64_t> target =
                n.version < 5 ? n.intsAttr("shape") : n.constInput(1).asInts();
            bool allowZero = n.version >= 14 && n.intAttr("allowzero", 0) != 0;
            SmallVector<int64_t> out;
            int inferred = -1;
            int64_t known = 1;
            for (size_t i = 0; i < target.size(); ++i) {
              int64_t d = target[i];
              if (d == 0 && !allowZero) {
                if (i >= in.size())
                  throw ImportError("shape entry " + std::to_string(i) +
                                    " is 0 (copy the input's dim) but the input has rank " +
                                    std::to_string(in.size()));
                d = in[i];
              } else if (d == -1) {
                if (inferred >= 0)
                  throw ImportError("shape has more than one -1");
                inferred = i;
                out.push_back(-1);
                continue;
              } else if (d < -1) {
                throw ImportError("shape entry " + std::to_string(d) + " is invalid");
              }
              auto next = checkedMul(known, d);
              if (!next)
                throw ImportError("shape " + dimsString(target) + " is too large");
              known = *next;
              out.push_back(d);
            }
            int64_t count = n.inputType(0).getNumElements();
            if (inferred >= 0) {
              if (known == 0 || count % known != 0)
                throw ImportError("cannot reshape " + dimsString(in) + " to " +
                                  dimsString(target));
              out[inferred] = count / known;
            } else if (known != count) {
              throw ImportError("cannot reshape " + dimsString(in) + " (" +
                                std::to_string(count) + " elements) to " + dimsString(out));
            }
            return reshape(n, n.input(0), out);
          }};
}

// Squeeze and Unsqueeze: the axes are an attribute before opset 13, a constant input after.
template <bool isSqueeze> OpImport squeezeLike() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0).getShape();
            std::vector<int64_t> axes = n.version >= 13 ? (n.hasInput(1) ? n.constInput(1).asInts()
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

// Ops dlc only evaluates at compile time (foldShapeNode): reaching the import means an input
// was not known then.
OpImport notFolded() {
  return {{}, [](NodeImporter &n) -> Value {
            for (int i = 0; i < n.node.input_size(); ++i)
              if (n.hasInput(i) && !n.constantOrNull(i) && n.node.op_type() != "Shape" &&
                  n.node.op_type() != "Size")
                n.constInput(i); // throws, saying why the input is not a constant
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

// [N, channels, spatial output sizes] of a window op over `x`.
RankedTensorType windowResultType(RankedTensorType x, int64_t channels, const Window &w,
                                  bool ceilMode) {
  auto in = x.getShape();
  SmallVector<int64_t> shape{in[0], channels};
  for (size_t i = 0; i < w.kernel.size(); ++i)
    shape.push_back(windowOutputSize(in[i + 2], w.kernel[i], w.strides[i], w.pads[i],
                                     w.pads[i + w.kernel.size()], w.dilations[i], ceilMode));
  return x.clone(shape);
}

OpImport conv() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0).getShape();
            auto wShape = n.inputType(1).getShape();
            if (wShape.size() != x.size())
              throw ImportError("the weight has rank " + std::to_string(wShape.size()) +
                                " but the input has rank " + std::to_string(x.size()) +
                                "; they must be equal");
            if (x.size() < 3 || x.size() > 5)
              throw ImportError("only 1-D to 3-D convolutions");
            Window w = resolveWindow(
                n, x, n.intsAttr("kernel_shape", {wShape.begin() + 2, wShape.end()}));
            Value bias = n.hasInput(2) ? n.input(2) : Value();
            auto type = windowResultType(n.inputType(0), wShape[0], w, false);
            return n.b.create<ConvOp>(n.loc(), type, n.input(0), n.input(1), bias,
                                      w.strides, w.pads, w.dilations, n.intAttr("group", 1));
          }};
}

// ConvTranspose is the gradient of a convolution with respect to its input: its input plays the
// convolution's output gradient, its weight [C_in, C_out / group, k...] the convolution's.
OpImport convTranspose() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto x = n.inputType(0).getShape(), wShape = n.inputType(1).getShape();
            if (wShape.size() != x.size())
              throw ImportError("the weight has rank " + std::to_string(wShape.size()) +
                                " but the input has rank " + std::to_string(x.size()));
            if (x.size() < 3 || x.size() > 5)
              throw ImportError("only 1-D to 3-D transposed convolutions");
            size_t spatial = x.size() - 2;
            int64_t group = n.intAttr("group", 1);
            if (group < 1 || x[1] != wShape[0] || wShape[0] % group)
              throw ImportError("input channels " + std::to_string(x[1]) +
                                " do not match the weight " + dimsString(wShape) + " and group " +
                                std::to_string(group));
            auto ones = std::vector<int64_t>(spatial, 1);
            std::vector<int64_t> kernel = n.intsAttr("kernel_shape", {wShape.begin() + 2, wShape.end()});
            std::vector<int64_t> strides = n.intsAttr("strides", ones),
                                 dilations = n.intsAttr("dilations", ones),
                                 outputPadding = n.intsAttr("output_padding", std::vector<int64_t>(spatial, 0)),
                                 pads = n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0)),
                                 outputShape = n.intsAttr("output_shape");
            if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
                outputPadding.size() != spatial || pads.size() != 2 * spatial)
              throw ImportError("kernel_shape, strides, dilations, output_padding or pads do not "
                                "match the input's spatial rank");
            if (!outputShape.empty() && outputShape.size() != spatial)
              outputShape.erase(outputShape.begin(), outputShape.end() - std::min(outputShape.size(), spatial));
            std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
            SmallVector<int64_t> shape{x[0], wShape[1] * group};
            for (size_t i = 0; i < spatial; ++i) {
              if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1 || outputPadding[i] < 0 ||
                  kernel[i] != wShape[i + 2])
                throw ImportError("kernel, strides and dilations must be positive and match the weight");
              int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
              int64_t full = strides[i] * (x[i + 2] - 1) + outputPadding[i] + extent;
              bool samePad = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
              if (!outputShape.empty() || samePad) {
                int64_t target = outputShape.empty() ? x[i + 2] * strides[i] : outputShape[i];
                // Split as ONNX's reference does (floor halves); a negative total grows the
                // output at the end, like output_padding.
                int64_t total = full - target;
                int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
                pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
                pads[i + spatial] = total - pads[i];
                if (pads[i] < 0)
                  throw ImportError("output_shape needs padding before the first element");
                if (pads[i + spatial] < 0) {
                  full -= pads[i + spatial];
                  pads[i + spatial] = 0;
                }
              } else if (autoPad == "VALID") {
                pads[i] = pads[i + spatial] = 0;
              } else if (autoPad != "NOTSET") {
                throw ImportError("unknown auto_pad '" + autoPad + "'");
              }
              int64_t out = full - pads[i] - pads[i + spatial];
              if (out < 1)
                throw ImportError("pads leave no output on spatial axis " + std::to_string(i));
              shape.push_back(out);
            }
            auto type = n.inputType(0).clone(shape);
            Value y = n.b.create<ConvGradInputOp>(n.loc(), type, n.input(0), n.input(1), strides,
                                                  pads, dilations, group);
            if (n.hasInput(2)) {
              SmallVector<int64_t> perChannel(shape.size() - 1, 1);
              perChannel[0] = shape[1];
              y = bin<AddOp>(n, y, reshape(n, n.input(2), perChannel));
            }
            return y;
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
            auto type = windowResultType(n.inputType(0), x[1], w, ceil);
            if constexpr (std::is_same_v<Op, AvgPoolOp>)
              return n.b.create<Op>(n.loc(), type, n.input(0), w.kernel, w.strides, w.pads,
                                    w.dilations, ceil, n.intAttr("count_include_pad", 0) != 0);
            else
              return n.b.create<Op>(n.loc(), type, n.input(0), w.kernel, w.strides, w.pads,
                                    w.dilations, ceil);
          }};
}

OpImport matmul() {
  return {{}, [](NodeImporter &n) -> Value {
            // 1-D operands are promoted to matrices and the extra dim dropped afterwards.
            SmallVector<int64_t> a(n.inputType(0).getShape()), b(n.inputType(1).getShape());
            if (a.empty() || b.empty())
              throw ImportError("MatMul operands must have rank >= 1");
            bool vectorA = a.size() == 1, vectorB = b.size() == 1;
            if (a.back() != b[b.size() == 1 ? 0 : b.size() - 2])
              throw ImportError("inner dims differ: " + dimsString(a) + " x " + dimsString(b));
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
            auto type = n.inputType(0).clone(shape);
            Value product = n.b.create<MatMulOp>(n.loc(), type, reshape(n, n.input(0), a),
                                                 reshape(n, n.input(1), b));
            if (vectorB)
              shape.pop_back();
            if (vectorA)
              shape.erase(shape.end() - (vectorB ? 1 : 2));
            return reshape(n, product, shape);
          }};
}

OpImport gemm() {
  return {{}, [](NodeImporter &n) -> Value {
            Value c = n.hasInput(2) ? n.input(2) : Value();
            auto a = n.inputType(0).getShape(), b = n.inputType(1).getShape();
            if (a.size() != 2 || b.size() != 2)
              throw ImportError("A and B must be matrices (ranks " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + ")");
            bool transA = n.intAttr("transA", 0) != 0, transB = n.intAttr("transB", 0) != 0;
            auto type = n.inputType(0).clone({a[transA ? 1 : 0], b[transB ? 0 : 1]});
            return n.b.create<GemmOp>(n.loc(), type, n.input(0), n.input(1), c,
                                      n.b.getBoolAttr(transA), n.b.getBoolAttr(transB),
                                      n.b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
                                      n.b.getF32FloatAttr(n.floatAttr("beta", 1.0f)));
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

OpImport softmax(bool log) {
  return {{}, [log](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = normalizeAxis(n.intAttr("axis", n.version < 13 ? 1 : -1), rank);
            if (n.version >= 13)
              return n.b.create<SoftmaxOp>(n.loc(), n.inputType(0), n.input(0), axis, log);
            // Before opset 13 softmax ran over all dims from `axis` on, flattened.
            int64_t outer = 1, inner = 1;
            for (int64_t i = 0; i < rank; ++i)
              (i < axis ? outer : inner) *= shape[i];
            Value flat = reshape(n, n.input(0), {outer, inner});
            Value result = n.b.create<SoftmaxOp>(n.loc(), flat.getType(), flat, 1, log);
            return reshape(n, result, shape);
          }};
}

OpImport transpose() {
  return {{}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0).getShape();
            int64_t rank = in.size();
            std::vector<int64_t> reversed;
            for (int64_t i = rank - 1; i >= 0; --i)
              reversed.push_back(i);
            std::vector<int64_t> perm = n.intsAttr("perm", reversed);
            std::vector<char> seen(rank, 0);
            SmallVector<int64_t> shape;
            for (int64_t p : perm) {
              if ((int64_t)perm.size() != rank || p < 0 || p >= rank || seen[p]++)
                throw ImportError("perm " + dimsString(perm) + " is not a permutation of " +
                                  std::to_string(rank) + " axes");
              shape.push_back(in[p]);
            }
            return n.b.create<TransposeOp>(n.loc(), n.inputType(0).clone(shape), n.input(0),
                                           perm);
          }};
}

OpImport concat() {
  return {{}, [](NodeImporter &n) -> Value {
            SmallVector<Value> inputs;
            auto first = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), first.getRank());
            SmallVector<int64_t> shape(first.getShape());
            shape[axis] = 0;
            for (int i = 0; i < n.node.input_size(); ++i) {
              auto type = n.inputType(i);
              bool fits = type.getRank() == first.getRank() &&
                          type.getElementType() == first.getElementType();
              for (int64_t d = 0; fits && d < first.getRank(); ++d)
                fits = d == axis || type.getDimSize(d) == first.getDimSize(d);
              if (!fits)
                throw ImportError("input #" + std::to_string(i) + " " +
                                  dimsString(type.getShape()) + " does not fit input #0 " +
                                  dimsString(first.getShape()) + " along axis " +
                                  std::to_string(axis));
              shape[axis] += type.getDimSize(axis);
              inputs.push_back(n.input(i));
            }
            return n.b.create<ConcatOp>(n.loc(), first.clone(shape), inputs, axis);
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
            auto data = n.inputType(0).getShape();
            SmallVector<int64_t> shape(data.begin(), data.begin() + axis);
            llvm::append_range(shape, n.inputType(1).getShape());
            shape.append(data.begin() + axis + 1, data.end());
            return n.b.create<GatherOp>(n.loc(), n.inputType(0).clone(shape), n.input(0),
                                        n.input(1), axis);
          }};
}

OpImport slice() {
  return {{1, 2, 3, 4}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            std::vector<int64_t> starts, ends, axes, steps;
            if (n.version < 10) {
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
            auto type = n.inputType(0).clone(outShape);
            return n.b.create<SliceOp>(n.loc(), type, n.input(0), outStart, outStep);
          }};
}

// Identity at inference. Exported in training mode (training_mode a constant true, opset 12
// and later) it becomes dlc.dropout, which a training build's step applies with a mask.
OpImport dropout() {
  return {{1, 2}, [](NodeImporter &n) -> Value {
            if (n.version >= 12 && n.hasInput(2) && !n.constantOrNull(2))
              throw ImportError("training_mode must be a constant");
            bool training = n.version >= 12 && n.hasInput(2) &&
                            !n.constInput(2).asInts().empty() && n.constInput(2).asInts()[0];
            // Outside training mode the ratio does not matter (it may even be a run-time input).
            if (!training)
              return n.input(0);
            double ratio = 0.5;
            if (n.version >= 12 && n.hasInput(1)) {
              if (!n.constantOrNull(1) || n.constInput(1).asDoubles().size() != 1)
                throw ImportError("ratio must be a constant scalar");
              ratio = n.constInput(1).asDoubles()[0];
            } else if (n.version < 12) {
              ratio = n.floatAttr("ratio", 0.5f);
            }
            if (!(ratio >= 0.0 && ratio < 1.0))
              throw ImportError("ratio must be in [0, 1), got " + std::to_string(ratio));
            if (ratio == 0.0)
              return n.input(0);
            return n.b.create<DropoutOp>(n.loc(), n.inputType(0), n.input(0),
                                         n.b.getF32FloatAttr(float(ratio)));
          }};
}

// ---- Compositions: ops whose meaning is written with existing dlc ops, which brings their
// kernels, memory planning and gradients along (a fusion pass may merge them later).

// A rank-0 integer constant (bool, signed or unsigned, truncated to the type's width).
Value intScalar(NodeImporter &n, int64_t v, Type element) {
  auto type = RankedTensorType::get({}, element);
  APInt bits = APInt(64, static_cast<uint64_t>(v)).trunc(element.getIntOrFloatBitWidth());
  return n.b.create<ConstantOp>(n.loc(), type,
                                DenseElementsAttr::get(type, IntegerAttr::get(element, bits)));
}

// A rank-0 constant of `element` type, broadcast by the binary ops. A value for an integer
// type must be integral and in int64's range (it may come from a file).
Value scalar(NodeImporter &n, double v, Type element) {
  auto type = RankedTensorType::get({}, element);
  if (isa<FloatType>(element))
    return n.b.create<ConstantOp>(n.loc(), type,
                                  DenseElementsAttr::get(type, FloatAttr::get(element, v)));
  if (!(v >= -9.2e18 && v <= 9.2e18) || v != std::trunc(v))
    throw ImportError("value " + std::to_string(v) + " does not fit the integer element type");
  return intScalar(n, static_cast<int64_t>(v), element);
}

// Elementwise binary op with numpy broadcasting.
template <typename Op> Value bin(NodeImporter &n, Value a, Value b) {
  return n.b.create<Op>(n.loc(), typeOf(a).clone(broadcastOperands(a, b)), a, b);
}

// Comparison with numpy broadcasting: a bool result.
template <typename Op> Value comparison(NodeImporter &n, Value a, Value b) {
  return n.b.create<Op>(n.loc(), RankedTensorType::get(broadcastOperands(a, b), n.b.getI1Type()),
                        a, b);
}

template <typename Op> Value un(NodeImporter &n, Value x) {
  return n.b.create<Op>(n.loc(), typeOf(x), x);
}

// Reduction over sorted, unique, non-negative axes.
template <typename Op> Value red(NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(typeOf(x).getShape())) {
    bool reduced = llvm::is_contained(axes, (int64_t)d);
    if (!reduced || keep)
      shape.push_back(reduced ? 1 : size);
  }
  return n.b.create<Op>(n.loc(), typeOf(x).clone(shape), x, axes);
}

// relu(x) + alpha * (exp(min(x, 0) / scale) - 1): Elu at scale 1, Celu at scale alpha.
Value eluLike(NodeImporter &n, Value x, double alpha, double scale) {
  Type f = typeOf(x).getElementType();
  Value negativePart = un<NegOp>(n, un<ReluOp>(n, un<NegOp>(n, x))); // min(x, 0)
  if (scale != 1.0)
    negativePart = bin<DivOp>(n, negativePart, scalar(n, scale, f));
  Value expm1 = bin<SubOp>(n, un<ExpOp>(n, negativePart), scalar(n, 1.0, f));
  return bin<AddOp>(n, un<ReluOp>(n, x), bin<MulOp>(n, scalar(n, alpha, f), expm1));
}

template <typename Build> OpImport floatComposition(Build build) {
  return {{}, [build](NodeImporter &n) -> Value {
            requireFloat32(n);
            return build(n, n.input(0), n.inputType(0).getElementType());
          }};
}

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
  return floatComposition([](NodeImporter &n, Value x, Type f) -> Value {
    Value linear = bin<AddOp>(n, bin<MulOp>(n, scalar(n, n.floatAttr("alpha", 0.2f), f), x),
                              scalar(n, n.floatAttr("beta", 0.5f), f));
    return n.b.create<ClipOp>(n.loc(), typeOf(linear), linear, n.b.getF32FloatAttr(0.0f),
                              n.b.getF32FloatAttr(1.0f));
  });
}

// x * tanh(softplus(x))
OpImport mish() {
  return floatComposition([](NodeImporter &n, Value x, Type) {
    return bin<MulOp>(n, x, un<TanhOp>(n, un<SoftplusOp>(n, x)));
  });
}

// 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
OpImport gelu() {
  return floatComposition([](NodeImporter &n, Value x, Type f) {
    std::string approximate = n.stringAttr("approximate", "none");
    Value inner;
    if (approximate == "none") {
      inner = un<ErfOp>(n, bin<MulOp>(n, x, scalar(n, M_SQRT1_2, f)));
    } else if (approximate == "tanh") {
      Value cube = bin<MulOp>(n, x, bin<MulOp>(n, x, x));
      Value poly = bin<AddOp>(n, x, bin<MulOp>(n, scalar(n, 0.044715, f), cube));
      inner = un<TanhOp>(n, bin<MulOp>(n, scalar(n, std::sqrt(2.0 / M_PI), f), poly));
    } else {
      throw ImportError("approximate must be 'none' or 'tanh', got '" + approximate + "'");
    }
    Value half = bin<MulOp>(n, scalar(n, 0.5, f), x);
    return bin<MulOp>(n, half, bin<AddOp>(n, scalar(n, 1.0, f), inner));
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

// The normalized axes [from, rank).
std::vector<int64_t> trailingAxes(int64_t from, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = from; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

struct Standardized {
  Value y, mean, invStdDev; // the statistics keep the reduced axes as size-1 dims
};

// (x - mean) / sqrt(var + eps) over `axes`.
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

// Y, and the Mean and InvStdDev outputs.
OpImport layerNorm() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            Value x = n.input(0);
            int64_t rank = typeOf(x).getRank();
            int64_t axis = normalizeAxis(n.intAttr("axis", -1), rank);
            if (n.intAttr("stash_type", 1) != 1)
              throw ImportError("stash_type other than float32 is not supported");
            Standardized s = standardizeWithStatistics(n, x, trailingAxes(axis, rank),
                                                       n.floatAttr("epsilon", 1e-5f));
            return {scaleAndShift(n, s.y, 1, 2), s.mean, s.invStdDev};
          }};
}

// x / sqrt(mean(x^2) + eps) * scale
OpImport rmsNorm() {
  return floatComposition([](NodeImporter &n, Value x, Type f) {
    int64_t rank = typeOf(x).getRank();
    int64_t axis = normalizeAxis(n.intAttr("axis", -1), rank);
    if (n.intAttr("stash_type", 1) != 1)
      throw ImportError("stash_type other than float32 is not supported");
    Value meanSquare = red<ReduceMeanOp>(n, bin<MulOp>(n, x, x), trailingAxes(axis, rank), true);
    Value rms = un<SqrtOp>(n, bin<AddOp>(n, meanSquare, scalar(n, n.floatAttr("epsilon", 1e-5f), f)));
    return scaleAndShift(n, bin<DivOp>(n, x, rms), 1);
  });
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
    int64_t spatial = 1;
    for (size_t d = 2; d < shape.size(); ++d)
      spatial *= shape[d];
    Value grouped = reshape(n, x, {shape[0], groups, shape[1] / groups * spatial});
    Value y = reshape(n, standardize(n, grouped, {2}, n.floatAttr("epsilon", 1e-5f)), shape);
    int64_t perScale = n.version >= 21 ? shape[1] : groups;
    if (n.inputType(1).getNumElements() != perScale || n.inputType(2).getNumElements() != perScale)
      throw ImportError("scale and bias must have " + std::to_string(perScale) + " values");
    auto expand = [&](Value v) {
      if (perScale == shape[1])
        return reshape(n, v, {shape[1], 1});
      // One value per group, repeated over the group's channels.
      Value perGroup = reshape(n, v, {groups, 1, 1});
      Value ones = n.b.create<BroadcastOp>(n.loc(), typeOf(perGroup).clone({groups, shape[1] / groups, 1}), perGroup);
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

Value castTo(NodeImporter &n, Value x, Type element) {
  if (typeOf(x).getElementType() == element)
    return x;
  return n.b.create<CastOp>(n.loc(), typeOf(x).clone(element), x);
}

OpImport castOp() {
  return {{}, [](NodeImporter &n) {
            int64_t to = n.intAttr("to", 0);
            Type element = elementTypeFor(*n.b.getContext(), to);
            if (!element)
              throw ImportError("cast to " + dtypeName(to) + " is not supported");
            return castTo(n, n.input(0), element);
          }};
}

OpImport castLike() {
  return {{}, [](NodeImporter &n) {
            return castTo(n, n.input(0), n.inputType(1).getElementType());
          }};
}

// ---- Comparisons, logic and selection.


template <typename Op> OpImport compare() {
  return {{}, [](NodeImporter &n) { return comparison<Op>(n, n.input(0), n.input(1)); }};
}

// An all-ones constant: true for bool, ~0 for integers.
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
            if (!n.inputType(0).getElementType().isUnsignedInteger())
              throw ImportError("needs unsigned integer inputs");
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
            bool positive = n.intAttr("detect_positive", 1), negative = n.intAttr("detect_negative", 1);
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

// Expand: numpy broadcast of the input and the shape (either may have the larger dims).
OpImport expand() {
  return {{1}, [](NodeImporter &n) -> Value {
            std::vector<int64_t> target = n.constInput(1).asInts();
            for (int64_t d : target)
              if (d < 0)
                throw ImportError("shape " + dimsString(target) + " has a negative dim");
            auto shape = broadcastShapes(n.inputType(0).getShape(), target);
            if (failed(shape))
              throw ImportError("input " + dimsString(n.inputType(0).getShape()) +
                                " does not broadcast to " + dimsString(target));
            auto type = n.inputType(0).clone(*shape);
            if (!checkedTensorBytes(type))
              throw ImportError("result " + dimsString(*shape) + " exceeds dlc's limit of " +
                                kMaxTensorBytesText);
            if (type == n.inputType(0))
              return n.input(0);
            if (type.getNumElements() == n.inputType(0).getNumElements())
              return reshape(n, n.input(0), *shape);
            return n.b.create<BroadcastOp>(n.loc(), type, n.input(0));
          }};
}

// ---- Search, scans and data movement built from slices, concats and broadcasts.

template <typename Op>
Value reduceOrKeep(NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep);

// ArgMax/ArgMin: int64 indices along one axis.
template <typename Op> OpImport argReduce() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto in = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), in.getRank());
            bool keep = n.intAttr("keepdims", 1) != 0;
            SmallVector<int64_t> shape;
            for (int64_t d = 0; d < in.getRank(); ++d)
              if (d != axis || keep)
                shape.push_back(d == axis ? 1 : in.getDimSize(d));
            return n.b.create<Op>(n.loc(), RankedTensorType::get(shape, n.b.getI64Type()),
                                  n.input(0), axis, n.intAttr("select_last_index", 0) != 0);
          }};
}

OpImport cumSum() {
  return {{1}, [](NodeImporter &n) -> Value {
            const ConstTensor &axisValue = n.constInput(1);
            if (axisValue.numElements() != 1)
              throw ImportError("axis must be a scalar");
            int64_t axis = normalizeAxis(axisValue.asInts()[0], n.inputType(0).getRank());
            Type element = n.inputType(0).getElementType();
            if (!element.isF32() && !element.isF64() && !element.isInteger(32) &&
                !element.isInteger(64))
              throw ImportError("needs float, double, int32 or int64 input");
            return n.b.create<CumSumOp>(n.loc(), n.inputType(0), n.input(0), axis,
                                        n.intAttr("exclusive", 0) != 0,
                                        n.intAttr("reverse", 0) != 0);
          }};
}

Value gatherElements(NodeImporter &n, Value data, Value indices, int64_t axis) {
  auto type = typeOf(indices).clone(typeOf(data).getElementType());
  return n.b.create<GatherElementsOp>(n.loc(), type, data, indices, axis);
}

OpImport gatherElementsOp() {
  return {{}, [](NodeImporter &n) -> Value {
            auto data = n.inputType(0), idx = n.inputType(1);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), data.getRank());
            bool fits = data.getRank() == idx.getRank();
            for (int64_t d = 0; fits && d < data.getRank(); ++d)
              fits = d == axis || idx.getDimSize(d) <= data.getDimSize(d);
            if (!fits)
              throw ImportError("indices " + dimsString(idx.getShape()) + " do not fit data " +
                                dimsString(data.getShape()));
            if (const ConstTensor *c = n.constantOrNull(1))
              for (int64_t i : c->asInts())
                if (i < -data.getDimSize(axis) || i >= data.getDimSize(axis))
                  throw ImportError("index " + std::to_string(i) + " is out of range for axis " +
                                    std::to_string(axis) + " of size " +
                                    std::to_string(data.getDimSize(axis)));
            return gatherElements(n, n.input(0), n.input(1), axis);
          }};
}

// `count` elements along `axis` from `start`, `step` apart.
Value sliceAxis(NodeImporter &n, Value v, int64_t axis, int64_t start, int64_t step,
                int64_t count) {
  auto type = typeOf(v);
  SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1),
      shape(type.getShape());
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

// Outputs along `axis`: sizes from the `split` input (opset 13) or attribute, else
// num_outputs (opset 18) parts of ceil(dim / n), else equal parts for each output.
OpImport split() {
  return {{1}, [](NodeImporter &n) -> OpImport::Results {
            auto in = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), in.getRank());
            int64_t dim = in.getDimSize(axis), outputs = n.node.output_size();
            std::vector<int64_t> sizes;
            if (n.version >= 13 && n.hasInput(1))
              sizes = n.constInput(1).asInts();
            else if (n.version < 13)
              sizes = n.intsAttr("split");
            if (sizes.empty()) {
              int64_t parts = n.version >= 18 && n.attr("num_outputs")
                                  ? n.intAttr("num_outputs", 0)
                                  : outputs;
              if (parts <= 0)
                throw ImportError("num_outputs must be positive");
              int64_t each = n.attr("num_outputs") ? (dim + parts - 1) / parts : dim / parts;
              if (!n.attr("num_outputs") && dim % parts)
                throw ImportError("axis of size " + std::to_string(dim) + " does not split into " +
                                  std::to_string(parts) + " equal parts");
              for (int64_t i = 0, left = dim; i < parts; ++i, left -= each)
                sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
            }
            int64_t total = 0;
            for (int64_t size : sizes) {
              if (size < 0)
                throw ImportError("split sizes must be non-negative");
              total += size;
            }
            if (total != dim || (int64_t)sizes.size() != outputs)
              throw ImportError("split sizes " + dimsString(sizes) + " do not cover axis " +
                                std::to_string(axis) + " of size " + std::to_string(dim) +
                                " with " + std::to_string(outputs) + " outputs");
            OpImport::Results results;
            int64_t offset = 0;
            for (int64_t size : sizes) {
              results.push_back(sliceAxis(n, n.input(0), axis, offset, 1, size));
              offset += size;
            }
            return results;
          }};
}

// Tile: x viewed [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], merged.
OpImport tile() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            std::vector<int64_t> repeats = n.constInput(1).asInts();
            if (repeats.size() != shape.size())
              throw ImportError("repeats has " + std::to_string(repeats.size()) +
                                " entries for rank " + std::to_string(shape.size()));
            SmallVector<int64_t> spread, tiled, result;
            for (size_t d = 0; d < shape.size(); ++d) {
              if (repeats[d] < 0)
                throw ImportError("repeats must be non-negative");
              spread.append({1, shape[d]});
              tiled.append({repeats[d], shape[d]});
              auto product = checkedMul(repeats[d], shape[d]);
              if (!product)
                throw ImportError("the result is too large");
              result.push_back(*product);
            }
            if (!checkedTensorBytes(n.inputType(0).clone(result)))
              throw ImportError("result " + dimsString(result) + " exceeds dlc's limit of " +
                                kMaxTensorBytesText);
            Value spreadOut = reshape(n, n.input(0), spread);
            return reshape(n, broadcastTo(n, spreadOut, tiled), result);
          }};
}

// A bool constant of `shape`, true where `keep(index)` holds.
template <typename Keep>
Value boolMask(NodeImporter &n, ArrayRef<int64_t> shape, Keep keep) {
  auto type = RankedTensorType::get(shape, n.b.getI1Type());
  std::vector<char> bytes(type.getNumElements());
  for (int64_t i = 0; i < (int64_t)bytes.size(); ++i)
    bytes[i] = keep(i);
  return ConstantOp::fromBytes(n.b, n.loc(), type, bytes, "mask");
}

// Trilu: the elements on and above (upper) or below the k-th diagonal; others 0.
OpImport trilu() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            if (in.getRank() < 2)
              throw ImportError("input must have rank >= 2");
            int64_t k = 0;
            if (n.hasInput(1)) {
              if (n.constInput(1).numElements() != 1)
                throw ImportError("k must be a scalar");
              k = n.constInput(1).asInts()[0];
            }
            bool upper = n.intAttr("upper", 1) != 0;
            int64_t rows = in.getDimSize(in.getRank() - 2), cols = in.getDimSize(in.getRank() - 1);
            Value mask = boolMask(n, {rows, cols}, [&](int64_t i) {
              int64_t diagonal = i % cols - i / cols; // column minus row
              return upper ? diagonal >= k : diagonal <= k;
            });
            Value zero = scalar(n, 0, in.getElementType());
            return n.b.create<WhereOp>(n.loc(), in, mask, n.input(0), zero);
          }};
}

// A rank-0 constant holding ConstTensor `c`'s single value, converted to `element`.
Value scalarOf(NodeImporter &n, const ConstTensor &c, Type element) {
  if (c.numElements() != 1)
    throw ImportError("the value must be a single element");
  return scalar(n, c.asDoubles()[0], element);
}

// Pad, by axis: negative pads slice; constant pads concat filled blocks; edge broadcasts the
// border element; reflect and wrap concat slices of the input.
OpImport pad() {
  return {{1, 2, 3}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            int64_t rank = in.getRank();
            std::string mode = n.stringAttr("mode", "constant");
            std::vector<int64_t> pads =
                n.version >= 11 ? n.constInput(1).asInts()
                                : n.intsAttr(n.version < 2 ? "paddings" : "pads");
            std::vector<int64_t> axes;
            if (n.version >= 18 && n.hasInput(3)) {
              for (int64_t a : n.constInput(3).asInts())
                axes.push_back(normalizeAxis(a, rank));
            } else {
              axes = trailingAxes(0, rank);
            }
            if (pads.size() != 2 * axes.size())
              throw ImportError("pads has " + std::to_string(pads.size()) + " entries for " +
                                std::to_string(axes.size()) + " axes");
            Value fill;
            if (mode == "constant") {
              if (n.version >= 11 && n.hasInput(2))
                fill = scalarOf(n, n.constInput(2), in.getElementType());
              else
                fill = scalar(n, n.version < 11 ? n.floatAttr("value", 0.0f) : 0.0,
                              in.getElementType());
            } else if (mode != "reflect" && mode != "edge" && mode != "wrap") {
              throw ImportError("unknown mode '" + mode + "'");
            }
            Value x = n.input(0);
            for (size_t i = 0; i < axes.size(); ++i) {
              int64_t axis = axes[i], before = pads[i], after = pads[i + axes.size()];
              int64_t dim = typeOf(x).getDimSize(axis);
              if (before < 0 || after < 0) { // crop first
                int64_t start = std::max<int64_t>(0, -before), end = dim - std::max<int64_t>(0, -after);
                if (end < start)
                  throw ImportError("negative pads remove more than axis " + std::to_string(axis) + " holds");
                x = sliceAxis(n, x, axis, start, 1, end - start);
                dim = end - start;
                before = std::max<int64_t>(0, before);
                after = std::max<int64_t>(0, after);
              }
              if (!before && !after)
                continue;
              if (mode != "constant" && dim == 0)
                throw ImportError("cannot pad an empty axis in mode '" + mode + "'");
              if ((mode == "reflect" && (before >= dim || after >= dim)) ||
                  (mode == "wrap" && (before > dim || after > dim)))
                throw ImportError("pads larger than axis " + std::to_string(axis) + " of size " +
                                  std::to_string(dim) + " in mode '" + mode + "'");
              auto block = [&](int64_t size, bool atStart) -> Value {
                SmallVector<int64_t> shape(typeOf(x).getShape());
                shape[axis] = size;
                if (mode == "constant")
                  return broadcastTo(n, fill, shape);
                if (mode == "edge")
                  return broadcastTo(n, sliceAxis(n, x, axis, atStart ? 0 : dim - 1, 1, 1), shape);
                if (mode == "reflect") // mirrored, without the border element
                  return atStart ? sliceAxis(n, x, axis, size, -1, size)
                                 : sliceAxis(n, x, axis, dim - 2, -1, size);
                return atStart ? sliceAxis(n, x, axis, dim - size, 1, size) // wrap
                               : sliceAxis(n, x, axis, 0, 1, size);
              };
              SmallVector<Value> parts;
              if (before)
                parts.push_back(block(before, true));
              parts.push_back(x);
              if (after)
                parts.push_back(block(after, false));
              x = concatAxis(n, parts, axis);
            }
            return x;
          }};
}

Value transposeValue(NodeImporter &n, Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(typeOf(v).getDimSize(p));
  return n.b.create<TransposeOp>(n.loc(), typeOf(v).clone(shape), v, perm);
}

// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape.
OpImport depthToSpace(bool toSpace) {
  return {{}, [toSpace](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t b = n.intAttr("blocksize", 0);
            if (shape.size() != 4 || b <= 0)
              throw ImportError("needs a 4-D input and a positive blocksize");
            int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
            if (toSpace) {
              if (C % (b * b))
                throw ImportError("channels " + std::to_string(C) + " are not divisible by blocksize^2");
              bool crd = n.stringAttr("mode", "DCR") == "CRD";
              Value v = reshape(n, n.input(0), crd ? SmallVector<int64_t>{N, C / (b * b), b, b, H, W}
                                                   : SmallVector<int64_t>{N, b, b, C / (b * b), H, W});
              v = transposeValue(n, v, crd ? ArrayRef<int64_t>{0, 1, 4, 2, 5, 3}
                                           : ArrayRef<int64_t>{0, 3, 4, 1, 5, 2});
              return reshape(n, v, {N, C / (b * b), H * b, W * b});
            }
            if (H % b || W % b)
              throw ImportError("spatial dims are not divisible by blocksize");
            Value v = reshape(n, n.input(0), {N, C, H / b, b, W / b, b});
            v = transposeValue(n, v, {0, 3, 5, 1, 2, 4});
            return reshape(n, v, {N, C * b * b, H / b, W / b});
          }};
}

// int64 class indices 0..depth-1 laid along `axis` of a rank-`rank` tensor.
Value classIndices(NodeImporter &n, int64_t depth, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = depth;
  auto type = RankedTensorType::get(shape, n.b.getI64Type());
  std::vector<char> bytes(depth * 8);
  for (int64_t i = 0; i < depth; ++i)
    std::memcpy(&bytes[i * 8], &i, 8);
  return ConstantOp::fromBytes(n.b, n.loc(), type, bytes, "classes");
}

Value insertUnitDim(NodeImporter &n, Value v, int64_t axis) {
  SmallVector<int64_t> shape(typeOf(v).getShape());
  shape.insert(shape.begin() + axis, 1);
  return reshape(n, v, shape);
}

// OneHot: (indices with a unit dim at axis) == classes, then on or off values.
OpImport oneHot() {
  return {{1}, [](NodeImporter &n) -> Value {
            const ConstTensor &depthValue = n.constInput(1);
            if (depthValue.numElements() != 1)
              throw ImportError("depth must be a scalar");
            double depthValueAsDouble = depthValue.asDoubles()[0];
            if (!(depthValueAsDouble >= 1 && depthValueAsDouble <= double(kMaxTensorBytes)))
              throw ImportError("depth must be positive and at most 2^40");
            int64_t depth = int64_t(depthValueAsDouble);
            int64_t rank = n.inputType(0).getRank() + 1;
            int64_t axis = normalizeAxis(n.intAttr("axis", -1), rank);
            Value idx = castTo(n, n.input(0), n.b.getI64Type());
            Value depthScalar = intScalar(n, depth, n.b.getI64Type());
            Value negative = comparison<LessOp>(n, idx, intScalar(n, 0, n.b.getI64Type()));
            Value wrapped = bin<AddOp>(n, idx, depthScalar);
            idx = n.b.create<WhereOp>(n.loc(), typeOf(idx), negative, wrapped, idx);
            Value hot = comparison<EqualOp>(n, insertUnitDim(n, idx, axis),
                                            classIndices(n, depth, axis, rank));
            if (n.inputType(2).getNumElements() != 2)
              throw ImportError("values must hold [off, on]");
            Value values = reshape(n, n.input(2), {2});
            Value off = reshape(n, sliceAxis(n, values, 0, 0, 1, 1), {});
            Value on = reshape(n, sliceAxis(n, values, 0, 1, 1, 1), {});
            return n.b.create<WhereOp>(n.loc(), typeOf(hot).clone(typeOf(on).getElementType()),
                                       hot, on, off);
          }};
}

// EyeLike: ones on the k-th diagonal of the input's 2-D shape, in `dtype` (or the input's).
OpImport eyeLike() {
  return {{}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            if (in.getRank() != 2)
              throw ImportError("input must be 2-D");
            Type element = in.getElementType();
            if (n.attr("dtype")) {
              element = elementTypeFor(*n.b.getContext(), n.intAttr("dtype", 0));
              if (!element)
                throw ImportError("dtype " + dtypeName(n.intAttr("dtype", 0)) + " is not supported");
            }
            int64_t k = n.intAttr("k", 0), cols = in.getDimSize(1);
            Value mask = boolMask(n, in.getShape(), [&](int64_t i) { return i % cols - i / cols == k; });
            return castTo(n, mask, element);
          }};
}

// Hardmax: 1 at the first maximum along the axis, else 0 (flattened from axis before 13).
OpImport hardmax() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = normalizeAxis(n.intAttr("axis", n.version < 13 ? 1 : -1), rank);
            Value x = n.input(0);
            if (n.version < 13) {
              int64_t outer = 1, inner = 1;
              for (int64_t i = 0; i < rank; ++i)
                (i < axis ? outer : inner) *= shape[i];
              x = reshape(n, x, {outer, inner});
              axis = 1;
            }
            auto xType = typeOf(x);
            SmallVector<int64_t> kept(xType.getShape());
            kept[axis] = 1;
            Value best = n.b.create<ArgMaxOp>(
                n.loc(), RankedTensorType::get(kept, n.b.getI64Type()), x, axis, false);
            Value hot = comparison<EqualOp>(n, best, classIndices(n, xType.getDimSize(axis), axis, xType.getRank()));
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
    Value ignored = comparison<EqualOp>(
        n, t, intScalar(n, n.intAttr("ignore_index", 0), n.b.getI64Type()));
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
  return floatComposition([](NodeImporter &n, Value x, Type f) -> Value {
    Value above = comparison<GreaterOp>(n, x, scalar(n, n.floatAttr("alpha", 1.0f), f));
    return n.b.create<WhereOp>(n.loc(), typeOf(x), above, x, scalar(n, 0.0, f));
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
            if (!in.getElementType().isF32())
              requireFloat32(n);
            return build(n, n.input(0), ArrayRef<int64_t>(axes), n.intAttr("keepdims", 1) != 0);
          }};
}

template <typename Op> Value reduceOrKeep(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                                          bool keep) {
  return axes.empty() ? x : red<Op>(n, x, axes, keep);
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

OpImport batchNorm() {
  return {{}, [](NodeImporter &n) -> Value {
            if (n.version < 9 && n.intAttr("spatial", 1) != 1)
              throw ImportError("spatial=0 (statistics per element) is not supported");
            auto bn = n.b.create<BatchNormOp>(
                n.loc(), n.inputType(0), n.input(0), n.input(1), n.input(2), n.input(3),
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
                       return n.b.create<LeakyReluOp>(n.loc(), n.inputType(0), n.input(0),
                                                      n.b.getF32FloatAttr(n.floatAttr("alpha", 0.01f)));
                     }}},
      {"Clip", clip()},
      {"Elu", elu()},
      {"Celu", celu()},
      {"Selu", selu()},
      {"HardSigmoid", hardSigmoid()},
      {"Mish", mish()},
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
      {"Expand", expand()},
      {"Shrink", shrink()},
      {"ThresholdedRelu", thresholdedRelu()},
      {"ReduceProd", reduce<ReduceProdOp>()},
      {"ArgMax", argReduce<ArgMaxOp>()},
      {"ArgMin", argReduce<ArgMinOp>()},
      {"CumSum", cumSum()},
      {"GatherElements", gatherElementsOp()},
      {"Split", split()},
      {"Tile", tile()},
      {"Trilu", trilu()},
      {"Pad", pad()},
      {"DepthToSpace", depthToSpace(true)},
      {"SpaceToDepth", depthToSpace(false)},
      {"OneHot", oneHot()},
      {"EyeLike", eyeLike()},
      {"Hardmax", hardmax()},
      {"NegativeLogLikelihoodLoss", nllLossOp()},
      {"SoftmaxCrossEntropyLoss", softmaxCrossEntropy()},
      {"CastLike", castLike()},
      {"Mean", variadicSum(true)},
      {"LayerNormalization", layerNorm()},
      {"RMSNormalization", rmsNorm()},
      {"InstanceNormalization", instanceNorm()},
      {"GroupNormalization", groupNorm()},
      {"MeanVarianceNormalization", meanVarianceNorm()},
      {"LpNormalization", lpNorm()},
      {"ReduceL1", reduceL1()},
      {"ReduceL2", reduceL2()},
      {"ReduceSumSquare", reduceSumSquare()},
      {"ReduceLogSum", reduceLogSum()},
      {"ReduceLogSumExp", reduceLogSumExp()},
      {"Add", binary<AddOp>().withLegacyVersions()},
      {"Sub", binary<SubOp>().withLegacyVersions()},
      {"Mul", binary<MulOp>().withLegacyVersions()},
      {"Div", binary<DivOp>().withLegacyVersions()},
      {"Pow", pow().withLegacyVersions()},
      {"Max", binary<MaxOp>()},
      {"Min", binary<MinOp>()},
      {"MatMul", matmul()},
      {"Gemm", gemm().withLegacyVersions()},
      {"Conv", conv()},
      {"ConvTranspose", convTranspose()},
      {"BatchNormalization", batchNorm().withLegacyVersions()},
      {"Dropout", dropout()},
      {"MaxPool", pool<MaxPoolOp>()},
      {"AveragePool", pool<AvgPoolOp>().withLegacyVersions()},
      {"GlobalAveragePool", {{}, [](NodeImporter &n) -> Value {
                               auto x = n.inputType(0);
                               if (x.getRank() < 3)
                                 throw ImportError("input must have rank >= 3 (N, C, spatial)");
                               SmallVector<int64_t> shape(x.getRank(), 1);
                               shape[0] = x.getDimSize(0);
                               shape[1] = x.getDimSize(1);
                               return n.b.create<GlobalAvgPoolOp>(n.loc(), x.clone(shape),
                                                                  n.input(0));
                             }}},
      {"Softmax", softmax(false)},
      {"LogSoftmax", softmax(true)},
      {"ReduceSum", reduce<ReduceSumOp>()},
      {"ReduceMean", reduce<ReduceMeanOp>()},
      {"ReduceMax", reduce<ReduceMaxOp>()},
      {"ReduceMin", reduce<ReduceMinOp>()},
      {"Reshape", reshapeOp()},
      {"Flatten", flatten()},
      {"Squeeze", squeezeLike<true>()},
      {"Unsqueeze", squeezeLike<false>()},
      {"Identity", identity()},
      {"Transpose", transpose()},
      {"Concat", concat()},
      {"Gather", gather()},
      {"Slice", slice()},
      {"Constant", notFolded()},
      {"Shape", notFolded()},
      {"Size", notFolded()},
      {"ConstantOfShape", notFolded()},
      {"Range", notFolded()},
  };
  return table;
}

} // namespace dlc
