// How ONNX resampling (Resize, Upsample) becomes dlc ops.
//
// Resize is separable: each resized axis is an independent 1-D resampling, and every mode and
// coordinate transformation fixes, at compile time, which input positions (taps) each output
// position reads and with what weights. So one axis becomes, per tap, a Gather of constant
// indices times a constant weight column, summed (a single Gather for nearest); kernels,
// planning and gradients come with those ops.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;

namespace dlc {
namespace {

struct ResizeAttributes {
  std::string mode;        // nearest, linear, cubic
  std::string coordinates; // coordinate_transformation_mode
  std::string nearestMode; // round_prefer_floor, ..., or "legacy" before opset 11
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
  double extrapolationValue = 0.0;
};

// Weights of the taps around source coordinate `x` (`ratio` its distance past floor(x), 1 when
// x is integral), after the ONNX reference.
std::vector<double> tapWeights(const ResizeAttributes &a, double ratio, double scale,
                               bool downsampling) {
  if (a.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    const std::string &m = a.nearestMode;
    bool upper = m == "round_prefer_floor"  ? ratio > 0.5
                 : m == "round_prefer_ceil" ? ratio >= 0.5
                 : m == "floor"             ? false
                 : m == "ceil"              ? true
                                            : downsampling; // legacy: ceil when shrinking
    return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
  }
  double A = a.cubicA;
  if (!a.antialias) {
    if (a.mode == "linear")
      return {1 - ratio, ratio};
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
            ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1, ((A + 2) * q - (A + 3)) * q * q + 1,
            ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
  }
  // Antialiasing stretches the filter by 1/scale when shrinking.
  double s = std::min(scale, 1.0);
  if (!(s >= 1.0 / 32))
    throw ImportError("antialiasing a scale below 1/32 is not supported");
  std::vector<double> w;
  if (a.mode == "linear") {
    int64_t start = (int64_t)std::floor(-1 / s) + 1;
    for (int64_t i = start; i < start + 2 - 2 * start; ++i)
      w.push_back(std::clamp(1 - std::abs((i - ratio) * s), 0.0, 1.0));
  } else {
    int64_t start = (int64_t)std::floor(-2 / s) + 1;
    for (int64_t i = start; i < 2 - start; ++i) {
      double x = std::abs(s * (i - ratio)), x2 = x * x, x3 = x2 * x;
      w.push_back(x <= 1  ? (A + 2) * x3 - (A + 3) * x2 + 1
                  : x < 2 ? A * x3 - 5 * A * x2 + 8 * A * x - 4 * A
                          : 0.0);
    }
  }
  double sum = 0;
  for (double v : w)
    sum += v;
  for (double &v : w)
    v /= sum;
  return w;
}

// Where output position y of one axis reads: taps[y * count + j] with weights[...]; rows past
// the crop window (tf_crop_and_resize) read nothing and take the extrapolation value.
struct AxisTaps {
  int64_t count = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<char> extrapolated;
};

AxisTaps axisTaps(const ResizeAttributes &a, int64_t in, int64_t out, double scale, double roiStart,
                  double roiEnd) {
  AxisTaps t;
  t.extrapolated.assign(out, 0);
  double outWidth = scale * in; // the unrounded output size
  for (int64_t y = 0; y < out; ++y) {
    const std::string &c = a.coordinates;
    double x;
    if (c == "align_corners")
      x = outWidth == 1 ? 0.0 : y * double(in - 1) / (outWidth - 1);
    else if (c == "asymmetric")
      x = y / scale;
    else if (c == "tf_crop_and_resize") {
      x = (outWidth == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                         : y * (roiEnd - roiStart) * (in - 1) / (outWidth - 1)) +
          roiStart * (in - 1);
      t.extrapolated[y] = x < 0 || x > in - 1;
    } else if (c == "pytorch_half_pixel")
      x = outWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    else if (c == "half_pixel")
      x = (y + 0.5) / scale - 0.5;
    else if (c == "tf_half_pixel_for_nn") // opsets 11 and 12
      x = (y + 0.5) / scale;
    else if (c == "half_pixel_symmetric")
      x = in / 2.0 * (1 - out / outWidth) + (y + 0.5) / scale - 0.5;
    else
      throw ImportError("unknown coordinate_transformation_mode '" + c + "'");
    if (!(std::fabs(x) < 1e15)) // from a file: a huge or NaN roi or scale
      throw ImportError("a source coordinate is out of range");
    double floorX = std::floor(x);
    double ratio = x == floorX ? 1.0 : x - floorX;
    std::vector<double> w = tapWeights(a, ratio, scale, scale < 1);
    int64_t n = w.size();
    if (y == 0)
      t.count = n;
    // The n nearest positions to x, preferring the lower ones on ties.
    int64_t pad = (n + 1) / 2;
    double padded = x + pad, p = std::floor(padded), frac = padded - p;
    int64_t offset =
        n % 2 == 0 ? (frac == 0 ? -(n / 2) : -(n / 2) + 1) : -((n - 1) / 2) + (frac <= 0.5 ? 0 : 1);
    int64_t first = (int64_t)p + offset - pad;
    if (a.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (first + j < 0 || first + j >= in)
          w[j] = 0;
        sum += w[j];
      }
      for (double &v : w)
        v /= sum == 0 ? 1 : sum;
    }
    for (int64_t j = 0; j < n; ++j) {
      t.index.push_back(std::clamp<int64_t>(first + j, 0, in - 1));
      t.weight.push_back(t.extrapolated[y] ? 0.0 : w[j]);
    }
  }
  return t;
}

// A constant of `shape` whose `axis` holds `values` (other dims 1), broadcast by binary ops.
Value axisColumn(NodeImporter &n, ArrayRef<int64_t> rankShape, int64_t axis,
                 const std::vector<float> &values, const char *name) {
  SmallVector<int64_t> shape(rankShape.size(), 1);
  shape[axis] = values.size();
  std::vector<char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get(shape, n.b.getF32Type()), bytes,
                               name);
}

