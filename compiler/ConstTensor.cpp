// Compile-time tensors: decoding TensorProto and folding shape arithmetic.
#include "compiler/ImportContext.h"
#include "compiler/ModelCheck.h"
#include "dialects/Sizes.h"

#include <cstring>

namespace dlc {

// The element types compile-time tensors hold (those of the dlc dialect).
static bool isConstantDtype(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT: case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32: case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
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

std::vector<double> ConstTensor::asDoubles() const {
  std::vector<double> out(numElements());
  for (int64_t i = 0; i < (int64_t)out.size(); ++i) {
    switch (dtype) {
    case onnx::TensorProto::FLOAT: out[i] = readAt<float>(bytes, i); break;
    case onnx::TensorProto::DOUBLE: out[i] = readAt<double>(bytes, i); break;
    case onnx::TensorProto::INT64: out[i] = (double)readAt<int64_t>(bytes, i); break;
    case onnx::TensorProto::INT32: out[i] = readAt<int32_t>(bytes, i); break;
    case onnx::TensorProto::INT8: out[i] = readAt<int8_t>(bytes, i); break;
    case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL:
      out[i] = readAt<uint8_t>(bytes, i);
      break;
    default: throw ImportError("constant of unsupported element type");
    }
  }
  return out;
}

std::vector<int64_t> ConstTensor::asInts() const {
  if (dtype == onnx::TensorProto::INT64) {
    std::vector<int64_t> out(numElements());
    if (!out.empty())
      std::memcpy(out.data(), bytes.data(), out.size() * 8);
    return out;
  }
  if (dtype == onnx::TensorProto::FLOAT || dtype == onnx::TensorProto::DOUBLE)
    throw ImportError("expected an integer constant");
  std::vector<double> values = asDoubles();
  return std::vector<int64_t>(values.begin(), values.end());
}

static ConstTensor makeInt64(std::vector<int64_t> shape, const std::vector<int64_t> &values) {
  ConstTensor t;
  t.dtype = onnx::TensorProto::INT64;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * 8);
  if (!values.empty())
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

ConstTensor constFromProto(const onnx::TensorProto &proto) {
  ConstTensor t;
  t.dtype = proto.data_type();
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  if (!isConstantDtype(t.dtype))
    throw ImportError("tensor '" + proto.name() + "' has unsupported element type " +
                      std::to_string(t.dtype));
  size_t elem = dtypeBytes(t.dtype);
  // validateModel has checked the size and the data against the dims, and loadExternalData
  // has inlined external data.
  auto bytes = checkedTensorBytes(t.shape, elem);
  if (!bytes || proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw ImportError("internal: tensor '" + proto.name() + "' escaped model validation");
  int64_t count = *bytes / elem;
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
      switch (t.dtype) {
      case onnx::TensorProto::FLOAT: { float f = v; std::memcpy(&t.bytes[i * 4], &f, 4); break; }
      case onnx::TensorProto::DOUBLE: { double d = v; std::memcpy(&t.bytes[i * 8], &d, 8); break; }
      case onnx::TensorProto::INT64: { int64_t x = v; std::memcpy(&t.bytes[i * 8], &x, 8); break; }
      case onnx::TensorProto::INT32: { int32_t x = v; std::memcpy(&t.bytes[i * 4], &x, 4); break; }
      default: t.bytes[i] = static_cast<char>(v);
      }
    }
  };
  switch (t.dtype) {
  case onnx::TensorProto::FLOAT: fill(proto.float_data()); break;
  case onnx::TensorProto::DOUBLE: fill(proto.double_data()); break;
  case onnx::TensorProto::INT64: fill(proto.int64_data()); break;
  default: fill(proto.int32_data()); break;
  }
  return t;
}

static ConstTensor constantNodeValue(const onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) {
    if (a.name() == "value")
      return constFromProto(a.t());
    if (a.name() == "value_int")
      return makeInt64({}, {a.i()});
    if (a.name() == "value_ints")
      return makeInt64({a.ints_size()}, {a.ints().begin(), a.ints().end()});
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

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw ImportError("axis " + std::to_string(axis) + " out of range for rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::optional<ConstTensor>
foldShapeNode(const onnx::NodeProto &node,
              const std::function<const ConstTensor *(const std::string &)> &constOf,
              const std::function<mlir::RankedTensorType(const std::string &)> &typeOf) {
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
      type = typeOf(node.input(0));
    } catch (const ImportError &) {
      return std::nullopt; // not static: the node stays and is reported if it is needed
    }
    if (op == "Size")
      return makeInt64({}, {type.getNumElements()});
    std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
    int64_t rank = dims.size();
    int64_t start = intAttr("start", 0), end = intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> sliced(dims.begin() + start, dims.begin() + std::max(start, end));
    return makeInt64({(int64_t)sliced.size()}, sliced);
  }
  // The rest fold only int64 index math whose inputs are all constants.
  std::vector<const ConstTensor *> inputs;
  for (const auto &name : node.input()) {
    const ConstTensor *c = name.empty() ? nullptr : constOf(name);
    if (!c || c->dtype != onnx::TensorProto::INT64)
      return std::nullopt;
    inputs.push_back(c);
  }
  if (inputs.empty())
    return std::nullopt;
  const ConstTensor &x = *inputs[0];
  if (op == "Identity")
    return x;
  if (op == "Concat") {
    std::vector<int64_t> all;
    for (const auto *in : inputs) {
      if (in->shape.size() != 1)
        return std::nullopt;
      auto v = in->asInts();
      all.insert(all.end(), v.begin(), v.end());
    }
    return makeInt64({(int64_t)all.size()}, all);
  }
  // Scalar <-> one-element vector, the shape-math idiom exporters emit.
  if (op == "Unsqueeze" && x.shape.empty())
    return makeInt64({1}, x.asInts());
  if (op == "Squeeze" && x.shape == std::vector<int64_t>{1})
    return makeInt64({}, x.asInts());
  if (op == "Gather" && x.shape.size() == 1 && inputs.size() == 2) {
    auto data = x.asInts(), idx = inputs[1]->asInts();
    std::vector<int64_t> out;
    for (int64_t i : idx) {
      int64_t j = i < 0 ? i + (int64_t)data.size() : i;
      if (j < 0 || j >= (int64_t)data.size())
        throw ImportError("index " + std::to_string(i) + " is out of range for axis 0 of size " +
                          std::to_string(data.size()));
      out.push_back(data[j]);
    }
    normalizeAxis(intAttr("axis", 0), 1);
    return makeInt64(inputs[1]->shape, out);
  }
  return std::nullopt;
}

} // namespace dlc
