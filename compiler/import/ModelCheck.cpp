#include "compiler/import/ModelCheck.h"
#include "compiler/import/OnnxVersions.h"
#include "compiler/import/Importer.h"
#include "dialects/Sizes.h"

#include "onnx/defs/schema.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sys/stat.h>

namespace dlc {

std::string nodeLabel(const onnx::NodeProto &node) {
  std::string name = node.name();
  if (name.empty() && node.output_size())
    name = node.output(0);
  return "node '" + name + "' (" + node.op_type() + ")";
}

std::string dtypeName(int32_t dtype) {
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(dtype));
  // Types newer than Debian's onnx.proto (1.12), numbered as in onnx 1.23.
  static const char *const newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                      "FLOAT8E8M0", "UINT2", "INT2"};
  if (dtype >= 17 && dtype < 17 + int32_t(std::size(newer)))
    return newer[dtype - 17];
  return std::to_string(dtype);
}

int64_t dtypeBytes(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8: case onnx::TensorProto::BOOL: return 1;
  case onnx::TensorProto::UINT16: case onnx::TensorProto::INT16: case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: return 2;
  case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
  case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::COMPLEX64: return 8;
  case onnx::TensorProto::COMPLEX128: return 16;
  case kFloat8E4M3FN: case kFloat8E4M3FNUZ: case kFloat8E5M2: case kFloat8E5M2FNUZ:
  case kFloat8E8M0: case kUint4: case kInt4: case kFloat4E2M1: case kUint2: case kInt2: return 1;
  default: return 0;
  }
}

int packedBits(int32_t dtype) {
  switch (dtype) {
  case kUint4: case kInt4: case kFloat4E2M1: return 4;
  case kUint2: case kInt2: return 2;
  default: return 0;
  }
}

std::string attributeTypeName(int type) {
  return onnx::AttributeProto::AttributeType_IsValid(type)
             ? onnx::AttributeProto::AttributeType_Name(
                   static_cast<onnx::AttributeProto::AttributeType>(type))
             : std::to_string(type);
}

namespace {

using onnx::AttributeProto;
using onnx::TensorProto;


// How many entries of its typed field (float_data, int64_data, ...) a tensor of `dtype` and
// `count` elements holds, and how many it actually holds.
std::pair<int64_t, int64_t> typedValueCounts(const TensorProto &t, int64_t count) {
  switch (t.data_type()) {
  case TensorProto::FLOAT: return {count, t.float_data_size()};
  case TensorProto::COMPLEX64: return {2 * count, t.float_data_size()};
  case TensorProto::DOUBLE: return {count, t.double_data_size()};
  case TensorProto::COMPLEX128: return {2 * count, t.double_data_size()};
  case TensorProto::INT64: return {count, t.int64_data_size()};
  case TensorProto::UINT32: case TensorProto::UINT64: return {count, t.uint64_data_size()};
  case TensorProto::STRING: return {count, t.string_data_size()};
  default: {
    int perEntry = packedBits(t.data_type()) ? 8 / packedBits(t.data_type()) : 1;
    return {(count + perEntry - 1) / perEntry, t.int32_data_size()};
  }
  }
}

bool isKnownDtype(int32_t dtype) {
  bool named = TensorProto::DataType_IsValid(dtype) || (dtype >= kFloat8E4M3FN && dtype <= kInt2);
  return dtype != TensorProto::UNDEFINED && named &&
         (dtype == TensorProto::STRING || dtypeBytes(dtype) > 0);
}

// The tensor's byte size when its dtype and dims are sound; otherwise an error in `why`.
std::optional<int64_t> tensorByteSize(const TensorProto &t, std::string &why) {
  if (!isKnownDtype(t.data_type())) {
    why = "has unknown data type " + dtypeName(t.data_type());
    return std::nullopt;
  }
  for (int64_t d : t.dims())
    if (d < 0) {
      why = "has negative dim " + std::to_string(d);
      return std::nullopt;
    }
  int64_t elementBytes = t.data_type() == TensorProto::STRING ? 1 : dtypeBytes(t.data_type());
  auto bytes = checkedTensorBytes(t.dims(), elementBytes);
  if (!bytes)
    why = "is too large: dims " + dimsString(t.dims()) + " of " + dtypeName(t.data_type()) +
          " exceed dlc's limit of " + kMaxTensorBytesText;
  return bytes;
}

// Each tensor stored in the graph: initializers and tensor-valued node attributes, with the
// label errors name it by.
// Subgraphs are walked too (their tensors labelled by the node that holds them).
void forEachTensor(onnx::GraphProto &graph,
                   const std::function<void(TensorProto &, const std::string &)> &visit,
                   const std::string &where = "") {
  for (auto &t : *graph.mutable_initializer())
    visit(t, where + "initializer '" + t.name() + "'");
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      std::string label = where + nodeLabel(node) + ": attribute '" + attr.name() + "'";
      if (attr.has_t())
        visit(*attr.mutable_t(), label);
      for (auto &t : *attr.mutable_tensors())
        visit(t, label);
      if (attr.has_g())
        forEachTensor(*attr.mutable_g(), visit, label + ": ");
      for (auto &g : *attr.mutable_graphs())
        forEachTensor(g, visit, label + ": ");
    }
}

