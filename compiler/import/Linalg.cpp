// How ONNX matrix products, convolutions, pooling and batch normalization become dlc ops.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace mlir;

namespace dlc {
namespace {

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

Window resolveWindow(NodeImporter &n, ArrayRef<int64_t> inputShape, std::vector<int64_t> kernel) {
  size_t spatial = inputShape.size() - 2;
  if (kernel.size() != spatial)
    throw ImportError("kernel_shape needs " + std::to_string(spatial) + " entries");
  Window w{kernel, n.intsAttr("strides", std::vector<int64_t>(spatial, 1)),
           n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0)),
           n.intsAttr("dilations", std::vector<int64_t>(spatial, 1))};
  if (w.strides.size() != spatial || w.dilations.size() != spatial || w.pads.size() != 2 * spatial)
    throw ImportError("strides/dilations/pads do not match the input's spatial rank");
  std::vector<int64_t> window(spatial); // dilated kernel extent
  for (size_t i = 0; i < spatial; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1)
      throw ImportError("kernel, strides and dilations must be positive");
    auto dilated = checkedMul(kernel[i] - 1, w.dilations[i]);
    if (!dilated || *dilated >= kMaxTensorBytes)
      throw ImportError("kernel and dilations are too large on spatial axis " + std::to_string(i));
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

} // namespace

Value convOf(NodeImporter &n, Value x, Value weight, Value bias) {
  auto xs = typeOf(x).getShape(), wShape = typeOf(weight).getShape();
  if (wShape.size() != xs.size())
    throw ImportError("the weight has rank " + std::to_string(wShape.size()) +
                      " but the input has rank " + std::to_string(xs.size()) +
                      "; they must be equal");
  if (xs.size() < 3 || xs.size() > 5)
    throw ImportError("only 1-D to 3-D convolutions");
  Window w = resolveWindow(n, xs, n.intsAttr("kernel_shape", {wShape.begin() + 2, wShape.end()}));
  auto type = windowResultType(typeOf(x), wShape[0], w, false);
  return n.b.create<ConvOp>(n.loc(), type, x, weight, bias, Value(), Value(), w.strides, w.pads,
                            w.dilations, n.intAttr("group", 1));
}

namespace {

OpImport conv() {
  return {{}, [](NodeImporter &n) {
            return convOf(n, n.input(0), n.input(1), n.hasInput(2) ? n.input(2) : Value());
          }};
}

// CausalConvWithState: a depthwise 1-D convolution over [past_state (zeros if absent), input]
// along the length, optionally followed by SiLU; the new state is that sequence's last k - 1
// positions.
OpImport causalConvWithState() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            requireFloat32(n, 1);
            auto x = n.inputType(0).getShape(), w = n.inputType(1).getShape();
            if (x.size() != 3 || w.size() != 3 || w[0] != x[1] || w[1] != 1 || w[2] < 1)
              throw ImportError("needs input [batch, channels, length] and weight "
                                "[channels, 1, k]");
            std::string activation = n.stringAttr("activation", "none");
            if (activation != "none" && activation != "silu" && activation != "swish")
              throw ImportError("unknown activation '" + activation + "'");
            int64_t carried = w[2] - 1;
            SmallVector<int64_t> stateShape{x[0], x[1], carried};
            Value past;
            if (n.hasInput(3)) {
              requireFloat32(n, 3);
              if (n.inputType(3).getShape() != ArrayRef<int64_t>(stateShape))
                throw ImportError("past_state must be " + dimsString(stateShape));
              past = n.input(3);
            } else {
              past = broadcastTo(n, scalar(n, 0.0, n.b.getF32Type()), stateShape);
            }
            Value padded = carried ? concatAxis(n, {past, n.input(0)}, 2) : n.input(0);
            Value bias = n.hasInput(2) ? n.input(2) : Value();
            Value y = n.b.create<ConvOp>(n.loc(), n.inputType(0), padded, n.input(1), bias,
                                         Value(), Value(), ArrayRef<int64_t>{1},
                                         ArrayRef<int64_t>{0, 0}, ArrayRef<int64_t>{1}, x[1]);
            if (activation != "none")
              y = bin<MulOp>(n, y, un<SigmoidOp>(n, y));
            int64_t length = typeOf(padded).getDimSize(2);
            return {y, sliceAxis(n, padded, 2, length - carried, 1, carried)};
          }};
}

