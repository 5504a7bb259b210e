#include "compiler/Importer.h"
#include "compiler/ImportContext.h"
#include "compiler/ModelCheck.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinDialect.h"
#include "onnx/shape_inference/implementation.h"

#include <fstream>
#include <set>
#include <sstream>

using namespace mlir;

namespace dlc {
namespace {

constexpr int kMinOpset = 7, kMaxOpset = 17;

Type elementTypeFor(MLIRContext &ctx, int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT: return Float32Type::get(&ctx);
  case onnx::TensorProto::DOUBLE: return Float64Type::get(&ctx);
  case onnx::TensorProto::INT64: return IntegerType::get(&ctx, 64);
  case onnx::TensorProto::INT32: return IntegerType::get(&ctx, 32);
  case onnx::TensorProto::INT8: return IntegerType::get(&ctx, 8);
  case onnx::TensorProto::UINT8: return IntegerType::get(&ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL: return IntegerType::get(&ctx, 1);
  default: return {};
  }
}

// ONNX reports "... (op_type:Conv, node name: c1): reason"; dlc's form is
// "node 'c1' (Conv): shape inference failed: reason".
std::string describeInferenceError(std::string message) {
  message = message.substr(0, message.find('\n'));
  const std::string opKey = "(op_type:", nameKey = ", node name: ";
  size_t op = message.rfind(opKey);
  size_t name = op == std::string::npos ? op : message.find(nameKey, op);
  size_t close = name == std::string::npos ? name : message.find("): ", name);
  if (close == std::string::npos)
    return "shape inference failed: " + message;
  std::string opType = message.substr(op + opKey.size(), name - op - opKey.size());
  std::string nodeName = message.substr(name + nameKey.size(), close - name - nameKey.size());
  std::string reason = message.substr(close + 3);
  const std::string tag = "[ShapeInferenceError] ";
  if (reason.rfind(tag, 0) == 0)
    reason = reason.substr(tag.size());
  return "node '" + nodeName + "' (" + opType + "): shape inference failed: " + reason;
}

class Importer {
public:
  // `bytes` holds the model file's contents; `path` names it in locations and locates its
  // external data.
  Importer(MLIRContext &ctx, const std::string &bytes, std::string path,
           std::vector<std::string> &errors, const ShapePins &pins)
      : ctx(ctx), bytes(bytes), path(std::move(path)), errors(errors), pins(pins) {}

  OwningOpRef<ModuleOp> run();

private:
  bool load();
  void collectTypes();
  void collectConstants();
  std::vector<const onnx::NodeProto *> liveNodes();
  RankedTensorType typeOf(const std::string &name);
  Value materialize(const std::string &name);