std::string folderOf(const std::string &modelPath) {
  size_t slash = modelPath.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : modelPath.substr(0, slash);
}

bool parseByteCount(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  value = std::stoll(text);
  return true;
}

// Replaces `t`'s external reference by the bytes it names; returns an error or "".
std::string loadExternal(TensorProto &t, const std::string &folder) {
  std::string location, offsetText, lengthText;
  for (const auto &entry : t.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offsetText = entry.value();
    else if (entry.key() == "length")
      lengthText = entry.value();
  }
  if (location.empty())
    return "external data has no location";
  std::string why;
  auto needed = tensorByteSize(t, why);
  if (!needed)
    return why;
  if (t.data_type() == TensorProto::STRING)
    return "external data of STRING tensors is not supported";
  // The path must stay inside the model's folder: no absolute paths, no "..", and no symlink
  // that resolves elsewhere.
  bool escapes = location[0] == '/' || location.find('\0') != std::string::npos;
  for (size_t start = 0; !escapes && start <= location.size();) {
    size_t end = location.find('/', start);
    if (end == std::string::npos)
      end = location.size();
    escapes = location.compare(start, end - start, "..") == 0 && end - start == 2;
    start = end + 1;
  }
  char folderReal[PATH_MAX], fileReal[PATH_MAX];
  if (!escapes && !::realpath(folder.c_str(), folderReal))
    return "cannot resolve the model's folder '" + folder + "'";
  std::string file = folder + "/" + location;
  if (!escapes && !::realpath(file.c_str(), fileReal))
    return "external data file '" + location + "' cannot be opened";
  std::string prefix = std::string(folderReal) + (folderReal[1] ? "/" : "");
  if (escapes || std::string(fileReal).compare(0, prefix.size(), prefix) != 0)
    return "external data file '" + location + "' is outside the model's folder";
  struct stat status;
  if (::stat(fileReal, &status) != 0 || !S_ISREG(status.st_mode))
    return "external data file '" + location + "' cannot be opened";
  int64_t size = status.st_size, offset = 0, length = 0;
  if (!offsetText.empty() && !parseByteCount(offsetText, offset))
    return "external data offset '" + offsetText + "' is not a byte count";
  if (!lengthText.empty() && !parseByteCount(lengthText, length))
    return "external data length '" + lengthText + "' is not a byte count";
  if (lengthText.empty())
    length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    return "external data offset " + std::to_string(offset) + " + length " +
           std::to_string(length) + " exceeds '" + location + "' (" + std::to_string(size) +
           " bytes)";
  if (length != *needed)
    return "external data holds " + std::to_string(length) + " bytes but dims " +
           dimsString(t.dims()) + " of " + dtypeName(t.data_type()) + " need " +
           std::to_string(*needed);
  std::ifstream in(fileReal, std::ios::binary);
  std::string bytes(static_cast<size_t>(length), '\0');
  if (!in.seekg(offset) || !in.read(bytes.data(), length))
    return "cannot read external data file '" + location + "'";
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(TensorProto::DEFAULT);
  return "";
}

// Data size against dims; returns an error or "".
std::string checkTensor(const TensorProto &t) {
  std::string why;
  auto bytes = tensorByteSize(t, why);
  if (!bytes)
    return why;
  if (t.data_location() == TensorProto::EXTERNAL)
    return ""; // loadExternalData has already said why it is still external
  if (t.has_segment())
    return "segmented tensors are not supported";
  int64_t count = *checkedElementCount(t.dims());
  if (t.has_raw_data()) {
    if (t.data_type() == TensorProto::STRING)
      return "STRING tensors cannot use raw_data";
    int bits = packedBits(t.data_type());
    int64_t rawBytes = bits ? (count * bits + 7) / 8 : *bytes;
    if ((int64_t)t.raw_data().size() != rawBytes)
      return "raw_data holds " + std::to_string(t.raw_data().size()) + " bytes but dims " +
             dimsString(t.dims()) + " of " + dtypeName(t.data_type()) + " need " +
             std::to_string(rawBytes);
    return "";
  }
  auto [expected, actual] = typedValueCounts(t, count);
  if (actual != expected)
    return "holds " + std::to_string(actual) + " values but dims " + dimsString(t.dims()) +
           " need " + std::to_string(expected);
  return "";
}