// ConvTranspose is the gradient of a convolution with respect to its input: its input plays the
// convolution's output gradient, its weight [C_in, C_out / group, k...] the convolution's.
OpImport convTranspose() {
  return {
      {}, [](NodeImporter &n) -> Value {
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
          throw ImportError("input channels " + std::to_string(x[1]) + " do not match the weight " +
                            dimsString(wShape) + " and group " + std::to_string(group));
        auto ones = std::vector<int64_t>(spatial, 1);
        std::vector<int64_t> kernel =
            n.intsAttr("kernel_shape", {wShape.begin() + 2, wShape.end()});
        std::vector<int64_t> strides = n.intsAttr("strides", ones),
                             dilations = n.intsAttr("dilations", ones),
                             outputPadding =
                                 n.intsAttr("output_padding", std::vector<int64_t>(spatial, 0)),
                             pads = n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0)),
                             outputShape = n.intsAttr("output_shape");
        if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
            outputPadding.size() != spatial || pads.size() != 2 * spatial)
          throw ImportError("kernel_shape, strides, dilations, output_padding or pads do not "
                            "match the input's spatial rank");
        // output_shape may list N and C too: its last `spatial` entries are the spatial dims.
        if (!outputShape.empty() && outputShape.size() < spatial)
          throw ImportError("output_shape " + dimsString(outputShape) + " has fewer entries than "
                            "the input's " + std::to_string(spatial) + " spatial dims");
        if (!outputShape.empty())
          outputShape.erase(outputShape.begin(), outputShape.end() - spatial);
        std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
        SmallVector<int64_t> shape{x[0], wShape[1] * group};
        for (size_t i = 0; i < spatial; ++i) {
          if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1 || outputPadding[i] < 0 ||
              kernel[i] != wShape[i + 2])
            throw ImportError(
                "kernel, strides and dilations must be positive and match the weight");
          // Attributes come from the file: every product and sum is checked.
          auto dilated = checkedMul(kernel[i] - 1, dilations[i]);
          auto strided = checkedMul(strides[i], std::max<int64_t>(0, x[i + 2] - 1));
          auto sum = dilated && strided ? checkedAdd(*dilated, *strided) : std::nullopt;
          sum = sum ? checkedAdd(*sum, outputPadding[i]) : std::nullopt;
          if (!sum || *sum >= kMaxTensorBytes)
            throw ImportError("the output is too large on spatial axis " + std::to_string(i));
          int64_t full = *sum + 1;
          bool samePad = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
          if (!outputShape.empty() || samePad) {
            auto target = outputShape.empty() ? checkedMul(x[i + 2], strides[i])
                                              : std::optional<int64_t>(outputShape[i]);
            if (!target || *target < 1 || *target >= kMaxTensorBytes)
              throw ImportError("output_shape is out of range on spatial axis " +
                                std::to_string(i));
            // Split as ONNX's reference does (floor halves); a negative total grows the
            // output at the end, like output_padding.
            int64_t total = full - *target;
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
          if (pads[i] >= kMaxTensorBytes || pads[i + spatial] >= kMaxTensorBytes)
            throw ImportError("pads are too large on spatial axis " + std::to_string(i));
          int64_t out = full - pads[i] - pads[i + spatial];
          if (out < 1)
            throw ImportError("pads leave no output on spatial axis " + std::to_string(i));
          shape.push_back(out);
        }
        auto type = n.inputType(0).clone(shape);
        Value y = n.b.create<ConvGradInputOp>(n.loc(), type, n.input(0), n.input(1), strides, pads,
                                              dilations, group);
        if (n.hasInput(2)) {
          SmallVector<int64_t> perChannel(shape.size() - 1, 1);
          perChannel[0] = shape[1];
          y = bin<AddOp>(n, y, reshape(n, n.input(2), perChannel));
        }
        return y;
      }};
}