Value gatherAxis(NodeImporter &n, Value x, int64_t axis, const std::vector<int64_t> &indices) {
  int64_t count = indices.size();
  std::vector<char> bytes(count * 8);
  std::memcpy(bytes.data(), indices.data(), bytes.size());
  Value table = ConstantOp::fromBytes(
      n.b, n.loc(), RankedTensorType::get({count}, n.b.getI64Type()), bytes, "resize_taps");
  SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[axis] = count;
  return n.b.create<GatherOp>(n.loc(), typeOf(x).clone(shape), x, table, axis);
}

Value resizeAxis(NodeImporter &n, Value x, int64_t axis, const AxisTaps &t,
                 double extrapolationValue) {
  int64_t out = t.extrapolated.size();
  bool anyExtrapolated = llvm::is_contained(t.extrapolated, 1);
  // Nearest, or any resampling whose every row reads one position with weight 1.
  std::vector<int64_t> single;
  for (int64_t y = 0; y < out && !anyExtrapolated; ++y)
    for (int64_t j = 0; j < t.count; ++j)
      if (t.weight[y * t.count + j] == 1.0)
        single.push_back(t.index[y * t.count + j]);
  if (!anyExtrapolated && (int64_t)single.size() == out)
    return gatherAxis(n, x, axis, single);
  Type element = typeOf(x).getElementType();
  if (!element.isF32())
    throw ImportError("interpolating (linear, cubic, or a crop with extrapolation) needs float32");
  Value sum;
  for (int64_t j = 0; j < t.count; ++j) {
    std::vector<int64_t> index(out);
    std::vector<float> weight(out);
    bool used = false;
    for (int64_t y = 0; y < out; ++y) {
      index[y] = t.index[y * t.count + j];
      weight[y] = (float)t.weight[y * t.count + j];
      used |= weight[y] != 0;
    }
    if (!used)
      continue;
    Value term = bin<MulOp>(n, gatherAxis(n, x, axis, index),
                            axisColumn(n, typeOf(x).getShape(), axis, weight, "resize_weights"));
    sum = sum ? bin<AddOp>(n, sum, term) : term;
  }
  SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[axis] = out;
  if (!sum) // every row lies outside the crop window
    return broadcastTo(n, scalar(n, extrapolationValue, element), shape);
  if (anyExtrapolated && extrapolationValue != 0) {
    std::vector<float> fill(out);
    for (int64_t y = 0; y < out; ++y)
      fill[y] = t.extrapolated[y] ? (float)extrapolationValue : 0.0f;
    sum = bin<AddOp>(n, sum, axisColumn(n, shape, axis, fill, "resize_extrapolation"));
  }
  return sum;
}