// Attributes that window arithmetic divides by or loops over, by name: conv and pooling ops
// use these names for these meanings only.
std::string checkAttributeRange(const onnx::NodeProto &node, const AttributeProto &attr) {
  const std::string &name = attr.name();
  bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
  bool nonNegative = name == "pads";
  if ((positive || nonNegative) && attr.type() == AttributeProto::INTS)
    for (int64_t v : attr.ints())
      if (positive ? v <= 0 : v < 0)
        return "attribute '" + name + "' must be " + (positive ? "positive" : "non-negative") +
               " (got " + std::to_string(v) + ")";
  if (name == "group" && attr.type() == AttributeProto::INT &&
      (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") && attr.i() <= 0)
    return "attribute 'group' must be positive (got " + std::to_string(attr.i()) + ")";
  return "";
}

// The attributes that hold the bodies of the control-flow ops dlc imports (by unrolling).
bool isControlFlowBody(const onnx::NodeProto &node, const AttributeProto &attr) {
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  const std::string &op = node.op_type(), &name = attr.name();
  return defaultDomain && attr.type() == AttributeProto::GRAPH && attr.has_g() &&
         ((op == "If" && (name == "then_branch" || name == "else_branch")) ||
          ((op == "Loop" || op == "Scan" || op == "SequenceMap") && name == "body"));
}

void validateNodeAttributes(const onnx::NodeProto &node, int opset,
                            std::vector<std::string> &errors) {
  std::string label = nodeLabel(node) + ": ";
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  const onnx::OpSchema *schema =
      defaultDomain ? onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "") : nullptr;
  // Debian's library knows ops up to opset 17: its schema checks a node only when it is the
  // version the model's opset selects.
  if (schema && schema->since_version() != onnxOpVersion(node.op_type(), opset))
    schema = nullptr;
  size_t before = errors.size();
  std::set<std::string> seen;
  for (const auto &attr : node.attribute()) {
    if (!seen.insert(attr.name()).second)
      errors.push_back(label + "attribute '" + attr.name() + "' is given twice");
    bool holdsGraph = attr.type() == AttributeProto::GRAPH ||
                      attr.type() == AttributeProto::GRAPHS || attr.has_g() || attr.graphs_size();
    if (holdsGraph && !isControlFlowBody(node, attr))
      errors.push_back(label + "attribute '" + attr.name() +
                       "' holds a subgraph; dlc supports subgraphs only as the bodies of If, "
                       "Loop, Scan and SequenceMap");
    if (attr.type() == AttributeProto::SPARSE_TENSOR ||
        attr.type() == AttributeProto::SPARSE_TENSORS || attr.has_sparse_tensor() ||
        attr.sparse_tensors_size())
      errors.push_back(label + "attribute '" + attr.name() +
                       "': sparse tensors are not supported");
    if (!schema)
      continue;
    auto declared = schema->attributes().find(attr.name());
    if (declared != schema->attributes().end() && attr.type() != declared->second.type) {
      errors.push_back(label + "attribute '" + attr.name() + "' must be " +
                       attributeTypeName(declared->second.type) + ", got " +
                       attributeTypeName(attr.type()));
      continue;
    }
    if (std::string range = checkAttributeRange(node, attr); !range.empty())
      errors.push_back(label + range);
  }
  if (!schema || errors.size() != before)
    return;
  // The rest of ONNX's own per-node check: required attributes, input and output counts.
  try {
    schema->Verify(node);
  } catch (const std::exception &e) {
    std::string message = e.what();
    errors.push_back(label + message.substr(0, message.find('\n')));
  }
}

} // namespace

// A dim without a value: symbolic, or negative (how some exporters write "unknown").
bool isOpen(const onnx::TensorShapeProto::Dimension &dim) {
  return !dim.has_dim_value() || dim.dim_value() < 0;
}

namespace {

void validateValueInfo(const onnx::ValueInfoProto &info, const std::string &label,
                       std::vector<std::string> &errors) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape())
    return;
  const auto &tensor = info.type().tensor_type();
  std::vector<int64_t> dims;
  for (const auto &dim : tensor.shape().dim()) {
    // Symbolic, or negative: how exporters (Paddle's) write "unknown". Either is pinned by
    // --dim or --input-shape, or reported where the value is used.
    if (isOpen(dim))
      return;
    dims.push_back(dim.dim_value());
  }
  int64_t elementBytes = std::max<int64_t>(1, dtypeBytes(tensor.elem_type()));
  if (!checkedTensorBytes(dims, elementBytes))
    errors.push_back(label + " is too large: dims " + dimsString(dims) + " of " +
                     dtypeName(tensor.elem_type()) + " exceed dlc's limit of " +
                     kMaxTensorBytesText);
}

} // namespace