template <typename Op> OpImport pool() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            auto x = n.inputType(0).getShape();
            if (x.size() < 3 || x.size() > 5)
              throw ImportError("only 1-D to 3-D pooling");
            Window w = resolveWindow(n, x, n.intsAttr("kernel_shape"));
            bool ceil = n.intAttr("ceil_mode", 0) != 0;
            auto type = windowResultType(n.inputType(0), x[1], w, ceil);
            Type element = n.inputType(0).getElementType();
            if constexpr (std::is_same_v<Op, AvgPoolOp>) {
              return {n.b.create<Op>(n.loc(), type, n.input(0), w.kernel, w.strides, w.pads,
                                     w.dilations, ceil, n.intAttr("count_include_pad", 0) != 0)};
            } else {
              // 8-bit integers take their max in float32, exactly.
              bool narrow = element.isInteger(8);
              Value in = narrow ? castTo(n, n.input(0), n.b.getF32Type()) : n.input(0);
              Value y = n.b.create<Op>(n.loc(), typeOf(in).clone(type.getShape()), in, w.kernel,
                                       w.strides, w.pads, w.dilations, ceil);
              OpImport::Results results{narrow ? castTo(n, y, element) : y};
              // The second output: where each maximum came from.
              if (n.node.output_size() > 1 && !n.node.output(1).empty()) {
                int64_t order = n.intAttr("storage_order", 0);
                if (order != 0 && order != 1)
                  throw ImportError("storage_order must be 0 or 1, got " + std::to_string(order));
                results.push_back(n.b.create<MaxPoolIndicesOp>(
                    n.loc(), type.clone(n.b.getI64Type()), in, w.kernel, w.strides, w.pads,
                    w.dilations, ceil, order == 1));
              }
              return results;
            }
          }};
}

OpImport matmul() {
  return {{}, [](NodeImporter &n) { return matmulOf(n, n.input(0), n.input(1)); }};
}

OpImport gemm() { return {{}, gemmOf}; }

// (sum over each window of |x|^p)^(1/p): an average pool counting the padding, times the
// window's volume.
OpImport lpPool() {
  return floatComposition([](NodeImporter &n, Value x, Type f) -> Value {
    auto shape = typeOf(x).getShape();
    if (shape.size() < 3 || shape.size() > 5)
      throw ImportError("only 1-D to 3-D pooling");
    Window w = resolveWindow(n, shape, n.intsAttr("kernel_shape"));
    bool ceil = n.intAttr("ceil_mode", 0) != 0;
    double p = n.version < 2 ? n.floatAttr("p", 2.0f) : n.intAttr("p", 2);
    if (!(p > 0))
      throw ImportError("p must be positive");
    Value powered = p == 2 ? bin<MulOp>(n, x, x) : bin<PowOp>(n, un<AbsOp>(n, x), scalar(n, p, f));
    auto type = windowResultType(typeOf(x), shape[1], w, ceil);
    Value mean = n.b.create<AvgPoolOp>(n.loc(), type, powered, w.kernel, w.strides, w.pads,
                                       w.dilations, ceil, true);
    Value sum = bin<MulOp>(n, mean, scalar(n, double(dimsProduct(w.kernel)), f));
    return p == 2 ? un<SqrtOp>(n, sum) : bin<PowOp>(n, sum, scalar(n, 1.0 / p, f));
  });
}

