// Compile-time tensors: decoding TensorProto, and the values import needs before it can type
// anything (Shape and Size read types; Range, NonZero and NonMaxSuppression have output sizes
// that depend on their values). Everything else with constant inputs is imported and evaluated
// by the kernels (Evaluate.h).
#include "compiler/import/ImportContext.h"
#include "compiler/import/ModelCheck.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include <cmath>
#include <cstring>

namespace dlc {

// The element types compile-time tensors hold (those of the dlc dialect).
static bool isConstantDtype(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT: case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32: case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: case kFloat8E4M3FN: case kFloat8E4M3FNUZ: case kFloat8E5M2:
  case kFloat8E5M2FNUZ: case kUint4: case kInt4: case kUint2: case kInt2:
    return true;
  default: return false;
  }
}

int64_t ConstTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T> static T readAt(const std::vector<char> &bytes, int64_t i) {
  T value;
  std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
  return value;
}

// Element i of an integer (or bool) constant; uint64 values past int64's range wrap.
static int64_t integerAt(int32_t dtype, const std::vector<char> &bytes, int64_t i) {
  switch (dtype) {
  case onnx::TensorProto::INT64: return readAt<int64_t>(bytes, i);
  case onnx::TensorProto::INT32: return readAt<int32_t>(bytes, i);
  case onnx::TensorProto::INT16: return readAt<int16_t>(bytes, i);
  case onnx::TensorProto::INT8: case kInt4: case kInt2: return readAt<int8_t>(bytes, i);
  case onnx::TensorProto::UINT64: return (int64_t)readAt<uint64_t>(bytes, i);
  case onnx::TensorProto::UINT32: return readAt<uint32_t>(bytes, i);
  case onnx::TensorProto::UINT16: return readAt<uint16_t>(bytes, i);
  case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: case kUint4: case kUint2:
    return readAt<uint8_t>(bytes, i);
  default: throw ImportError("expected an integer constant");
  }
}

// IEEE binary16 bits as a double (exact).
static double halfToDouble(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa ? std::nan("") : HUGE_VAL)
                                      : std::ldexp(mantissa | 0x400, exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

std::vector<double> ConstTensor::asDoubles() const {
  std::vector<double> out(numElements());
  for (int64_t i = 0; i < (int64_t)out.size(); ++i) {
    switch (dtype) {
    case onnx::TensorProto::FLOAT: out[i] = readAt<float>(bytes, i); break;
    case onnx::TensorProto::DOUBLE: out[i] = readAt<double>(bytes, i); break;
    case onnx::TensorProto::UINT64: out[i] = (double)readAt<uint64_t>(bytes, i); break;
    case onnx::TensorProto::FLOAT16: out[i] = halfToDouble(readAt<uint16_t>(bytes, i)); break;
    case onnx::TensorProto::BFLOAT16: {
      uint32_t bits = uint32_t(readAt<uint16_t>(bytes, i)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      out[i] = f;
      break;
    }
    case kFloat8E4M3FN: case kFloat8E4M3FNUZ: case kFloat8E5M2: case kFloat8E5M2FNUZ:
      throw ImportError("float8 constants are not read at compile time");
    default: out[i] = (double)integerAt(dtype, bytes, i);
    }
  }
  return out;
}

std::vector<int64_t> ConstTensor::asInts() const {
  std::vector<int64_t> out(numElements());
  for (int64_t i = 0; i < (int64_t)out.size(); ++i)
    out[i] = integerAt(dtype, bytes, i);
  return out;
}

// Values of integer and bool constants, for shape arithmetic.
static ConstTensor makeIntegers(int32_t dtype, std::vector<int64_t> shape,
                                const std::vector<int64_t> &values) {
  ConstTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t width = dtypeBytes(dtype);
  t.bytes.resize(values.size() * width);
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
    case onnx::TensorProto::INT64: std::memcpy(&t.bytes[i * 8], &values[i], 8); break;
    case onnx::TensorProto::INT32: {
      int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(&t.bytes[i * 4], &v, 4);
      break;
    }
    case onnx::TensorProto::BOOL: t.bytes[i] = values[i] != 0; break;
    default: throw ImportError("internal: not an integer dtype");
    }
  }
  return t;
}