void removeDeadNodes(onnx::GraphProto &graph) {
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      producer[out] = i;
  std::vector<char> live(graph.node_size(), 0);
  std::vector<std::string> work;
  for (const auto &out : graph.output())
    work.push_back(out.name());
  while (!work.empty()) {
    auto it = producer.find(work.back());
    work.pop_back();
    if (it == producer.end() || live[it->second])
      continue;
    live[it->second] = 1;
    for (const auto &in : graph.node(it->second).input())
      work.push_back(in);
    for (const auto &in : implicitInputs(graph.node(it->second)))
      work.push_back(in);
  }
  int kept = 0;
  for (int i = 0; i < graph.node_size(); ++i)
    if (live[i])
      graph.mutable_node()->SwapElements(kept++, i);
  graph.mutable_node()->DeleteSubrange(kept, graph.node_size() - kept);
}

void loadExternalData(onnx::ModelProto &model, const std::string &modelPath,
                      std::vector<std::string> &errors) {
  std::string folder = folderOf(modelPath);
  forEachTensor(*model.mutable_graph(), [&](TensorProto &t, const std::string &label) {
    if (t.data_location() != TensorProto::EXTERNAL)
      return;
    if (std::string error = loadExternal(t, folder); !error.empty())
      errors.push_back(label + ": " + error);
  });
}

namespace {

// Subgraphs nest no deeper than this (each level is a recursion of the checks and the import).
constexpr int kMaxGraphDepth = 16;

// `graph` at `depth` (0: the model's graph), where `outer` holds the names the enclosing graphs
// define before the node that holds it.
void validateGraph(const onnx::GraphProto &graph, const std::set<std::string> &outer, int depth,
                   int opset, std::vector<std::string> &errors) {
  const bool top = depth == 0;
  const std::string where = top ? "graph" : "subgraph '" + graph.name() + "'";
  if (graph.output_size() == 0)
    errors.push_back(where + " has no outputs");
  if (graph.sparse_initializer_size())
    errors.push_back("sparse initializers are not supported");

  // Names defined before the first node runs.
  std::set<std::string> defined = outer, inputs, initializers;
  for (const auto &init : graph.initializer())
    if (!initializers.insert(init.name()).second)
      errors.push_back("initializer '" + init.name() + "' is declared twice");
  for (const auto &in : graph.input()) {
    if (in.name().empty())
      errors.push_back("a " + where + " input has no name");
    else if (!inputs.insert(in.name()).second)
      errors.push_back(where + " input '" + in.name() + "' is declared twice");
    // Every input of the model needs a tensor type (initializers, listed as inputs by old
    // exporters, bring their own); a body's inputs take the types of what is bound to them.
    bool typed = in.type().has_tensor_type() &&
                 in.type().tensor_type().elem_type() != TensorProto::UNDEFINED;
    // A body's sequence input is bound to a sequence of the enclosing graph.
    // (resolveOptionalInputs has made the graph's optional inputs present or absent; a
    // body's are bound like its sequences.)
    const char *kind = in.type().has_sequence_type() ? (top ? "a sequence" : nullptr)
                       : in.type().has_map_type()    ? "a map"
                                                     : nullptr;
    if (kind)
      errors.push_back(where + " input '" + in.name() + "' is " + kind +
                       (top && in.type().has_sequence_type()
                            ? "; pin its length and element shapes with --sequence " + in.name() +
                                  "=AxB,CxD"
                            : "; dlc supports tensor inputs only"));
    else if (top && !typed && !initializers.count(in.name()))
      errors.push_back("graph input '" + in.name() + "' has no tensor type");
    validateValueInfo(in, where + " input '" + in.name() + "'", errors);
  }
  for (const auto &out : graph.output())
    validateValueInfo(out, where + " output '" + out.name() + "'", errors);
  for (const auto &info : graph.value_info())
    validateValueInfo(info, "value '" + info.name() + "'", errors);
  defined.insert(inputs.begin(), inputs.end());
  defined.insert(initializers.begin(), initializers.end());

  // Static single assignment: each name is produced once, by one node, and never shadows a
  // graph input or initializer.
  std::map<std::string, const onnx::NodeProto *> producer;
  for (const auto &node : graph.node())
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      std::string label = nodeLabel(node) + ": output '" + out + "' ";
      if (auto [it, fresh] = producer.emplace(out, &node); !fresh)
        errors.push_back(label + "is already produced by " + nodeLabel(*it->second));
      else if (inputs.count(out))
        errors.push_back(label + "shadows a graph input");
      else if (initializers.count(out))
        errors.push_back(label + "shadows an initializer");
    }
  // Topological order: every input is defined by the time its node runs.
  for (const auto &node : graph.node()) {
    for (const auto &in : node.input()) {
      if (in.empty() || defined.count(in))
        continue;
      auto it = producer.find(in);
      if (it != producer.end())
        errors.push_back(nodeLabel(node) + ": input '" + in + "' is used before " +
                         nodeLabel(*it->second) +
                         " produces it (nodes must be topologically sorted; a cycle cannot be)");
      else
        errors.push_back(nodeLabel(node) + ": input '" + in +
                         "' is not defined (no node, graph input or initializer produces it)");
    }
    validateNodeAttributes(node, opset, errors);
    for (const auto &attr : node.attribute())
      if (isControlFlowBody(node, attr)) {
        if (depth + 1 > kMaxGraphDepth) {
          errors.push_back(nodeLabel(node) + ": subgraphs nest deeper than " +
                           std::to_string(kMaxGraphDepth) + " levels");
          break;
        }
        validateGraph(attr.g(), defined, depth + 1, opset, errors);
      }
    for (const auto &out : node.output())
      if (!out.empty())
        defined.insert(out);
  }
  for (const auto &out : graph.output())
    if (!defined.count(out.name()))
      errors.push_back(where + " output '" + out.name() +
                       "' is not produced by any node, graph input or initializer");
}

} // namespace