// MaxUnpool: X's values written at their MaxPool indices (flat over the whole output) into
// zeros, as a ScatterElements along the flattened output.
OpImport maxUnpool() {
  return {{2}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto x = n.inputType(0).getShape();
            if (x.size() < 3 || x.size() > 5 || n.inputType(1).getShape() != x)
              throw ImportError("needs X [N, C, spatial...] and indices of the same shape");
            // The indices address the shape the window attributes imply; a given
            // output_shape pads (or crops) that result at the end of each spatial dim, as the
            // reference does.
            SmallVector<int64_t> inferred(x.begin(), x.begin() + 2);
            Window w = resolveWindow(n, x, n.intsAttr("kernel_shape"));
            size_t spatial = x.size() - 2;
            for (size_t d = 0; d < spatial; ++d) {
              // Strides, kernel and pads come from the file: every step is checked.
              auto size = checkedMul(x[d + 2] - 1, w.strides[d]);
              size = size ? checkedAdd(*size, w.kernel[d]) : std::nullopt;
              auto pads = checkedAdd(w.pads[d], w.pads[d + spatial]);
              if (!size || !pads)
                throw ImportError("the output size overflows on spatial axis " +
                                  std::to_string(d));
              if (*size - *pads < 1)
                throw ImportError("the output would be empty");
              inferred.push_back(*size - *pads);
            }
            int64_t total = dimsProduct(inferred), count = dimsProduct(x);
            if (total < 1)
              throw ImportError("the output would be empty");
            Type f = n.b.getF32Type();
            Value zeros = broadcastTo(n, scalar(n, 0.0, f), {total});
            Value y = reshape(n,
                              n.b.create<ScatterElementsOp>(
                                  n.loc(), typeOf(zeros), zeros, reshape(n, n.input(1), {count}),
                                  reshape(n, n.input(0), {count}), 0, "none"),
                              inferred);
            if (!n.hasInput(2))
              return y;
            std::vector<int64_t> given = n.constInput(2).asInts();
            if (given.size() != x.size() || given[0] != x[0] || given[1] != x[1])
              throw ImportError("output_shape must be [N, C, spatial...] of the input's N, C");
            for (size_t d = 2; d < given.size(); ++d) {
              if (given[d] < 1)
                throw ImportError("output_shape must be positive");
              int64_t have = typeOf(y).getDimSize(d);
              if (given[d] < have) {
                y = sliceAxis(n, y, d, 0, 1, given[d]);
              } else if (given[d] > have) {
                SmallVector<int64_t> padShape(typeOf(y).getShape());
                padShape[d] = given[d] - have;
                y = concatAxis(n, {y, broadcastTo(n, scalar(n, 0.0, f), padShape)}, d);
              }
            }
            return y;
          }};
}

// LRN: x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta. The sum
// over channels is an average pool (padding counted) of x^2 seen as [N, 1, C, rest].
OpImport lrn() {
  return floatComposition([](NodeImporter &n, Value x, Type f) -> Value {
    auto shape = typeOf(x).getShape();
    int64_t size = n.intAttr("size", 0);
    if (shape.size() < 3 || size < 1)
      throw ImportError("needs an input of rank >= 3 and a positive size");
    int64_t rest = dimsProduct(shape.drop_front(2));
    Value squares = reshape(n, bin<MulOp>(n, x, x), {shape[0], 1, shape[1], rest});
    SmallVector<int64_t> kernel{size, 1}, ones{1, 1}, pads{(size - 1) / 2, 0, size / 2, 0};
    Value mean = n.b.create<AvgPoolOp>(n.loc(), typeOf(squares), squares, kernel, ones, pads,
                                       ones, false, true);
    Value scaled =
        bin<MulOp>(n, reshape(n, mean, shape), scalar(n, n.floatAttr("alpha", 1e-4f), f));
    Value base = bin<AddOp>(n, scaled, scalar(n, n.floatAttr("bias", 1.0f), f));
    return bin<DivOp>(n, x, bin<PowOp>(n, base, scalar(n, n.floatAttr("beta", 0.75f), f)));
  });
}

// ---- Einsum: each term's letters name its dims; operands contract pairwise into MatMuls.

struct Labeled {
  Value value;
  std::string letters; // one per dim
};

// Sums the dims whose letters `keep` lacks.
Labeled sumAway(NodeImporter &n, Labeled x, const std::string &keep) {
  std::vector<int64_t> axes;
  std::string kept;
  for (size_t d = 0; d < x.letters.size(); ++d)
    (keep.find(x.letters[d]) == std::string::npos ? axes.push_back(int64_t(d))
                                                  : kept.push_back(x.letters[d]));
  return {reduceOrKeep<ReduceSumOp>(n, x.value, axes, false), kept};
}

// `x` with its dims in the order of `order` (a permutation of its letters).
Value arrange(NodeImporter &n, const Labeled &x, const std::string &order) {
  SmallVector<int64_t> perm;
  for (char c : order)
    perm.push_back(x.letters.find(c));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == (int64_t)i;
  return identity ? x.value : transposeValue(n, x.value, perm);
}

int64_t sizeOf(const Labeled &x, char c) { return typeOf(x.value).getDimSize(x.letters.find(c)); }