// Resizes `x` along each of `axes` to `sizes` with `scales` (per axis);
// `roi` holds [starts..., ends...] per axis for tf_crop_and_resize.
Value resample(NodeImporter &n, Value x, const ResizeAttributes &a, ArrayRef<int64_t> axes,
               ArrayRef<int64_t> sizes, ArrayRef<double> scales, ArrayRef<double> roi) {
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    throw ImportError("unknown mode '" + a.mode + "'");
  // Every order gives the same values (up to rounding when interpolating); each axis costs
  // about its output's size, and a last-axis pass costs the most per element (one element
  // per copy, where the others copy runs). So shrinking axes go first, then growing ones by
  // growth, the innermost first among equals.
  SmallVector<size_t> order(axes.size());
  std::iota(order.begin(), order.end(), 0);
  auto growth = [&](size_t i) {
    return double(sizes[i]) / double(std::max<int64_t>(1, typeOf(x).getDimSize(axes[i])));
  };
  llvm::sort(order, [&](size_t first, size_t second) {
    return growth(first) != growth(second) ? growth(first) < growth(second)
                                           : axes[first] > axes[second];
  });
  for (size_t i : order) {
    int64_t axis = axes[i], in = typeOf(x).getDimSize(axis);
    double start = roi.empty() ? 0.0 : roi[i], end = roi.empty() ? 1.0 : roi[axes.size() + i];
    if (sizes[i] == in && std::abs(scales[i] - 1.0) <= 1e-9 &&
        (a.coordinates != "tf_crop_and_resize" || (start == 0.0 && end == 1.0)))
      continue;
    if (in == 0)
      throw ImportError("axis " + std::to_string(axis) + " is empty");
    // The tap tables become weights (a few entries per output position).
    if (sizes[i] > kMaxBuiltConstantElements / 16)
      throw ImportError("output size " + std::to_string(sizes[i]) + " on axis " +
                        std::to_string(axis) + " is too large to resample");
    AxisTaps t = axisTaps(a, in, sizes[i], scales[i], start, end);
    if (t.count > 160)
      throw ImportError("the antialiasing filter of axis " + std::to_string(axis) + " spans " +
                        std::to_string(t.count) + " inputs (scale " + std::to_string(scales[i]) +
                        "); at most 160 are supported");
    x = resizeAxis(n, x, axis, t, a.extrapolationValue);
  }
  return x;
}