  MLIRContext &ctx;
  const std::string &bytes;
  std::string path;
  std::vector<std::string> &errors;
  const ShapePins &pins;
  onnx::ModelProto model;
  int opset = 0;
  std::map<std::string, onnx::TypeProto> types;
  std::map<std::string, ConstTensor> constants;
  std::map<std::string, std::string> unusable; // initializers that failed to decode, why
  std::map<std::string, Value> values;
  OpBuilder *builder = nullptr;
  Block *entry = nullptr;
};

bool Importer::load() {
  if (!model.ParseFromString(bytes) || !model.has_graph() || model.ir_version() <= 0) {
    errors.push_back("not a valid ONNX model (truncated file or not an ONNX ModelProto)");
    return false;
  }
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = static_cast<int>(entry.version());
  if (opset > kMaxOpset || opset < 1) {
    errors.push_back("default-domain opset " + std::to_string(opset) + " is not supported (" +
                     std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
    return false;
  }
  if (opset < kMinOpset) {
    // An older model is accepted when each of its ops means the same at opset 7.
    for (const auto &node : model.graph().node()) {
      const auto *old = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, node.domain());
      const auto *at7 = onnx::OpSchemaRegistry::Schema(node.op_type(), kMinOpset, node.domain());
      if (!old || !at7 || old->since_version() != at7->since_version())
        errors.push_back(nodeLabel(node) + ": opset " + std::to_string(opset) +
                         " semantics differ from opset " + std::to_string(kMinOpset) +
                         " (supported: " + std::to_string(kMinOpset) + " to " +
                         std::to_string(kMaxOpset) + ")");
    }
    if (!errors.empty())
      return false;
  }
  // ONNX's shape inference trusts the model's structure and data sizes: check them first,
  // and let it see only the ops dlc imports (whose inference functions are guarded).
  loadExternalData(model, path, errors);
  validateModel(model, opset, errors);
  if (!errors.empty())
    return false;
  pinShapes(model, pins, errors);
  if (!errors.empty())
    return false;
  removeDeadNodes(*model.mutable_graph());
  // Each unsupported op once, at its first node, then one summary line: a model with 19
  // HardSwish nodes gets two lines, not nineteen.
  const auto &table = opImportTable();
  std::map<std::string, std::pair<const onnx::NodeProto *, int>> unsupported;
  std::vector<std::string> order;
  for (const auto &node : model.graph().node()) {
    bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
    if (!foreign && table.count(node.op_type()))
      continue;
    std::string op = (foreign ? node.domain() + "." : "") + node.op_type();
    auto [it, fresh] = unsupported.try_emplace(op, &node, 0);
    it->second.second++;
    if (fresh)
      order.push_back(op);
  }
  std::string summary;
  for (const std::string &op : order) {
    auto [node, count] = unsupported[op];
    std::string more = count > 1 ? " (and " + std::to_string(count - 1) + " more node" +
                                       (count > 2 ? "s" : "") + ")"
                                 : "";
    bool foreign = !node->domain().empty() && node->domain() != "ai.onnx";
    errors.push_back(nodeLabel(*node) +
                     (foreign ? ": op domain '" + node->domain() + "' is not supported"
                              : ": op " + node->op_type() + " (opset " + std::to_string(opset) +
                                    ") is not supported") +
                     more);
    summary += (summary.empty() ? "" : ", ") + op + " x" + std::to_string(count);
  }
  if (!order.empty())
    errors.push_back(std::to_string(order.size()) + " unsupported op" +
                     (order.size() > 1 ? "s" : "") + ": " + summary);
  if (!errors.empty())
    return false;
  guardShapeInference();
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    errors.push_back(describeInferenceError(e.what()));
    return false;
  }
  return true;
}

void Importer::collectTypes() {
  const auto &graph = model.graph();
  auto collect = [&](const auto &infos) {
    for (const auto &info : infos)
      if (info.has_type())
        types[info.name()] = info.type();
  };
  collect(graph.input());
  collect(graph.output());
  collect(graph.value_info());
}

void Importer::collectConstants() {
  for (const auto &init : model.graph().initializer()) {
    try {
      constants[init.name()] = constFromProto(init);
    } catch (const ImportError &e) {
      unusable[init.name()] = e.what(); // an error only if a live node reads it
    }
  }
  auto constOf = [&](const std::string &name) -> const ConstTensor * {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : &it->second;
  };
  auto typeOfName = [&](const std::string &name) { return typeOf(name); };
  for (const auto &node : model.graph().node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue; // other domains' ops only share names with ONNX's
    try {
      if (auto folded = foldShapeNode(node, constOf, typeOfName))
        constants[node.output(0)] = std::move(*folded);
    } catch (const ImportError &e) {
      errors.push_back(nodeLabel(node) + ": " + e.what());
    }
  }
}

RankedTensorType Importer::typeOf(const std::string &name) {
  if (auto it = constants.find(name); it != constants.end()) {
    Type element = elementTypeFor(ctx, it->second.dtype);
    if (!element)
      throw ImportError("constant '" + name + "' has unsupported element type " +
                        dtypeName(it->second.dtype));
    return RankedTensorType::get(it->second.shape, element);
  }
  auto it = types.find(name);
  if (it == types.end() || !it->second.has_tensor_type())
    throw ImportError("no tensor type known for '" + name + "'");
  const auto &tensor = it->second.tensor_type();
  Type element = elementTypeFor(ctx, tensor.elem_type());
  if (!element)
    throw ImportError("'" + name + "' has unsupported element type " +
                      dtypeName(tensor.elem_type()));
  if (!tensor.has_shape())
    throw ImportError("cannot infer a static shape for '" + name + "'");
  SmallVector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      throw ImportError("cannot infer a static shape for '" + name + "' (dim '" +
                        dim.dim_param() + "' is dynamic)");
    shape.push_back(dim.dim_value());
  }
  auto type = RankedTensorType::get(shape, element);
  if (!checkedTensorBytes(type))
    throw ImportError("'" + name + "' is too large: dims " + dimsString(shape) + " of " +
                      dtypeName(tensor.elem_type()) + " exceed dlc's limit of " +
                      kMaxTensorBytesText);
  return type;
}

std::vector<const onnx::NodeProto *> Importer::liveNodes() {
  const auto &table = opImportTable();
  std::map<std::string, const onnx::NodeProto *> producer;
  for (const auto &node : model.graph().node())
    for (const auto &out : node.output())
      producer[out] = &node;
  std::set<const onnx::NodeProto *> live;
  std::vector<std::string> work;
  for (const auto &out : model.graph().output())
    work.push_back(out.name());
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    auto it = producer.find(name);
    if (constants.count(name) || it == producer.end() || !live.insert(it->second).second)
      continue;
    const onnx::NodeProto &node = *it->second;
    auto op = table.find(node.op_type());
    for (int i = 0; i < node.input_size(); ++i) {
      bool isStatic = op != table.end() && std::count(op->second.staticInputs.begin(),
                                                      op->second.staticInputs.end(), i);
      if (!isStatic && !node.input(i).empty())
        work.push_back(node.input(i));
    }
  }
  std::vector<const onnx::NodeProto *> ordered;
  for (const auto &node : model.graph().node())
    if (live.count(&node))
      ordered.push_back(&node);
  return ordered;
}

