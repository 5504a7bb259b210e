// `dlc inspect`: what a model is, read straight from the protobuf (no import needed).
#include "compiler/driver/Driver.h"
#include "compiler/import/ModelCheck.h"

#include "onnx/onnx_pb.h"

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace dlc {
namespace {

std::string describeType(const onnx::TypeProto &type) {
  if (type.has_sequence_type())
    return "sequence of " + describeType(type.sequence_type().elem_type());
  if (type.has_optional_type())
    return "optional " + describeType(type.optional_type().elem_type());
  if (!type.has_tensor_type())
    return "(non-tensor)";
  const auto &t = type.tensor_type();
  std::string s = dtypeName(t.elem_type()) + "[";
  for (int i = 0; t.has_shape() && i < t.shape().dim_size(); ++i) {
    const auto &d = t.shape().dim(i);
    // A negative value is an exporter's "unknown" (Paddle writes -1).
    s += (i ? "," : "") + (d.has_dim_value() && d.dim_value() >= 0 ? std::to_string(d.dim_value())
                           : d.dim_param().empty()                 ? "?"
                                                                   : d.dim_param());
  }
  return s + "]";
}

} // namespace

int inspectCommand(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  onnx::ModelProto model;
  if (!file || !model.ParseFromString(bytes.str()) || !model.has_graph()) {
    std::cerr << "dlc: error: " << path
              << ": not a valid ONNX model (truncated file or not an ONNX ModelProto)\n";
    return 1;
  }
  const auto &graph = model.graph();
  std::cout << "model: " << path << "\n";
  std::cout << "ir_version: " << model.ir_version() << "\n";
  for (const auto &opset : model.opset_import())
    std::cout << "opset: " << (opset.domain().empty() ? "ai.onnx" : opset.domain()) << " "
              << opset.version() << "\n";
  if (!model.producer_name().empty())
    std::cout << "producer: " << model.producer_name() << " " << model.producer_version()
              << "\n";
  std::set<std::string> initializers;
  int64_t params = 0, paramBytes = 0;
  auto count = [&](const onnx::TensorProto &tensor) {
    int64_t n = 1;
    for (int64_t d : tensor.dims())
      n *= d;
    params += n;
    paramBytes += n * std::max<int64_t>(1, dtypeBytes(tensor.data_type()));
  };
  for (const auto &init : graph.initializer()) {
    initializers.insert(init.name());
    count(init);
  }
  // Some exporters (Paddle's) hold the weights in Constant nodes instead of initializers.
  int constantNodes = 0;
  for (const auto &node : graph.node())
    if (node.op_type() == "Constant" && node.domain().empty())
      for (const auto &attribute : node.attribute())
        if (attribute.name() == "value" && attribute.has_t()) {
          count(attribute.t());
          ++constantNodes;
        }
  std::cout << "inputs:\n";
  for (const auto &in : graph.input())
    if (!initializers.count(in.name()))
      std::cout << "  " << in.name() << ": " << describeType(in.type())
                << (in.type().has_sequence_type()
                        ? " (pin its length and element shapes with --sequence " + in.name() +
                              "=AxB,CxD)"
                    : in.type().has_optional_type()
                        ? " (holds its value unless --absent " + in.name() + ")"
                        : "")
                << "\n";
  std::cout << "outputs:\n";
  for (const auto &out : graph.output())
    std::cout << "  " << out.name() << ": " << describeType(out.type()) << "\n";
  std::map<std::string, int> histogram;
  for (const auto &node : graph.node())
    ++histogram[(node.domain().empty() ? "" : node.domain() + ".") + node.op_type()];
  std::cout << "nodes: " << graph.node_size() << "\n";
  for (const auto &[op, count] : histogram)
    std::cout << "  " << op << ": " << count << "\n";
  std::cout << "parameters: " << params << " (" << paramBytes << " bytes in "
            << graph.initializer_size() << " initializers and " << constantNodes
            << " Constant nodes)\n";
  std::vector<SymbolicDim> symbolic = symbolicInputDims(graph);
  std::cout << "symbolic dims:" << (symbolic.empty() ? " none" : "") << "\n";
  for (const auto &dim : symbolic)
    std::cout << "  " << dim.input << " dim " << dim.index << " ("
              << (dim.name.empty() ? "unknown" : "'" + dim.name + "'") << "): pin with "
              << pinningOption(graph, dim) << "\n";
  return 0;
}

} // namespace dlc