void validateModel(onnx::ModelProto &model, int opset, std::vector<std::string> &errors) {
  forEachTensor(*model.mutable_graph(), [&](const TensorProto &t, const std::string &label) {
    if (std::string error = checkTensor(t); !error.empty())
      errors.push_back(label + ": " + error);
  });
  validateGraph(model.graph(), {}, 0, opset, errors);
}

std::set<std::string> definedNames(const onnx::GraphProto &graph) {
  std::set<std::string> names;
  for (const auto &in : graph.input())
    names.insert(in.name());
  for (const auto &init : graph.initializer())
    names.insert(init.name());
  for (const auto &node : graph.node())
    names.insert(node.output().begin(), node.output().end());
  names.erase("");
  return names;
}

std::vector<std::string> implicitInputs(const onnx::NodeProto &node) {
  std::vector<std::string> names;
  for (const auto &attr : node.attribute()) {
    if (!attr.has_g())
      continue;
    const onnx::GraphProto &g = attr.g();
    std::set<std::string> local = definedNames(g);
    auto use = [&](const std::string &name) {
      if (!name.empty() && !local.count(name) &&
          std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    };
    for (const auto &inner : g.node()) {
      for (const auto &in : inner.input())
        use(in);
      for (const auto &in : implicitInputs(inner))
        use(in);
    }
    for (const auto &out : g.output())
      use(out.name());
  }
  return names;
}

// Graph inputs that are not initializers (old models list initializers as inputs too).
std::vector<onnx::ValueInfoProto *> dataInputs(onnx::GraphProto &graph) {
  std::set<std::string> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  std::vector<onnx::ValueInfoProto *> inputs;
  for (auto &in : *graph.mutable_input())
    if (!initializers.count(in.name()))
      inputs.push_back(&in);
  return inputs;
}

std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const auto &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}


std::vector<SymbolicDim> symbolicInputDims(const onnx::GraphProto &graph) {
  std::vector<SymbolicDim> dims;
  for (auto *in : dataInputs(const_cast<onnx::GraphProto &>(graph))) {
    if (!in->type().has_tensor_type() || !in->type().tensor_type().has_shape())
      continue;
    const auto &shape = in->type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i)
      if (isOpen(shape.dim(i)))
        dims.push_back({in->name(), i, shape.dim(i).dim_param()});
  }
  return dims;
}

std::string pinningOption(const onnx::GraphProto &graph, const SymbolicDim &dim) {
  if (!dim.name.empty())
    return "--dim " + dim.name + "=N";
  for (const auto &in : graph.input())
    if (in.name() == dim.input) {
      std::string dims;
      for (const auto &d : in.type().tensor_type().shape().dim())
        dims += (dims.empty() ? "" : "x") + (isOpen(d) ? "N" : std::to_string(d.dim_value()));
      return "--input-shape " + dim.input + "=" + dims;
    }
  return "--input-shape " + dim.input + "=...";
}

} // namespace dlc