// A letter repeated within a term takes the diagonal of its dims: the two dims move last,
// merge into one of k * k elements, and every (k + 1)-th element of it remains.
Labeled diagonals(NodeImporter &n, Labeled x) {
  for (;;) {
    size_t d = 0, again = std::string::npos;
    for (; d < x.letters.size() && again == std::string::npos; ++d)
      again = x.letters.find(x.letters[d], d + 1);
    if (again == std::string::npos)
      return x;
    --d;
    auto shape = typeOf(x.value).getShape();
    if (shape[d] != shape[again])
      throw ImportError(std::string("index '") + x.letters[d] + "' is repeated over dims of " +
                        "sizes " + std::to_string(shape[d]) + " and " +
                        std::to_string(shape[again]));
    int64_t k = shape[d];
    SmallVector<int64_t> perm, merged;
    std::string letters;
    for (size_t e = 0; e < x.letters.size(); ++e)
      if (e != d && e != again) {
        perm.push_back(e);
        merged.push_back(shape[e]);
        letters.push_back(x.letters[e]);
      }
    perm.append({int64_t(d), int64_t(again)});
    merged.push_back(dimsProduct({k, k}));
    Value flat = reshape(n, transposeValue(n, x.value, perm), merged);
    x = {sliceAxis(n, flat, merged.size() - 1, 0, k + 1, k), letters + x.letters[d]};
  }
}

// The product of a and b keeping the letters in `keep`: shared kept letters are batch dims,
// shared others are contracted, the rest are free (summed first when not kept).
Labeled contract(NodeImporter &n, Labeled a, Labeled b, const std::string &keep) {
  a = sumAway(n, a, keep + b.letters);
  b = sumAway(n, b, keep + a.letters);
  std::string batch, contracted, freeA, freeB;
  for (char c : a.letters) {
    bool shared = b.letters.find(c) != std::string::npos;
    bool kept = keep.find(c) != std::string::npos;
    (shared ? (kept ? batch : contracted) : freeA).push_back(c);
    if (shared && sizeOf(a, c) != sizeOf(b, c))
      throw ImportError(std::string("dim '") + c + "' has sizes " + std::to_string(sizeOf(a, c)) +
                        " and " + std::to_string(sizeOf(b, c)));
  }
  for (char c : b.letters)
    if (a.letters.find(c) == std::string::npos)
      freeB.push_back(c);
  auto product = [&](const Labeled &x, const std::string &letters) {
    SmallVector<int64_t> dims;
    for (char c : letters)
      dims.push_back(sizeOf(x, c));
    return dimsProduct(dims);
  };
  int64_t nb = product(a, batch), nc = product(a, contracted), na = product(a, freeA),
          nf = product(b, freeB);
  Value lhs = reshape(n, arrange(n, a, batch + freeA + contracted), {nb, na, nc});
  Value rhs = reshape(n, arrange(n, b, batch + contracted + freeB), {nb, nc, nf});
  Value result = n.b.create<MatMulOp>(n.loc(), typeOf(lhs).clone({nb, na, nf}), lhs, rhs);
  SmallVector<int64_t> shape;
  for (char c : batch + freeA)
    shape.push_back(sizeOf(a, c));
  for (char c : freeB)
    shape.push_back(sizeOf(b, c));
  return {reshape(n, result, shape), batch + freeA + freeB};
}

