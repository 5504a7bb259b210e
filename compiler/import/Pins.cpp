// The options that fix what a model takes (--absent, --sequence, --input-value, --dim and
// --input-shape), applied to the ModelProto before it is imported.
#include "compiler/import/Importer.h"
#include "compiler/import/ModelCheck.h"
#include "dialects/Sizes.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace dlc {

using onnx::AttributeProto;
using onnx::TensorProto;

void resolveOptionalInputs(onnx::ModelProto &model, const ShapePins &pins,
                           std::vector<std::string> &errors) {
  auto &graph = *model.mutable_graph();
  std::set<std::string> resolved;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const auto &in : graph.input()) {
    if (!in.type().has_optional_type()) {
      *inputs.Add() = in;
      continue;
    }
    resolved.insert(in.name());
    const onnx::TypeProto &element = in.type().optional_type().elem_type();
    if (!pins.absent.count(in.name())) {
      onnx::ValueInfoProto &present = *inputs.Add();
      present = in;
      *present.mutable_type() = element;
      continue;
    }
    onnx::NodeProto &node = *nodes.Add();
    node.set_name(in.name());
    node.set_op_type("Optional");
    node.add_output(in.name());
    auto *type = node.add_attribute();
    type->set_name("type");
    type->set_type(AttributeProto::TYPE_PROTO);
    *type->mutable_tp() = element;
  }
  for (const auto &name : pins.absent)
    if (!resolved.count(name))
      errors.push_back("--absent: '" + name + "' is not an optional graph input");
  graph.mutable_input()->Swap(&inputs);
  for (const auto &node : graph.node())
    *nodes.Add() = node;
  graph.mutable_node()->Swap(&nodes);
}

void expandSequenceInputs(onnx::ModelProto &model, const ShapePins &pins,
                          std::vector<std::string> &errors) {
  if (pins.sequences.empty())
    return;
  auto &graph = *model.mutable_graph();
  std::set<std::string> taken = definedNames(graph), pinned;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const auto &in : graph.input()) {
    auto pin = pins.sequences.find(in.name());
    if (pin == pins.sequences.end() || !in.type().has_sequence_type() ||
        !in.type().sequence_type().elem_type().has_tensor_type()) {
      *inputs.Add() = in;
      continue;
    }
    pinned.insert(in.name());
    const auto &element = in.type().sequence_type().elem_type().tensor_type();
    onnx::NodeProto &node = *nodes.Add();
    node.set_name(in.name());
    node.add_output(in.name());
    node.set_op_type(pin->second.empty() ? "SequenceEmpty" : "SequenceConstruct");
    if (pin->second.empty()) {
      auto *dtype = node.add_attribute();
      dtype->set_name("dtype");
      dtype->set_type(AttributeProto::INT);
      dtype->set_i(element.elem_type());
    }
    for (size_t i = 0; i < pin->second.size(); ++i) {
      const std::vector<int64_t> &dims = pin->second[i];
      std::string name = in.name() + "[" + std::to_string(i) + "]";
      std::string what = "--sequence " + in.name() + ": element " + std::to_string(i);
      if (taken.count(name))
        errors.push_back(what + ": the name '" + name + "' is taken by another value");
      if (element.has_shape() && element.shape().dim_size() != (int)dims.size())
        errors.push_back(what + " has rank " + std::to_string(dims.size()) +
                         "; the sequence's elements have rank " +
                         std::to_string(element.shape().dim_size()));
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < 1)
          errors.push_back(what + ": dims must be >= 1");
        else if (element.has_shape() && (int)d < element.shape().dim_size() &&
                 !isOpen(element.shape().dim(d)) && element.shape().dim(d).dim_value() != dims[d])
          errors.push_back(what + ": dim " + std::to_string(d) + " is declared as " +
                           std::to_string(element.shape().dim(d).dim_value()));
      }
      auto *tensor = inputs.Add();
      tensor->set_name(name);
      tensor->mutable_type()->mutable_tensor_type()->set_elem_type(element.elem_type());
      auto *shape = tensor->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
      node.add_input(name);
    }
  }
  for (const auto &[name, elements] : pins.sequences)
    if (!pinned.count(name))
      errors.push_back("--sequence: '" + name + "' is not a graph input holding a sequence of "
                       "tensors");
  graph.mutable_input()->Swap(&inputs);
  for (const auto &node : graph.node())
    *nodes.Add() = node;
  graph.mutable_node()->Swap(&nodes);
}