// 4- and 2-bit elements come packed from the lowest bits up, in raw_data bytes or in int32_data
// entries (one byte's worth each); dlc keeps one per byte, signed ones sign-extended.
static ConstTensor unpackSubByte(const onnx::TensorProto &proto, ConstTensor t, int64_t count,
                                 int bits) {
  std::vector<uint8_t> packed;
  if (proto.has_raw_data())
    packed.assign(proto.raw_data().begin(), proto.raw_data().end());
  else
    for (int32_t entry : proto.int32_data())
      packed.push_back(uint8_t(entry));
  int perByte = 8 / bits;
  if ((int64_t)packed.size() * perByte < count)
    throw ImportError("internal: tensor '" + proto.name() + "' escaped model validation");
  bool isSigned = t.dtype == kInt4 || t.dtype == kInt2;
  t.bytes.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    int field = (packed[i / perByte] >> (bits * (i % perByte))) & ((1 << bits) - 1);
    if (isSigned && field >= (1 << (bits - 1)))
      field -= 1 << bits;
    t.bytes[i] = static_cast<char>(field);
  }
  return t;
}

ConstTensor constFromProto(const onnx::TensorProto &proto) {
  ConstTensor t;
  t.dtype = proto.data_type();
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  if (!isConstantDtype(t.dtype))
    throw ImportError("tensor '" + proto.name() + "' has unsupported element type " +
                      dtypeName(t.dtype) + " (not supported in constants)");
  size_t elem = dtypeBytes(t.dtype);
  // validateModel has checked the size and the data against the dims, and loadExternalData
  // has inlined external data.
  auto bytes = checkedTensorBytes(t.shape, elem);
  if (!bytes || proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw ImportError("internal: tensor '" + proto.name() + "' escaped model validation");
  int64_t count = *bytes / elem;
  if (int bits = packedBits(t.dtype))
    return unpackSubByte(proto, std::move(t), count, bits);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != size_t(count) * elem)
      throw ImportError("tensor '" + proto.name() + "' raw data has the wrong size");
    t.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
    return t;
  }
  t.bytes.resize(count * elem);
  auto fill = [&](const auto &field) {
    if ((int64_t)field.size() != count)
      throw ImportError("tensor '" + proto.name() + "' has " + std::to_string(field.size()) +
                        " values for " + std::to_string(count) + " elements");
    for (int64_t i = 0; i < count; ++i) {
      auto v = field.Get(i);
      auto put = [&](auto typed) { std::memcpy(&t.bytes[i * elem], &typed, elem); };
      switch (t.dtype) {
      case onnx::TensorProto::FLOAT: put(float(v)); break;
      case onnx::TensorProto::DOUBLE: put(double(v)); break;
      case onnx::TensorProto::INT64: put(int64_t(v)); break;
      case onnx::TensorProto::UINT64: put(uint64_t(v)); break;
      case onnx::TensorProto::INT32: put(int32_t(v)); break;
      case onnx::TensorProto::UINT32: put(uint32_t(v)); break;
      case onnx::TensorProto::INT16: put(int16_t(v)); break;
      case onnx::TensorProto::UINT16: case onnx::TensorProto::FLOAT16:
      case onnx::TensorProto::BFLOAT16: put(uint16_t(v)); break;
      default: t.bytes[i] = static_cast<char>(v);
      }
    }
  };
  switch (t.dtype) {
  case onnx::TensorProto::FLOAT: fill(proto.float_data()); break;
  case onnx::TensorProto::DOUBLE: fill(proto.double_data()); break;
  case onnx::TensorProto::INT64: fill(proto.int64_data()); break;
  case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: fill(proto.uint64_data()); break;
  default: fill(proto.int32_data()); break;
  }
  return t;
}

static ConstTensor constantNodeValue(const onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) {
    if (a.name() == "value")
      return constFromProto(a.t());
    if (a.name() == "value_int")
      return makeIntegers(onnx::TensorProto::INT64, {}, {a.i()});
    if (a.name() == "value_ints")
      return makeIntegers(onnx::TensorProto::INT64, {a.ints_size()},
                          {a.ints().begin(), a.ints().end()});
    if (a.name() == "value_float" || a.name() == "value_floats") {
      std::vector<float> values = a.name() == "value_float"
                                      ? std::vector<float>{a.f()}
                                      : std::vector<float>(a.floats().begin(), a.floats().end());
      ConstTensor t;
      t.dtype = onnx::TensorProto::FLOAT;
      if (a.name() == "value_floats")
        t.shape = {(int64_t)values.size()};
      t.bytes.resize(values.size() * 4);
      std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
      return t;
    }
  }
  throw ImportError("Constant has no supported value attribute (sparse/string values are not "
                    "supported)");
}