// Output sizes and scales of the resized axes, from either input (the other one empty).
void resizeTargets(NodeImporter &n, ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                   const std::vector<double> &givenScales, const std::vector<int64_t> &givenSizes,
                   const std::string &aspectPolicy, std::vector<int64_t> &sizes,
                   std::vector<double> &scales) {
  size_t count = axes.size();
  if (!givenSizes.empty()) {
    if (givenSizes.size() != count)
      throw ImportError("sizes has " + std::to_string(givenSizes.size()) + " entries for " +
                        std::to_string(count) + " axes");
    for (size_t i = 0; i < count; ++i) {
      if (givenSizes[i] < 1 || givenSizes[i] > kMaxTensorBytes)
        throw ImportError("size " + std::to_string(givenSizes[i]) + " is out of range");
      if (shape[axes[i]] == 0)
        throw ImportError("axis " + std::to_string(axes[i]) + " is empty");
      scales.push_back(double(givenSizes[i]) / shape[axes[i]]);
    }
    sizes = givenSizes;
    if (aspectPolicy == "stretch")
      return;
    if (aspectPolicy != "not_larger" && aspectPolicy != "not_smaller")
      throw ImportError("unknown keep_aspect_ratio_policy '" + aspectPolicy + "'");
    double scale = aspectPolicy == "not_larger" ? *std::min_element(scales.begin(), scales.end())
                                                : *std::max_element(scales.begin(), scales.end());
    for (size_t i = 0; i < count; ++i) {
      scales[i] = scale;
      sizes[i] = (int64_t)(scale * shape[axes[i]] + 0.5);
    }
    return;
  }
  if (givenScales.size() != count)
    throw ImportError("scales has " + std::to_string(givenScales.size()) + " entries for " +
                      std::to_string(count) + " axes");
  for (size_t i = 0; i < count; ++i) {
    double out = givenScales[i] * shape[axes[i]];
    if (!(givenScales[i] > 0) || !(out >= 1) || out > double(kMaxTensorBytes))
      throw ImportError("scale " + std::to_string(givenScales[i]) + " on axis " +
                        std::to_string(axes[i]) + " gives no valid output size");
    sizes.push_back((int64_t)out);
  }
  scales = givenScales;
}

// A constant input that may be absent or empty (Resize's roi, scales and sizes).
const ConstTensor *optionalConstant(NodeImporter &n, int i) {
  if (!n.hasInput(i))
    return nullptr;
  const ConstTensor &c = n.constInput(i);
  return c.numElements() ? &c : nullptr;
}

OpImport resize() {
  return {{1, 2, 3}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            ResizeAttributes a;
            a.mode = n.stringAttr("mode", "nearest");
            bool legacy = n.version < 11; // Upsample's semantics, scales as input 1
            a.coordinates = legacy ? "asymmetric"
                                   : n.stringAttr("coordinate_transformation_mode", "half_pixel");
            a.nearestMode = legacy ? "legacy" : n.stringAttr("nearest_mode", "round_prefer_floor");
            a.cubicA = n.floatAttr("cubic_coeff_a", -0.75f);
            a.excludeOutside = n.intAttr("exclude_outside", 0) != 0;
            a.extrapolationValue = n.floatAttr("extrapolation_value", 0.0f);
            a.antialias = n.version >= 18 && n.intAttr("antialias", 0) != 0;
            std::vector<int64_t> axes;
            for (int64_t axis : n.intsAttr("axes", trailingAxes(0, rank))) {
              axis = normalizeAxis(axis, rank);
              if (llvm::is_contained(axes, axis))
                throw ImportError("axis " + std::to_string(axis) + " is repeated");
              axes.push_back(axis);
            }
            const ConstTensor *roi = legacy ? nullptr : optionalConstant(n, 1);
            const ConstTensor *scales = optionalConstant(n, legacy ? 1 : 2);
            const ConstTensor *sizes = legacy ? nullptr : optionalConstant(n, 3);
            if (!scales == !sizes)
              throw ImportError("exactly one of scales and sizes must be given");
            std::vector<double> roiValues;
            if (roi && a.coordinates == "tf_crop_and_resize") {
              roiValues = roi->asDoubles();
              if (roiValues.size() != 2 * axes.size())
                throw ImportError("roi has " + std::to_string(roiValues.size()) +
                                  " entries; it needs 2 per resized axis");
            }
            std::vector<int64_t> outSizes;
            std::vector<double> outScales;
            resizeTargets(n, shape, axes, scales ? scales->asDoubles() : std::vector<double>{},
                          sizes ? sizes->asInts() : std::vector<int64_t>{},
                          n.stringAttr("keep_aspect_ratio_policy", "stretch"), outSizes, outScales);
            return resample(n, n.input(0), a, axes, outSizes, outScales, roiValues);
          }};
}