Value Importer::materialize(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  auto c = constants.find(name);
  if (auto bad = unusable.find(name); bad != unusable.end())
    throw ImportError(bad->second);
  if (c == constants.end())
    throw ImportError("input '" + name + "' is not produced by any node");
  RankedTensorType type = typeOf(name);
  OpBuilder::InsertionGuard guard(*builder);
  builder->setInsertionPointToStart(entry);
  Value result = ConstantOp::fromBytes(*builder, NameLoc::get(builder->getStringAttr(name)),
                                       type, c->second.bytes, name);
  values[name] = result;
  return result;
}

OwningOpRef<ModuleOp> Importer::run() {
  ctx.loadDialect<DlcDialect, func::FuncDialect>();
  if (!load())
    return {};
  collectTypes();
  collectConstants();
  if (!errors.empty())
    return {};
  const auto &table = opImportTable();
  std::vector<const onnx::NodeProto *> nodes = liveNodes();

  const auto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder b(&ctx);
  builder = &b;
  SmallVector<Type> argTypes;
  std::vector<std::string> argNames;
  try {
    for (const auto &in : graph.input()) {
      if (constants.count(in.name()))
        continue; // old-style models list initializers as inputs too
      argTypes.push_back(typeOf(in.name()));
      argNames.push_back(in.name());
    }
  } catch (const ImportError &e) {
    errors.push_back(std::string("graph input: ") + e.what());
    return {};
  }
  b.setInsertionPointToEnd(module->getBody());
  // The results' types are set once the nodes are imported: a node's own error (a window
  // larger than its input, say) explains an output without a valid shape better.
  auto func = b.create<func::FuncOp>(fileLoc, "forward", b.getFunctionType(argTypes, {}));
  entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, kTensorNameAttr, b.getStringAttr(name));
    entry->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(name), fileLoc));
    values[name] = entry->getArgument(i);
  }
  b.setInsertionPointToEnd(entry);

  auto valueOf = [&](const std::string &name) { return materialize(name); };
  auto constOf = [&](const std::string &name) -> const ConstTensor * {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : &it->second;
  };
  auto typeOfName = [&](const std::string &name) { return typeOf(name); };
  // Values some live node or the graph reads: a node's extra outputs must not be among them.
  std::set<std::string> read;
  for (const auto *node : nodes)
    read.insert(node->input().begin(), node->input().end());
  for (const auto &out : graph.output())
    read.insert(out.name());
  for (const auto *node : nodes) {
    std::string name = node->name().empty() ? node->output(0) : node->name();
    // The node's name (for diagnostics) and its output's name (for memory reports).
    Location loc = FusedLoc::get(&ctx,
                                 {NameLoc::get(b.getStringAttr(name), fileLoc),
                                  NameLoc::get(b.getStringAttr(node->output(0)))},
                                 b.getStringAttr(node->op_type()));
    NodeImporter importer(b, loc, *node, opset, valueOf, constOf, typeOfName);
    try {
      for (int i = 1; i < node->output_size(); ++i)
        if (read.count(node->output(i)))
          throw ImportError("only the first output is supported ('" + node->output(i) +
                            "' is used)");
      Value result = table.at(node->op_type()).build(importer);
      if (result.getType() != importer.outputType())
        throw ImportError("internal: built type differs from the inferred type");
      values[node->output(0)] = result;
    } catch (const ImportError &e) {
      errors.push_back(nodeLabel(*node) + ": " + e.what());
    }
  }
  if (!errors.empty())
    return {};
  SmallVector<Value> results;
  try {
    for (const auto &out : graph.output())
      results.push_back(materialize(out.name()));
  } catch (const ImportError &e) {
    errors.push_back(std::string("graph output: ") + e.what());
    return {};
  }
  b.create<func::ReturnOp>(fileLoc, results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, kTensorNameAttr, b.getStringAttr(out.name()));
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, const std::string &path,
                                     std::vector<std::string> &errors, const ShapePins &pins) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  if (!file) {
    errors.push_back("cannot open file");
    return {};
  }
  return importOnnxModel(context, buffer.str(), path, errors, pins);
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, const std::string &bytes,
                                      const std::string &path, std::vector<std::string> &errors,
                                      const ShapePins &pins) {
  // ImportError is handled where it names a node; anything else (protobuf, allocation,
  // out-of-range data) must still end as an error, never an abort.
  try {
    OwningOpRef<ModuleOp> module = Importer(context, bytes, path, errors, pins).run();
    if (!module && errors.empty())
      errors.push_back("import failed");
    return module;
  } catch (const std::exception &e) {
    errors.push_back(std::string("malformed model: ") + e.what());
    return {};
  }
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : opImportTable())
    ops.push_back(entry.first);
  return ops;
}

} // namespace dlc