bool isCastOnlyElementType(mlir::Type element) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E4M3FNUZType, mlir::Float8E5M2Type,
                   mlir::Float8E5M2FNUZType, dlc::Float4E2M1Type, dlc::Float8E8M0Type>(element) ||
         element.isInteger(4) || element.isInteger(2);
}

mlir::Type elementTypeFor(mlir::MLIRContext &ctx, int32_t dtype) {
  using namespace mlir;
  switch (dtype) {
  case onnx::TensorProto::FLOAT: return Float32Type::get(&ctx);
  case onnx::TensorProto::DOUBLE: return Float64Type::get(&ctx);
  case onnx::TensorProto::INT64: return IntegerType::get(&ctx, 64);
  case onnx::TensorProto::INT32: return IntegerType::get(&ctx, 32);
  case onnx::TensorProto::INT8: return IntegerType::get(&ctx, 8);
  case onnx::TensorProto::UINT8: return IntegerType::get(&ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::INT16: return IntegerType::get(&ctx, 16);
  case onnx::TensorProto::UINT16: return IntegerType::get(&ctx, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32: return IntegerType::get(&ctx, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64: return IntegerType::get(&ctx, 64, IntegerType::Unsigned);
  case onnx::TensorProto::FLOAT16: return Float16Type::get(&ctx);
  case onnx::TensorProto::BFLOAT16: return BFloat16Type::get(&ctx);
  case kFloat8E4M3FN: return Float8E4M3FNType::get(&ctx);
  case kFloat8E4M3FNUZ: return Float8E4M3FNUZType::get(&ctx);
  case kFloat8E5M2: return Float8E5M2Type::get(&ctx);
  case kFloat8E5M2FNUZ: return Float8E5M2FNUZType::get(&ctx);
  case kInt4: return IntegerType::get(&ctx, 4);
  case kUint4: return IntegerType::get(&ctx, 4, IntegerType::Unsigned);
  case kInt2: return IntegerType::get(&ctx, 2);
  case kUint2: return IntegerType::get(&ctx, 2, IntegerType::Unsigned);
  case kFloat4E2M1: return Float4E2M1Type::get(&ctx);
  case kFloat8E8M0: return Float8E8M0Type::get(&ctx);
  case onnx::TensorProto::BOOL: return IntegerType::get(&ctx, 1);
  default: return {};
  }
}

int32_t onnxDtypeOf(mlir::Type element) {
  for (int32_t dtype = 1; dtype <= kInt2; ++dtype)
    if (elementTypeFor(*element.getContext(), dtype) == element)
      return dtype;
  return 0;
}

// Shape arithmetic works on small integer tensors; anything larger is data, not shapes.
constexpr int64_t kMaxFoldedElements = 4096;

static bool isShapeMathDtype(int32_t dtype) {
  return dtype == onnx::TensorProto::INT64 || dtype == onnx::TensorProto::INT32 ||
         dtype == onnx::TensorProto::BOOL;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  // A scalar has no axis at all: callers index the shape with the result.
  if (axis < -rank || axis >= rank)
    throw ImportError("axis " + std::to_string(axis) + " out of range for rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// The longest Range built at compile time.
constexpr int64_t kMaxRangeElements = int64_t(64) << 20;

// Whether two boxes overlap by more than `threshold` (intersection over union), computed in
// float as the ONNX reference does; corners (y1, x1, y2, x2) in either order, or
// (x center, y center, width, height) with centerPointBox.
static bool suppresses(const float *a, const float *b, bool centerPointBox, float threshold) {
  auto extent = [&](const float *box, int axis, float &lo, float &hi) {
    if (centerPointBox) {
      float half = box[axis + 2] / 2;
      lo = box[axis] - half;
      hi = box[axis] + half;
    } else { // axis 0 is x (coordinates 1 and 3), 1 is y (0 and 2)
      lo = std::min(box[1 - axis], box[3 - axis]);
      hi = std::max(box[1 - axis], box[3 - axis]);
    }
  };
  float area[2] = {1, 1}, overlap = 1;
  for (int axis = 0; axis < 2; ++axis) {
    float aLo, aHi, bLo, bHi;
    extent(a, axis, aLo, aHi);
    extent(b, axis, bLo, bHi);
    float lo = std::max(aLo, bLo), hi = std::min(aHi, bHi);
    if (hi <= lo)
      return false;
    overlap *= hi - lo;
    area[0] *= aHi - aLo;
    area[1] *= bHi - bLo;
  }
  float unionArea = area[0] + area[1] - overlap;
  if (overlap <= 0 || area[0] <= 0 || area[1] <= 0 || unionArea <= 0)
    return false;
  return overlap / unionArea > threshold;
}

// NonMaxSuppression's output size is the number of boxes it selects, so only constant boxes
// and scores give it a static shape: [selected, 3] rows of (batch, class, box), per batch and
// class the boxes by descending score (lower index first on ties) that score above the
// threshold and overlap no earlier selection by more than iou_threshold.
static std::optional<ConstTensor> foldNonMaxSuppression(const onnx::NodeProto &node,
                                                        ValueScope &scope, bool centerPointBox) {
  std::vector<const ConstTensor *> in(5, nullptr);
  for (int i = 0; i < node.input_size() && i < 5; ++i) {
    if (node.input(i).empty())
      continue;
    in[i] = scope.constant(node.input(i));
    if (!in[i] || in[i]->numElements() > kMaxFoldedElements)
      return std::nullopt;
  }
  if (!in[0] || !in[1])
    return std::nullopt;
  const auto &boxShape = in[0]->shape, &scoreShape = in[1]->shape;
  if (boxShape.size() != 3 || boxShape[2] != 4 || scoreShape.size() != 3 ||
      scoreShape[0] != boxShape[0] || scoreShape[2] != boxShape[1])
    throw ImportError("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  for (int i = 2; i < 5; ++i)
    if (in[i] && in[i]->numElements() != 1)
      throw ImportError("max_output_boxes_per_class, iou_threshold and score_threshold must "
                        "hold one value each");
  int64_t batches = boxShape[0], boxCount = boxShape[1], classes = scoreShape[1];
  int64_t perClass = in[2] ? std::max<int64_t>(in[2]->asInts()[0], 0) : 0;
  float iouThreshold = in[3] ? float(in[3]->asDoubles()[0]) : 0.0f;
  std::vector<float> boxes, scores;
  for (double v : in[0]->asDoubles())
    boxes.push_back(float(v));
  for (double v : in[1]->asDoubles())
    scores.push_back(float(v));
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const float *score = scores.data() + (b * classes + c) * boxCount;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < boxCount; ++i)
        if (!in[4] || score[i] > float(in[4]->asDoubles()[0]))
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return score[i] > score[j]; });
      std::vector<int64_t> selected;
      for (int64_t i : order) {
        if ((int64_t)selected.size() >= perClass)
          break;
        const float *box = boxes.data() + (b * boxCount + i) * 4;
        if (std::none_of(selected.begin(), selected.end(), [&](int64_t j) {
              return suppresses(box, boxes.data() + (b * boxCount + j) * 4, centerPointBox,
                                iouThreshold);
            })) {
          selected.push_back(i);
          rows.insert(rows.end(), {b, c, i});
        }
      }
    }
  return makeIntegers(onnx::TensorProto::INT64, {(int64_t)rows.size() / 3, 3}, rows);
}

// start, start + delta, ... up to limit (exclusive); integer or floating point.
static std::optional<ConstTensor> foldRange(const onnx::NodeProto &node, ValueScope &scope) {
  std::vector<const ConstTensor *> in;
  for (const auto &name : node.input()) {
    const ConstTensor *c = name.empty() ? nullptr : scope.constant(name);
    if (!c)
      return std::nullopt;
    if (c->numElements() != 1)
      throw ImportError("start, limit and delta must be scalars");
    in.push_back(c);
  }
  if (in.size() != 3)
    return std::nullopt;
  int32_t dtype = in[0]->dtype;
  double start = in[0]->asDoubles()[0], limit = in[1]->asDoubles()[0],
         delta = in[2]->asDoubles()[0];
  if (delta == 0)
    throw ImportError("delta must be non-zero");
  double steps = std::ceil((limit - start) / delta);
  if (!(steps < double(kMaxRangeElements)))
    throw ImportError("the range is too long to fold at compile time");
  int64_t count = steps > 0 ? int64_t(steps) : 0;
  if (isShapeMathDtype(dtype)) {
    std::vector<int64_t> v(count);
    int64_t first = in[0]->asInts()[0], step = in[2]->asInts()[0];
    for (int64_t i = 0; i < count; ++i)
      v[i] = int64_t(uint64_t(first) + uint64_t(i) * uint64_t(step)); // wraps, never UB
    return makeIntegers(dtype, {count}, v);
  }
  ConstTensor t;
  t.dtype = dtype;
  t.shape = {count};
  for (int64_t i = 0; i < count; ++i) {
    char buffer[8];
    if (dtype == onnx::TensorProto::FLOAT) {
      // As ONNX's reference: the float start plus i float steps.
      float f = float(start) + float(i) * float(delta);
      std::memcpy(buffer, &f, 4);
    } else if (dtype == onnx::TensorProto::DOUBLE) {
      double d = start + double(i) * delta;
      std::memcpy(buffer, &d, 8);
    } else if (dtype == onnx::TensorProto::FLOAT16 || dtype == onnx::TensorProto::BFLOAT16) {
      // Computed in float32, rounded once to the stored type (the runtime's conversion).
      float f = float(start) + float(i) * float(delta);
      dlc::rt::cast(DLC_F32, &f, static_cast<dlc_dtype>(dtype), buffer, 1);
    } else {
      throw ImportError("Range of " + dtypeName(dtype) + " is not supported");
    }
    t.bytes.insert(t.bytes.end(), buffer, buffer + dtypeBytes(dtype));
  }
  return t;
}

// NonZero's output size is the count of non-zeros, so only a constant input gives it a
// static shape: [rank, count], the coordinates of each non-zero in row-major order (a scalar
// counts as one dim, as numpy's nonzero has it).
static std::optional<ConstTensor> foldNonZero(const onnx::NodeProto &node, ValueScope &scope) {
  const ConstTensor *x = node.input_size() == 1 ? scope.constant(node.input(0)) : nullptr;
  if (!x || !isShapeMathDtype(x->dtype) || x->numElements() > kMaxFoldedElements)
    return std::nullopt;
  auto v = x->asInts();
  std::vector<int64_t> dims = x->shape.empty() ? std::vector<int64_t>{1} : x->shape;
  std::vector<std::vector<int64_t>> coordinates(dims.size());
  for (int64_t i = 0; i < (int64_t)v.size(); ++i) {
    if (!v[i])
      continue;
    for (int64_t d = dims.size() - 1, rest = i; d >= 0; rest /= dims[d], --d)
      coordinates[d].push_back(rest % dims[d]);
  }
  std::vector<int64_t> out;
  for (const auto &along : coordinates)
    out.insert(out.end(), along.begin(), along.end());
  return makeIntegers(onnx::TensorProto::INT64,
                      {(int64_t)dims.size(), (int64_t)coordinates[0].size()}, out);
}

std::optional<ConstTensor> importTimeValue(const onnx::NodeProto &node, ValueScope &scope) {
  const std::string &op = node.op_type();
  if (node.output_size() < 1)
    return std::nullopt;
  if (op == "Constant")
    return constantNodeValue(node);
  auto intAttr = [&](const std::string &name, int64_t fallback) {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return (int64_t)a.i();
    return fallback;
  };
  if ((op == "Shape" || op == "Size") && node.input_size() == 1) {
    mlir::RankedTensorType type;
    try {
      type = scope.type(node.input(0));
    } catch (const ImportError &) {
      return std::nullopt; // not static: the node stays and is reported if it is needed
    }
    if (op == "Size")
      return makeIntegers(onnx::TensorProto::INT64, {}, {type.getNumElements()});
    std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
    int64_t rank = dims.size();
    int64_t start = intAttr("start", 0), end = intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> sliced(dims.begin() + start, dims.begin() + std::max(start, end));
    return makeIntegers(onnx::TensorProto::INT64, {(int64_t)sliced.size()}, sliced);
  }
  if (op == "Range")
    return foldRange(node, scope);
  if (op == "NonMaxSuppression")
    return foldNonMaxSuppression(node, scope, intAttr("center_point_box", 0) != 0);
  if (op == "NonZero")
    return foldNonZero(node, scope);
  return std::nullopt;
}

} // namespace dlc