namespace {

// `text` as one element of `dtype`, appended to `bytes`; false when it does not parse as that
// type or does not fit it.
bool appendElement(int32_t dtype, const std::string &text, std::string &bytes) {
  auto put = [&](auto v) {
    bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
    return true;
  };
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  if (dtype == TensorProto::FLOAT || dtype == TensorProto::DOUBLE) {
    double v = std::strtod(text.c_str(), &end);
    if (*end || errno == ERANGE)
      return false;
    if (dtype == TensorProto::DOUBLE)
      return put(v);
    return std::isfinite(v) && !std::isfinite(float(v)) ? false : put(float(v));
  }
  if (dtype == TensorProto::BOOL) {
    if (text == "true" || text == "1")
      return put(uint8_t(1));
    return text == "false" || text == "0" ? put(uint8_t(0)) : false;
  }
  if (dtype == TensorProto::UINT64) {
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    return text[0] != '-' && !*end && errno != ERANGE && put(uint64_t(v));
  }
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end || errno == ERANGE)
    return false;
  auto fits = [&](auto zero) {
    using T = decltype(zero);
    return v >= (long long)std::numeric_limits<T>::min() &&
           (unsigned long long)v <= (unsigned long long)std::numeric_limits<T>::max() &&
           put(T(v));
  };
  switch (dtype) {
  case TensorProto::INT8: return fits(int8_t(0));
  case TensorProto::INT16: return fits(int16_t(0));
  case TensorProto::INT32: return fits(int32_t(0));
  case TensorProto::INT64: return put(int64_t(v));
  case TensorProto::UINT8: return v >= 0 && fits(uint8_t(0));
  case TensorProto::UINT16: return v >= 0 && fits(uint16_t(0));
  case TensorProto::UINT32: return v >= 0 && fits(uint32_t(0));
  }
  return false;
}

bool pinnableType(int32_t dtype) {
  switch (dtype) {
  case TensorProto::FLOAT: case TensorProto::DOUBLE: case TensorProto::BOOL:
  case TensorProto::INT8: case TensorProto::INT16: case TensorProto::INT32: case TensorProto::INT64:
  case TensorProto::UINT8: case TensorProto::UINT16: case TensorProto::UINT32:
  case TensorProto::UINT64:
    return true;
  }
  return false;
}

} // namespace

void pinInputValues(onnx::ModelProto &model, const ShapePins &pins,
                    std::vector<std::string> &errors) {
  if (pins.inputValues.empty())
    return;
  auto &graph = *model.mutable_graph();
  std::vector<std::string> inputNames;
  for (auto *in : dataInputs(graph))
    inputNames.push_back(in->name());
  std::set<std::string> pinned;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (auto *in : dataInputs(graph)) {
    auto pin = pins.inputValues.find(in->name());
    if (pin == pins.inputValues.end())
      continue;
    pinned.insert(in->name());
    const std::vector<std::string> &values = pin->second;
    std::string what = "--input-value " + in->name();
    if (!in->type().has_tensor_type() || !pinnableType(in->type().tensor_type().elem_type())) {
      errors.push_back(what + ": only tensors of bool, integer, float or double elements can "
                       "be pinned");
      continue;
    }
    const auto &tensorType = in->type().tensor_type();
    std::vector<int64_t> dims;
    if (auto shape = pins.inputShapes.find(in->name()); shape != pins.inputShapes.end()) {
      dims = shape->second;
    } else if (!tensorType.has_shape()) {
      errors.push_back(what + ": the input declares no shape; give it with --input-shape");
      continue;
    } else {
      const auto &declared = tensorType.shape().dim();
      bool open = std::any_of(declared.begin(), declared.end(), isOpen);
      if (open && declared.size() > 1) {
        errors.push_back(what + ": the input has open dims; give its shape with --input-shape");
        continue;
      }
      for (const auto &dim : declared)
        dims.push_back(isOpen(dim) ? int64_t(values.size()) : dim.dim_value());
    }
    int64_t count = 1;
    for (int64_t d : dims)
      count = d < 0 || (d && count > INT64_MAX / d) ? -1 : count * d;
    if (count != (int64_t)values.size()) {
      errors.push_back(what + ": " + std::to_string(values.size()) + " values given; its shape " +
                       dimsString(dims) + " holds " +
                       (count < 0 ? std::string("too many") : std::to_string(count)));
      continue;
    }
    onnx::TensorProto tensor;
    tensor.set_data_type(tensorType.elem_type());
    for (int64_t d : dims)
      tensor.add_dims(d);
    std::string bytes;
    for (const std::string &v : values)
      if (!appendElement(tensorType.elem_type(), v, bytes)) {
        errors.push_back(what + ": '" + v + "' is not a value of type " +
                         dtypeName(tensorType.elem_type()));
        break;
      }
    tensor.set_raw_data(bytes);
    onnx::NodeProto &node = *nodes.Add();
    node.set_name(in->name());
    node.set_op_type("Constant");
    node.add_output(in->name());
    auto *value = node.add_attribute();
    value->set_name("value");
    value->set_type(AttributeProto::TENSOR);
    *value->mutable_t() = std::move(tensor);
  }
  for (const auto &[name, values] : pins.inputValues)
    if (!pinned.count(name))
      errors.push_back("--input-value: '" + name + "' is not a graph input (inputs: " +
                       joined(inputNames) + ")");
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (const auto &in : graph.input())
    if (!pinned.count(in.name()))
      *inputs.Add() = in;
  graph.mutable_input()->Swap(&inputs);
  for (const auto &node : graph.node())
    *nodes.Add() = node;
  graph.mutable_node()->Swap(&nodes);
}