OpImport einsum() {
  return {{}, [](NodeImporter &n) -> Value {
            std::string equation;
            for (char c : n.stringAttr("equation", ""))
              if (c != ' ')
                equation.push_back(c);
            size_t arrow = equation.find("->");
            std::string lhs = equation.substr(0, arrow);
            std::vector<std::string> terms;
            for (size_t start = 0;;) {
              size_t comma = lhs.find(',', start);
              terms.push_back(lhs.substr(start, comma - start));
              if (comma == std::string::npos)
                break;
              start = comma + 1;
            }
            if ((int)terms.size() != n.node.input_size())
              throw ImportError("the equation has " + std::to_string(terms.size()) + " terms for " +
                                std::to_string(n.node.input_size()) + " inputs");
            // "..." stands for the leading (broadcast) dims, named by digits right-aligned.
            std::vector<Labeled> operands;
            size_t ellipsisDims = 0;
            for (size_t i = 0; i < terms.size(); ++i) {
              std::string t = terms[i];
              size_t dots = t.find("...");
              int64_t rank = n.inputType(i).getRank();
              int64_t named = int64_t(t.size()) - (dots == std::string::npos ? 0 : 3);
              if (dots == std::string::npos ? named != rank : named > rank)
                throw ImportError("term '" + t + "' does not match input #" + std::to_string(i) +
                                  " of rank " + std::to_string(rank));
              if (dots != std::string::npos)
                ellipsisDims = std::max<size_t>(ellipsisDims, rank - named);
              operands.push_back({castTo(n, n.input(i), n.b.getF32Type()), t});
            }
            if (ellipsisDims > 10)
              throw ImportError("'...' stands for more than 10 dims");
            auto expand = [&](std::string t, size_t count) {
              size_t dots = t.find("...");
              if (dots == std::string::npos)
                return t;
              std::string digits;
              for (size_t k = ellipsisDims - count; k < ellipsisDims; ++k)
                digits.push_back(char('0' + k));
              return t.substr(0, dots) + digits + t.substr(dots + 3);
            };
            for (auto &op : operands) {
              size_t named =
                  op.letters.size() - (op.letters.find("...") == std::string::npos ? 0 : 3);
              op.letters = expand(op.letters, typeOf(op.value).getRank() - named);
              for (char c : op.letters)
                if (!std::isalnum(static_cast<unsigned char>(c)))
                  throw ImportError(std::string("unexpected '") + c + "' in the equation");
              op = diagonals(n, op);
            }
            std::string out;
            if (arrow != std::string::npos) {
              out = expand(equation.substr(arrow + 2), ellipsisDims);
            } else { // implicit: the broadcast dims, then letters used once, alphabetically
              std::map<char, int> uses;
              for (auto &op : operands)
                for (char c : op.letters)
                  ++uses[c];
              for (auto [c, count] : uses)
                if (std::isdigit(static_cast<unsigned char>(c)) || count == 1)
                  out.push_back(c);
            }
            Labeled acc = operands[0];
            for (size_t i = 1; i < operands.size(); ++i) {
              std::string keep = out;
              for (size_t j = i + 1; j < operands.size(); ++j)
                keep += operands[j].letters;
              acc = contract(n, acc, operands[i], keep);
            }
            acc = sumAway(n, acc, out);
            for (size_t d = 0; d < out.size(); ++d)
              if (out.find(out[d], d + 1) != std::string::npos)
                throw ImportError(std::string("output index '") + out[d] + "' is repeated");
            for (char c : out)
              if (acc.letters.find(c) == std::string::npos)
                throw ImportError(std::string("output index '") + c + "' is not in any input");
            return castTo(n, arrange(n, acc, out), n.inputType(0).getElementType());
          }};
}

// Col2Im sums sliding blocks back into an image: the adjoint of im2col, which is a grouped
// transposed convolution (one group per channel) whose weight picks each block position.
OpImport col2im() {
  return {
      {1, 2}, [](NodeImporter &n) -> Value {
        requireFloat32(n);
        auto x = n.inputType(0).getShape();
        std::vector<int64_t> image = n.constInput(1).asInts(), block = n.constInput(2).asInts();
        size_t spatial = image.size();
        if (x.size() != 3 || spatial < 1 || spatial > 3 || block.size() != spatial)
          throw ImportError("needs input [N, C * prod(block_shape), L] and 1 to 3 spatial dims");
        auto ones = std::vector<int64_t>(spatial, 1);
        std::vector<int64_t> strides = n.intsAttr("strides", ones),
                             dilations = n.intsAttr("dilations", ones),
                             pads = n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0));
        if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
          throw ImportError("strides, dilations or pads do not match image_shape");
        int64_t blockSize = dimsProduct(block);
        if (blockSize < 1 || x[1] % blockSize)
          throw ImportError("block_shape " + dimsString(block) + " does not divide " +
                            std::to_string(x[1]) + " input channels");
        if (blockSize > kMaxBuiltConstantElements / std::max<int64_t>(1, x[1]))
          throw ImportError("block_shape is too large");
        int64_t channels = x[1] / blockSize;
        SmallVector<int64_t> blocks{x[0], x[1]};
        for (size_t i = 0; i < spatial; ++i) {
          if (image[i] < 1 || block[i] < 1 || strides[i] < 1 || dilations[i] < 1 ||
              image[i] > kMaxTensorBytes)
            throw ImportError("image_shape, block_shape, strides and dilations must be "
                              "positive");
          blocks.push_back(windowOutputSize(image[i], block[i], strides[i], pads[i],
                                            pads[i + spatial], dilations[i], false));
        }
        if (dimsProduct(ArrayRef<int64_t>(blocks).drop_front(2)) != x[2])
          throw ImportError("the input has " + std::to_string(x[2]) + " blocks; the image " +
                            "and attributes give " + dimsString(blocks));
        SmallVector<int64_t> weightShape{x[1], 1};
        weightShape.append(block.begin(), block.end());
        std::vector<float> weight(x[1] * blockSize, 0.0f);
        for (int64_t c = 0; c < x[1]; ++c)
          weight[c * blockSize + c % blockSize] = 1.0f;
        Value picks = ConstantOp::fromFloats(n.b, n.loc(),
                                             RankedTensorType::get(weightShape, n.b.getF32Type()),
                                             weight, "col2im_positions");
        SmallVector<int64_t> shape{x[0], channels};
        shape.append(image.begin(), image.end());
        return n.b.create<ConvGradInputOp>(n.loc(), n.inputType(0).clone(shape),
                                           reshape(n, n.input(0), blocks), picks, strides, pads,
                                           dilations, channels);
      }};
}