// Upsample (before opset 10): Resize with asymmetric coordinates; scales an attribute until 9.
OpImport upsample() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            ResizeAttributes a;
            a.mode = n.stringAttr("mode", "nearest");
            a.coordinates = "asymmetric";
            a.nearestMode = "legacy";
            std::vector<double> scales =
                n.version < 9 ? n.floatsAttr("scales") : n.constInput(1).asDoubles();
            for (double s : scales)
              if (s < 1)
                throw ImportError("Upsample scales must be >= 1");
            std::vector<int64_t> axes = trailingAxes(0, shape.size()), sizes;
            std::vector<double> outScales;
            resizeTargets(n, shape, axes, scales, {}, "stretch", sizes, outScales);
            return resample(n, n.input(0), a, axes, sizes, outScales, {});
          }};
}

// ---- GridSample: per output position, the input read at run-time coordinates. Each spatial
// dim gives taps (an integer position and a weight, as tensors over the output positions);
// every combination of taps is one GatherElements from the flattened input, weighted.

struct GridTap {
  Value index;  // int64 [N, out...]
  Value weight; // f32 [N, out...], null for 1
};

// lo + the triangle wave of period 2 (hi - lo) through x: x reflected into [lo, hi].
Value reflect(NodeImporter &n, Value x, double lo, double hi) {
  Type f = typeOf(x).getElementType();
  double range = hi - lo;
  if (range <= 0)
    return bin<MulOp>(n, x, scalar(n, 0.0, f)); // a single position: everything reflects to 0
  Value t = bin<ModOp>(n, bin<SubOp>(n, x, scalar(n, lo, f)), scalar(n, 2 * range, f));
  Value back = bin<SubOp>(n, scalar(n, 2 * range, f), t);
  Value folded = n.b.create<WhereOp>(n.loc(), typeOf(t),
                                     comparison<LessEqualOp>(n, t, scalar(n, range, f)), t, back);
  return bin<AddOp>(n, folded, scalar(n, lo, f));
}