void pinShapes(onnx::ModelProto &model, const ShapePins &pins, std::vector<std::string> &errors) {
  auto &graph = *model.mutable_graph();
  std::vector<onnx::ValueInfoProto *> inputs = dataInputs(graph);
  std::vector<std::string> inputNames;
  for (auto *in : inputs)
    inputNames.push_back(in->name());
  for (const auto &[name, dims] : pins.inputShapes) {
    if (pins.inputValues.count(name)) // a constant now; pinInputValues took its shape
      continue;
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&name = name](auto *in) { return in->name() == name; });
    if (it == inputs.end()) {
      errors.push_back("--input-shape: '" + name + "' is not a graph input (inputs: " +
                       joined(inputNames) + ")");
      continue;
    }
    auto *shape = (*it)->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() && shape->dim_size() != (int)dims.size()) {
      errors.push_back("--input-shape: input '" + name + "' has rank " +
                       std::to_string(shape->dim_size()) + ", not " +
                       std::to_string(dims.size()));
      continue;
    }
    for (size_t i = 0; i < dims.size(); ++i)
      if (shape->dim_size() && !isOpen(shape->dim(i)) && shape->dim(i).dim_value() != dims[i])
        errors.push_back("--input-shape: input '" + name + "' declares dim " +
                         std::to_string(i) + " as " + std::to_string(shape->dim(i).dim_value()) +
                         ", not " + std::to_string(dims[i]));
    shape->clear_dim();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  // Named dims: on the inputs, and on the outputs and declared intermediate types, so that the
  // declared output types the importer checks carry the pinned values.
  std::set<std::string> used;
  auto pinNamed = [&](onnx::ValueInfoProto &value) {
    if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape())
      return;
    for (auto &dim : *value.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (auto it = pins.dims.find(dim.dim_param()); !dim.has_dim_value() && it != pins.dims.end()) {
        used.insert(it->first);
        dim.set_dim_value(it->second);
      }
  };
  for (auto *in : inputs)
    pinNamed(*in);
  for (auto &out : *graph.mutable_output())
    pinNamed(out);
  for (auto &info : *graph.mutable_value_info())
    pinNamed(info);
  std::vector<std::string> names;
  for (const auto &dim : symbolicInputDims(graph))
    if (!dim.name.empty())
      names.push_back(dim.name);
  for (const auto &[name, value] : pins.dims) {
    if (value < 1)
      errors.push_back("--dim " + name + "=" + std::to_string(value) + ": dims must be >= 1");
    else if (!used.count(name))
      errors.push_back("--dim: '" + name + "' is not a symbolic dim of the model's inputs "
                       "(symbolic: " + joined(names) + ")");
  }
  for (const auto &in : pins.inputShapes)
    for (int64_t d : in.second)
      if (d < 1)
        errors.push_back("--input-shape " + in.first + ": dims must be >= 1");
  for (const auto &dim : symbolicInputDims(graph))
    errors.push_back("graph input '" + dim.input + "': dim " + std::to_string(dim.index) +
                     (dim.name.empty() ? " is unknown" : " is symbolic ('" + dim.name + "')") +
                     "; pin it with " + pinningOption(graph, dim));
}

} // namespace dlc