// The sampling grid of an affine transform: theta [N, 2, 3] (or [N, 3, 4]) applied to the
// normalized coordinates (x, y[, z], 1) of every output position.
OpImport affineGrid() {
  return {{1}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            std::vector<int64_t> size = n.constInput(1).asInts();
            if (size.size() != 4 && size.size() != 5)
              throw ImportError("size must be [N, C, H, W] or [N, C, D, H, W]");
            int64_t dims = size.size() - 2;
            auto theta = n.inputType(0).getShape();
            if (theta != ArrayRef<int64_t>{size[0], dims, dims + 1})
              throw ImportError("theta must be " +
                                dimsString(SmallVector<int64_t>{size[0], dims, dims + 1}) +
                                ", got " + dimsString(theta));
            bool alignCorners = n.intAttr("align_corners", 0) != 0;
            std::vector<int64_t> spatial(size.begin() + 2, size.end());
            int64_t positions = dimsProduct(spatial);
            if (positions > kMaxBuiltConstantElements / (dims + 1))
              throw ImportError("the grid is too large to build");
            auto coordinate = [&](int64_t i, int64_t count) {
              if (alignCorners)
                return count == 1 ? -1.0f : float(-1.0 + 2.0 * i / (count - 1));
              return float(-1.0 + (2.0 * i + 1) / count);
            };
            // (x, y[, z], 1) per position, x along the last spatial dim.
            std::vector<float> base;
            for (int64_t p = 0; p < positions; ++p) {
              int64_t rest = p;
              std::vector<float> point(dims);
              for (int64_t d = dims - 1; d >= 0; --d) {
                point[dims - 1 - d] = coordinate(rest % spatial[d], spatial[d]);
                rest /= spatial[d];
              }
              base.insert(base.end(), point.begin(), point.end());
              base.push_back(1.0f);
            }
            Value grid = ConstantOp::fromFloats(
                n.b, n.loc(), RankedTensorType::get({1, positions, dims + 1}, n.b.getF32Type()),
                base, "affine_grid_base");
            Value thetaT = transposeValue(n, n.input(0), {0, 2, 1});
            Value points = n.b.create<MatMulOp>(
                n.loc(), n.inputType(0).clone({size[0], positions, dims}), grid, thetaT);
            SmallVector<int64_t> shape{size[0]};
            shape.append(spatial.begin(), spatial.end());
            shape.push_back(dims);
            return reshape(n, points, shape);
          }};
}