std::vector<GridTap> gridTaps(NodeImporter &n, Value x, int64_t size, const std::string &mode,
                              const std::string &padding, bool alignCorners) {
  Type f = typeOf(x).getElementType(), i64 = n.b.getI64Type();
  auto c = [&](double v) { return scalar(n, v, f); };
  // Normalized [-1, 1] to pixel coordinates.
  x = alignCorners
          ? bin<MulOp>(n, bin<AddOp>(n, x, c(1)), c((size - 1) / 2.0))
          : bin<DivOp>(n, bin<SubOp>(n, bin<MulOp>(n, bin<AddOp>(n, x, c(1)), c(size)), c(1)),
                       c(2));
  if (mode == "nearest")
    x = un<RoundOp>(n, x);
  double lo = alignCorners ? 0.0 : -0.5, hi = alignCorners ? size - 1.0 : size - 0.5;
  if (padding != "zeros") {
    Value outside =
        bin<OrOp>(n, comparison<LessOp>(n, x, c(lo)), comparison<GreaterOp>(n, x, c(hi)));
    Value moved = padding == "border"
                      ? n.b.create<ClipOp>(n.loc(), typeOf(x), x, n.b.getF32FloatAttr(0.0f),
                                           n.b.getF32FloatAttr(float(size - 1)))
                            .getResult()
                      : reflect(n, x, lo, hi);
    x = n.b.create<WhereOp>(n.loc(), typeOf(x), outside, moved, x);
  }
  std::vector<std::pair<int64_t, Value>> raw; // offset from floor(x), weight
  Value base = x;
  if (mode == "nearest") {
    raw.push_back({0, Value()});
  } else {
    base = un<FloorOp>(n, x);
    Value t = bin<SubOp>(n, x, base);
    if (mode == "linear") {
      raw.push_back({0, bin<SubOp>(n, c(1), t)});
      raw.push_back({1, t});
    } else { // cubic, A = -0.75, at distances t + 1, t, 1 - t, 2 - t
      double A = -0.75;
      auto far = [&](Value d) { // A d^3 - 5A d^2 + 8A d - 4A for 1 <= d < 2
        return bin<SubOp>(
            n,
            bin<MulOp>(n,
                       bin<AddOp>(n,
                                  bin<MulOp>(n, bin<SubOp>(n, bin<MulOp>(n, d, c(A)), c(5 * A)), d),
                                  c(8 * A)),
                       d),
            c(4 * A));
      };
      auto near = [&](Value d) { // (A + 2) d^3 - (A + 3) d^2 + 1 for d < 1
        return bin<AddOp>(
            n,
            bin<MulOp>(n, bin<MulOp>(n, bin<SubOp>(n, bin<MulOp>(n, d, c(A + 2)), c(A + 3)), d), d),
            c(1));
      };
      Value oneMinus = bin<SubOp>(n, c(1), t);
      raw.push_back({-1, far(bin<AddOp>(n, t, c(1)))});
      raw.push_back({0, near(t)});
      raw.push_back({1, near(oneMinus)});
      raw.push_back({2, far(bin<AddOp>(n, oneMinus, c(1)))});
    }
  }
  std::vector<GridTap> taps;
  for (auto [offset, weight] : raw) {
    Value position = offset ? bin<AddOp>(n, base, c(offset)) : base;
    if (padding == "zeros") {
      Value inside = bin<AndOp>(n, comparison<GreaterEqualOp>(n, position, c(0)),
                                comparison<LessEqualOp>(n, position, c(size - 1)));
      Value mask = castTo(n, inside, f);
      weight = weight ? bin<MulOp>(n, weight, mask) : mask;
    }
    if (padding == "reflection")
      position = reflect(n, position, lo, hi); // then truncated toward zero, as the reference
    position = n.b.create<ClipOp>(n.loc(), typeOf(position), position, n.b.getF32FloatAttr(0.0f),
                                  n.b.getF32FloatAttr(float(size - 1)));
    taps.push_back({castTo(n, position, i64), weight});
  }
  return taps;
}

OpImport gridSample() {
  return {
      {}, [](NodeImporter &n) -> Value {
        requireFloat32(n);
        auto x = n.inputType(0).getShape(), grid = n.inputType(1).getShape();
        int64_t dims = x.size() - 2;
        if (dims < 1 || dims > 3 || grid.size() != x.size() || grid[0] != x[0] ||
            grid.back() != dims)
          throw ImportError("needs X [N, C, spatial...] and grid [N, out..., " +
                            std::to_string(dims) + "], got " + dimsString(x) + " and " +
                            dimsString(grid));
        std::string mode = n.stringAttr("mode", n.version >= 20 ? "linear" : "bilinear");
        if (mode == "bilinear")
          mode = "linear";
        if (mode == "bicubic")
          mode = "cubic";
        if (mode != "nearest" && mode != "linear" && mode != "cubic")
          throw ImportError("unknown mode '" + mode + "'");
        std::string padding = n.stringAttr("padding_mode", "zeros");
        if (padding != "zeros" && padding != "border" && padding != "reflection")
          throw ImportError("unknown padding_mode '" + padding + "'");
        bool alignCorners = n.intAttr("align_corners", 0) != 0;
        SmallVector<int64_t> out(grid.begin(), grid.end() - 1); // [N, out...]
        int64_t positions = dimsProduct(ArrayRef<int64_t>(out).drop_front());
        // Taps per spatial dim; the grid's last axis lists x (the last dim) first.
        std::vector<std::vector<GridTap>> perDim(dims);
        std::vector<int64_t> strides(dims, 1);
        for (int64_t d = dims - 1; d >= 0; --d) {
          if (d < dims - 1)
            strides[d] = strides[d + 1] * x[d + 3];
          Value component = reshape(n, sliceAxis(n, n.input(1), dims + 1, dims - 1 - d, 1, 1), out);
          perDim[d] = gridTaps(n, component, x[d + 2], mode, padding, alignCorners);
        }
        int64_t combinations = 1;
        for (auto &t : perDim)
          combinations *= t.size();
        int64_t pixels = dimsProduct(ArrayRef<int64_t>(x).drop_front(2));
        Value flat = reshape(n, n.input(0), {x[0], x[1], pixels});
        Value sum;
        for (int64_t k = 0; k < combinations; ++k) {
          Value index, weight;
          for (int64_t d = 0, rest = k; d < dims; ++d) {
            const GridTap &tap = perDim[d][rest % perDim[d].size()];
            rest /= perDim[d].size();
            Value part = strides[d] == 1
                             ? tap.index
                             : bin<MulOp>(n, tap.index, intScalar(n, strides[d], n.b.getI64Type()));
            index = index ? bin<AddOp>(n, index, part) : part;
            if (tap.weight)
              weight = weight ? bin<MulOp>(n, weight, tap.weight) : tap.weight;
          }
          index = broadcastTo(n, reshape(n, index, {x[0], 1, positions}), {x[0], x[1], positions});
          Value picked = gatherElements(n, flat, index, 2);
          if (weight)
            picked = bin<MulOp>(n, picked, reshape(n, weight, {x[0], 1, positions}));
          sum = sum ? bin<AddOp>(n, sum, picked) : picked;
        }
        SmallVector<int64_t> shape{x[0], x[1]};
        shape.append(out.begin() + 1, out.end());
        return reshape(n, sum, shape);
      }};
}