// In training mode (opset 14) the batch's statistics normalize (the attribute tells --train,
// which then updates the running statistics in its state). When the node's running-mean and
// running-variance outputs are read, they are computed here: running * momentum + batch *
// (1 - momentum), and y is normalized with the batch statistics directly.
OpImport batchNorm() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            if (n.version < 9 && n.intAttr("spatial", 1) != 1)
              throw ImportError("spatial=0 (statistics per element) is not supported");
            double momentum = n.floatAttr("momentum", 0.9f);
            double epsilon = n.floatAttr("epsilon", 1e-5f);
            bool training = n.intAttr("training_mode", 0) != 0;
            bool statisticsRead = n.node.output_size() > 1 && !n.node.output(1).empty();
            if (!training || !statisticsRead) {
              auto bn = n.b.create<BatchNormOp>(n.loc(), n.inputType(0), n.input(0), n.input(1),
                                                n.input(2), n.input(3), n.input(4),
                                                n.b.getF32FloatAttr(epsilon));
              bn->setAttr(kMomentumAttr, n.b.getF32FloatAttr(momentum));
              if (training)
                bn->setAttr(kBatchStatisticsAttr, n.b.getUnitAttr());
              return {bn};
            }
            requireFloat32(n);
            Value x = n.input(0);
            int64_t rank = typeOf(x).getRank();
            SmallVector<int64_t> axes{0}, perChannel(rank - 1, 1);
            for (int64_t d = 2; d < rank; ++d)
              axes.push_back(d);
            perChannel[0] = typeOf(x).getDimSize(1);
            Type f = n.b.getF32Type();
            Value mean = red<ReduceMeanOp>(n, x, axes, true);
            Value centered = bin<SubOp>(n, x, mean);
            Value variance = red<ReduceMeanOp>(n, bin<MulOp>(n, centered, centered), axes, true);
            Value invStdDev = un<ReciprocalOp>(
                n, un<SqrtOp>(n, bin<AddOp>(n, variance, scalar(n, epsilon, f))));
            Value y = bin<MulOp>(n, centered, invStdDev);
            y = bin<AddOp>(n, bin<MulOp>(n, y, reshape(n, n.input(1), perChannel)),
                           reshape(n, n.input(2), perChannel));
            auto running = [&](int input, Value batch) {
              return bin<AddOp>(
                  n, bin<MulOp>(n, n.input(input), scalar(n, momentum, f)),
                  bin<MulOp>(n, reshape(n, batch, n.inputType(input).getShape()),
                             scalar(n, 1.0 - momentum, f)));
            };
            return {y, running(3, mean), running(4, variance)};
          }};
}

} // namespace

void addLinalgImports(ImportTable &table) {
  table.insert({
      {"MatMul", matmul()},
      {"Gemm", gemm().withLegacyVersions()},
      {"Conv", conv()},
      {"CausalConvWithState", causalConvWithState()},
      {"ConvTranspose", convTranspose()},
      {"BatchNormalization", batchNorm().withLegacyVersions()},
      {"MaxPool", pool<MaxPoolOp>()},
      {"AveragePool", pool<AvgPoolOp>().withLegacyVersions()},
      {"LpPool", lpPool()},
      {"LRN", lrn()},
      {"MaxUnpool", maxUnpool()},
      {"Col2Im", col2im()},
      {"AffineGrid", affineGrid()},
      {"Einsum", einsum()},
      {"Det",
       {{},
        [](NodeImporter &n) -> Value {
          requireFloat32(n);
          auto x = n.inputType(0).getShape();
          if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
            throw ImportError("input " + dimsString(x) + " is not a stack of square matrices");
          return n.b.create<DetOp>(n.loc(), n.inputType(0).clone(x.drop_back(2)), n.input(0));
        }}},
      {"GlobalMaxPool", floatComposition([](NodeImporter &n, Value x, Type) -> Value {
         if (typeOf(x).getRank() < 3)
           throw ImportError("input must have rank >= 3 (N, C, spatial)");
         return red<ReduceMaxOp>(n, x, trailingAxes(2, typeOf(x).getRank()), true);
       })},
      {"GlobalAveragePool",
       {{},
        [](NodeImporter &n) -> Value {
          auto x = n.inputType(0);
          if (x.getRank() < 3)
            throw ImportError("input must have rank >= 3 (N, C, spatial)");
          SmallVector<int64_t> shape(x.getRank(), 1);
          shape[0] = x.getDimSize(0);
          shape[1] = x.getDimSize(1);
          return n.b.create<GlobalAvgPoolOp>(n.loc(), x.clone(shape), n.input(0));
        }}},
  });
}

} // namespace dlc