// RoiAlign: a kernel of its own, as the number of samples per bin depends on the regions,
// which are run-time data. Before opset 16 coordinates had no half-pixel offset.
OpImport roiAlign() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            requireFloat32(n, 1);
            auto x = n.inputType(0).getShape(), rois = n.inputType(1).getShape();
            auto indices = n.inputType(2);
            if (x.size() != 4)
              throw ImportError("X must be [N, C, H, W], got " + dimsString(x));
            if (rois.size() != 2 || rois[1] != 4 || indices.getRank() != 1 ||
                indices.getDimSize(0) != rois[0] || !indices.getElementType().isInteger(64))
              throw ImportError("rois " + dimsString(rois) + " and batch_indices " +
                                dimsString(indices.getShape()) + " must be [R, 4] and int64 [R]");
            std::string transform =
                n.stringAttr("coordinate_transformation_mode",
                             n.version >= 16 ? "half_pixel" : "output_half_pixel");
            if (transform != "half_pixel" && transform != "output_half_pixel")
              throw ImportError("unknown coordinate_transformation_mode '" + transform + "'");
            std::string mode = n.stringAttr("mode", "avg");
            if (mode != "avg" && mode != "max")
              throw ImportError("mode must be 'avg' or 'max', got '" + mode + "'");
            int64_t height = n.intAttr("output_height", 1), width = n.intAttr("output_width", 1);
            if (height < 1 || width < 1)
              throw ImportError("output_height and output_width must be positive");
            SmallVector<int64_t> shape{rois[0], x[1], height, width};
            return n.b.create<RoiAlignOp>(
                n.loc(), n.inputType(0).clone(shape), n.input(0), n.input(1), n.input(2),
                n.b.getI64IntegerAttr(n.intAttr("sampling_ratio", 0)),
                n.b.getF32FloatAttr(n.floatAttr("spatial_scale", 1.0f)),
                n.b.getBoolAttr(transform == "half_pixel"), n.b.getBoolAttr(mode == "max"));
          }};
}

} // namespace

void addSamplingImports(ImportTable &table) {
  table.insert({{"Resize", resize()},
                {"Upsample", upsample()},
                {"GridSample", gridSample()},
                {"RoiAlign", roiAlign()}});
}

} // namespace dlc
