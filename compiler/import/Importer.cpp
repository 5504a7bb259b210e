#include "compiler/import/Importer.h"
#include "compiler/import/Evaluate.h"
#include "compiler/import/GraphImporter.h"
#include "compiler/import/ImportContext.h"
#include "compiler/import/ModelCheck.h"
#include "compiler/import/OnnxVersions.h"
#include "compiler/import/Builders.h"
#include "dialects/DlcDialect.h"
#include "dialects/Locations.h"
#include "dialects/Sizes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "onnx/defs/schema.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace mlir;

namespace dlc {
namespace {

constexpr int kMinOpset = 7;

// The graph's nodes and those of its subgraphs (If branches, Loop and Scan bodies).
void forEachNode(const onnx::GraphProto &graph,
                 const std::function<void(const onnx::NodeProto &)> &visit) {
  for (const auto &node : graph.node()) {
    visit(node);
    for (const auto &attr : node.attribute())
      if (attr.has_g())
        forEachNode(attr.g(), visit);
  }
}

} // namespace

std::string Importer::tableKey(const onnx::NodeProto &node) {
  bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
  return foreign ? node.domain() + "." + node.op_type() : node.op_type();
}

int Importer::nodeVersion(const onnx::NodeProto &node) const {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return onnxOpVersion(node.op_type(), opset);
  auto it = domainOpsets.find(node.domain());
  return it == domainOpsets.end() ? 0 : it->second;
}

bool Importer::load() {
  if (!model.ParseFromString(bytes) || !model.has_graph() || model.ir_version() <= 0) {
    errors.push_back("not a valid ONNX model (truncated file or not an ONNX ModelProto)");
    return false;
  }
  for (const auto &entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = static_cast<int>(entry.version());
    else
      domainOpsets[entry.domain()] = static_cast<int>(entry.version());
  }
  const int maxOpset = onnxMaxOpset();
  // A model of other domains' ops only may import no default-domain opset; its ops are
  // reported below.
  bool defaultDomainNodes = false;
  for (const auto &node : model.graph().node())
    defaultDomainNodes |= node.domain().empty() || node.domain() == "ai.onnx";
  if (opset > maxOpset || (opset < 1 && defaultDomainNodes)) {
    errors.push_back("default-domain opset " + std::to_string(opset) + " is not supported (" +
                     std::to_string(kMinOpset) + " to " + std::to_string(maxOpset) + ")");
    return false;
  }
  if (opset < kMinOpset && defaultDomainNodes) {
    // An older model is accepted when each of its ops means the same at opset 7, or its
    // import reads the old version's attributes.
    forEachNode(model.graph(), [&](const onnx::NodeProto &node) {
      auto op = opImportTable().find(node.op_type());
      bool legacy = op != opImportTable().end() && op->second.legacyVersions;
      if (!legacy &&
          onnxOpVersion(node.op_type(), opset) != onnxOpVersion(node.op_type(), kMinOpset))
        errors.push_back(nodeLabel(node) + ": opset " + std::to_string(opset) +
                         " semantics differ from opset " + std::to_string(kMinOpset) +
                         " (supported: " + std::to_string(kMinOpset) + " to " +
                         std::to_string(maxOpset) + ")");
    });
    if (!errors.empty())
      return false;
  }
  // The importer trusts the model's structure and data sizes: check them first.
  loadExternalData(model, path, errors);
  resolveOptionalInputs(model, pins, errors);
  expandSequenceInputs(model, pins, errors);
  pinInputValues(model, pins, errors);
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
  forEachNode(model.graph(), [&](const onnx::NodeProto &node) {
    bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
    auto import = table.find(node.op_type());
    bool everyOpset = !foreign && import != table.end() && import->second.everyOpset;
    if (!foreign && !everyOpset && !onnxOpVersion(node.op_type(), opset) &&
        onnxOpFirstVersion(node.op_type())) {
      errors.push_back(nodeLabel(node) + ": op " + node.op_type() + " is not defined at opset " +
                       std::to_string(opset) + " (it first appears at opset " +
                       std::to_string(onnxOpFirstVersion(node.op_type())) + ")");
      return;
    }
    std::string op = tableKey(node);
    // An op of another domain counts only where the model imports that domain.
    if (table.count(op) && (!foreign || nodeVersion(node) > 0))
      return;
    if (!foreign && (isSequenceOp(op) || isControlFlowOp(op)))
      return;
    auto [it, fresh] = unsupported.try_emplace(op, &node, 0);
    it->second.second++;
    if (fresh)
      order.push_back(op);
  });
  std::string summary;
  for (const std::string &op : order) {
    auto [node, count] = unsupported[op];
    std::string more = count > 1 ? " (and " + std::to_string(count - 1) + " more node" +
                                       (count > 2 ? "s" : "") + ")"
                                 : "";
    bool foreign = !node->domain().empty() && node->domain() != "ai.onnx";
    std::string reason = whyNotImported(op);
    // A domain dlc imports some ops of (com.microsoft) is not unsupported as a whole.
    auto sameDomain = table.lower_bound(node->domain() + ".");
    bool knownDomain = foreign && sameDomain != table.end() &&
                       llvm::StringRef(sameDomain->first).starts_with(node->domain() + ".");
    if (reason.empty() && knownDomain)
      reason = "op " + op + " is not supported";
    errors.push_back(nodeLabel(*node) +
                     (!reason.empty() ? ": " + reason
                      : foreign       ? ": op domain '" + node->domain() + "' is not supported"
                              : ": op " + node->op_type() + " (opset " + std::to_string(opset) +
                                    ") is not supported") +
                     more);
    summary += (summary.empty() ? "" : ", ") + op + " x" + std::to_string(count);
  }
  if (!order.empty())
    errors.push_back(std::to_string(order.size()) + " unsupported op" +
                     (order.size() > 1 ? "s" : "") + ": " + summary);
  return errors.empty();
}

void Importer::collectConstants() {
  for (const auto &init : model.graph().initializer()) {
    initializers.insert(init.name());
    try {
      constants[init.name()] = constFromProto(init);
    } catch (const ImportError &e) {
      unusable[init.name()] = e.what(); // an error only if a live node reads it
    }
  }
}

RankedTensorType Importer::declaredType(const onnx::ValueInfoProto &info) {
  const std::string &name = info.name();
  if (!info.type().has_tensor_type())
    throw ImportError("'" + name + "' is not a tensor");
  const auto &tensor = info.type().tensor_type();
  Type element = elementTypeFor(ctx, tensor.elem_type());
  if (!element)
    throw ImportError("'" + name + "' has unsupported element type " +
                      dtypeName(tensor.elem_type()));
  if (!tensor.has_shape())
    throw ImportError("'" + name + "' has no declared shape");
  SmallVector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      throw ImportError("'" + name + "' has dynamic dim '" + dim.dim_param() + "'");
    shape.push_back(dim.dim_value());
  }
  auto type = RankedTensorType::get(shape, element);
  if (!checkedTensorBytes(type))
    throw ImportError("'" + name + "' is too large: dims " + dimsString(shape) + " of " +
                      dtypeName(tensor.elem_type()) + " exceed dlc's limit of " +
                      kMaxTensorBytesText);
  return type;
}

RankedTensorType Importer::typeOf(const std::string &name) {
  if (auto it = constants.find(name); it != constants.end()) {
    Type element = elementTypeFor(ctx, it->second.dtype);
    if (!element)
      throw ImportError("constant '" + name + "' has unsupported element type " +
                        dtypeName(it->second.dtype));
    return RankedTensorType::get(it->second.shape, element);
  }
  if (auto it = values.find(name); it != values.end())
    return cast<RankedTensorType>(it->second.getType());
  if (auto bad = unusable.find(name); bad != unusable.end())
    throw ImportError(bad->second);
  throw ImportError("the type of '" + name + "' is not known (its node was not imported)");
}

// The nodes whose results are needed as data (reachable from a graph output through inputs
// that are not read at compile time), and the producers of values whose type a Shape or Size
// node reads. Shape arithmetic that folds to constants is never imported.
std::set<const onnx::NodeProto *> Importer::nodesToImport() {
  const auto &table = opImportTable();
  std::vector<std::string> work;
  for (const auto &node : model.graph().node())
    if ((node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size())
      work.push_back(node.input(0));
  for (const auto &out : model.graph().output())
    work.push_back(out.name());
  std::set<const onnx::NodeProto *> needed;
  // Sequence and control-flow ops are evaluated wherever they are (their results may be
  // constants that feed shape arithmetic).
  for (const auto &node : model.graph().node())
    if ((isSequenceOp(node.op_type()) || isControlFlowOp(node.op_type())) &&
        needed.insert(&node).second) {
      for (const auto &in : node.input())
        if (!in.empty())
          work.push_back(in);
      for (const auto &in : implicitInputs(node))
        work.push_back(in);
    }
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    auto it = producers.find(name);
    if (it == producers.end() || !needed.insert(it->second).second)
      continue;
    const onnx::NodeProto &node = *it->second;
    auto op = table.find(tableKey(node));
    for (const auto &in : implicitInputs(node))
      work.push_back(in);
    for (int i = 0; i < node.input_size(); ++i) {
      bool isStatic = op != table.end() &&
                      std::count(op->second.staticInputs.begin(), op->second.staticInputs.end(), i);
      if (!isStatic && !node.input(i).empty())
        work.push_back(node.input(i));
    }
  }
  return needed;
}

Value Importer::materialize(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  auto c = constants.find(name);
  if (auto bad = unusable.find(name); bad != unusable.end())
    throw ImportError(bad->second);
  if (sequences.count(name))
    throw ImportError("'" + name + "' is a sequence; dlc reads and returns tensors only");
  if (emptyOptionals.count(name))
    throw ImportError("'" + name + "' is an empty optional, read as a tensor");
  if (c == constants.end())
    throw ImportError("input '" + name + "' is not produced by any node");
  RankedTensorType type = typeOf(name);
  const std::vector<char> &bytes = c->second.bytes;
  auto &same = materialized[{name, llvm::hash_combine_range(bytes.begin(), bytes.end())}];
  for (Value earlier : same) {
    auto resource =
        dyn_cast<DenseResourceElementsAttr>(earlier.getDefiningOp<ConstantOp>().getValue());
    if (earlier.getType() == type &&
        resource.getRawHandle().getBlob()->getData() == ArrayRef<char>(bytes))
      return values[name] = earlier;
  }
  OpBuilder::InsertionGuard guard(*builder);
  builder->setInsertionPointToStart(entry);
  ConstantOp result = ConstantOp::fromBytes(
      *builder, NameLoc::get(builder->getStringAttr(name)), type, bytes, name);
  if (isa<DenseResourceElementsAttr>(result.getValue()))
    same.push_back(result);
  values[name] = result;
  return result;
}

namespace {

// One {dlc.name = name} per function argument or result, to be set all at once: setting them
// one by one rebuilds the whole list each time, and a split into thousands of sequence
// outputs took gigabytes of uniqued attribute lists.
SmallVector<DictionaryAttr> namesAsAttrs(OpBuilder &b, const std::vector<std::string> &names) {
  SmallVector<DictionaryAttr> attrs;
  for (const std::string &name : names)
    attrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kTensorNameAttr, b.getStringAttr(name))));
  return attrs;
}

// float16 and bfloat16 are stored, not computed: an op reading them sees them widened to
// float32 (cast where it reads them), and its float32 results are narrowed back to the type it
// read. Only the casts themselves convert directly.
class WideningScope : public ValueScope {
public:
  WideningScope(ValueScope &inner, OpBuilder &b, Location loc) : inner(inner), b(b), loc(loc) {}

  static bool isStoredFloat(RankedTensorType t) {
    return isa<Float16Type, BFloat16Type>(t.getElementType());
  }

  Value value(const std::string &name) override {
    Value v = inner.value(name);
    auto type = cast<RankedTensorType>(v.getType());
    if (!isStoredFloat(type))
      return v;
    Value &wide = widened[name];
    if (!wide)
      wide = b.create<CastOp>(loc, type.clone(b.getF32Type()), v);
    return wide;
  }
  const ConstTensor *constant(const std::string &name) override { return inner.constant(name); }
  RankedTensorType type(const std::string &name) override {
    RankedTensorType t = inner.type(name);
    return isStoredFloat(t) ? t.clone(b.getF32Type()) : t;
  }
  std::string whyNotConstant(const std::string &name) override {
    return inner.whyNotConstant(name);
  }
  bool isInitializer(const std::string &name) override { return inner.isInitializer(name); }

private:
  ValueScope &inner;
  OpBuilder &b;
  Location loc;
  std::map<std::string, Value> widened;
};

} // namespace

void Importer::importNode(const onnx::NodeProto &node, const std::set<std::string> &read) {
  auto fail = [&] { failedValues.insert(node.output().begin(), node.output().end()); };
  for (const auto &in : node.input())
    if (failedValues.count(in))
      return fail();
  OpBuilder &b = *builder;
  std::string name = node.name().empty() ? node.output(0) : node.name();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  Location loc = onnxNodeLocation(&ctx, node.op_type(), name, node.output(0), fileLoc);
  // The stored float type the node reads (its float32 results are narrowed back to it), and
  // float8 or 4- and 2-bit inputs, which only casts and (de)quantization take.
  Type storedFloat;
  // Casts, and the ops the importer evaluates itself, see the stored types as they are.
  bool converts = node.op_type() == "Cast" || node.op_type() == "CastLike" ||
                  node.op_type() == "BitCast" || isSequenceOp(node.op_type()) ||
                  isControlFlowOp(node.op_type());
  bool quantizes = node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear";
  for (const auto &in : node.input()) {
    if (in.empty() || !(values.count(in) || constants.count(in)))
      continue;
    RankedTensorType type = typeOf(in);
    if (!converts && !storedFloat && WideningScope::isStoredFloat(type))
      storedFloat = type.getElementType();
    if (!converts && !quantizes && isCastOnlyElementType(type.getElementType())) {
      std::string element;
      llvm::raw_string_ostream(element) << type.getElementType();
      errors.push_back(nodeLabel(node) + ": input '" + in + "' is " + element +
                       ", which only Cast, CastLike, BitCast, QuantizeLinear and "
                       "DequantizeLinear take");
      return fail();
    }
  }
  WideningScope widening(*this, b, loc);
  NodeImporter importer(b, loc, node, opset, nodeVersion(node),
                        storedFloat ? static_cast<ValueScope &>(widening) : *this);
  try {
    // Identity passes a sequence or an empty optional on as it is.
    bool sequenceIdentity =
        node.op_type() == "Identity" && node.input_size() == 1 &&
        (sequences.count(node.input(0)) || emptyOptionals.count(node.input(0)));
    if (isSequenceOp(node.op_type()) || sequenceIdentity)
      return importSequenceNode(node, importer);
    if (isControlFlowOp(node.op_type()))
      return importControlFlowNode(node, importer);
    OpImport::Results results = opImportTable().at(tableKey(node)).build(importer);
    if (storedFloat)
      for (Value &result : results) {
        auto type = cast<RankedTensorType>(result.getType());
        if (type.getElementType().isF32())
          result = b.create<CastOp>(loc, type.clone(storedFloat), result);
      }
    for (int i = results.size(); i < node.output_size(); ++i)
      if (read.count(node.output(i)))
        throw ImportError("output #" + std::to_string(i) + " ('" + node.output(i) +
                          "') is not supported");
    for (auto [i, result] : llvm::enumerate(results))
      if (i < (size_t)node.output_size() && !node.output(i).empty())
        values[node.output(i)] = result;
  } catch (const ImportError &e) {
    errors.push_back(nodeLabel(node) + ": " + e.what());
    fail();
  }
}

std::string Importer::whyNotConstant(const std::string &name) {
  auto it = producers.find(name);
  if (it == producers.end())
    return "it is a graph input, known only at run time (an initializer holding the value "
           "would make it a constant)";
  return "it is computed at run time by " + nodeLabel(*it->second) +
         " (dlc evaluates Constant nodes and shape arithmetic on the static shapes of "
         "tensors at compile time, nothing that reads tensor data given at run time)";
}

// A model may declare the types of its outputs and intermediate values (value_info). A
// declared dtype that contradicts the computed one means the model and dlc disagree about an
// op: an error. A contradicting shape is what exporters write for shapes they did not know (as
// ONNX Runtime does, dlc warns and the computed shape wins: the header and NAME_info show it).
void Importer::checkDeclaredTypes(
    ArrayRef<std::pair<const onnx::ValueInfoProto *, Value>> outputs) {
  auto check = [&](const onnx::ValueInfoProto &info, Value value, const std::string &what) {
    if (!info.type().has_tensor_type())
      return;
    const auto &tensor = info.type().tensor_type();
    auto computed = cast<RankedTensorType>(value.getType());
    Type element = elementTypeFor(ctx, tensor.elem_type());
    bool elementDiffers =
        tensor.elem_type() != onnx::TensorProto::UNDEFINED && element != computed.getElementType();
    bool shapeDiffers = false;
    if (tensor.has_shape()) {
      shapeDiffers = tensor.shape().dim_size() != computed.getRank();
      for (int d = 0; !shapeDiffers && d < tensor.shape().dim_size(); ++d) {
        const auto &dim = tensor.shape().dim(d);
        shapeDiffers = dim.has_dim_value() && dim.dim_value() >= 0 &&
                       dim.dim_value() != computed.getDimSize(d);
      }
    }
    if (!elementDiffers && !shapeDiffers)
      return;
    std::string declared = dtypeName(tensor.elem_type());
    if (tensor.has_shape()) {
      declared += " [";
      for (int d = 0; d < tensor.shape().dim_size(); ++d) {
        const auto &dim = tensor.shape().dim(d);
        declared += (d ? "," : "") +
                    (dim.has_dim_value() && dim.dim_value() >= 0 ? std::to_string(dim.dim_value())
                     : dim.dim_param().empty()                   ? std::string("?")
                                                                 : dim.dim_param());
      }
      declared += "]";
    }
    std::string computedText;
    llvm::raw_string_ostream(computedText) << computed;
    std::string message =
        what + ": the model declares " + declared + " but its nodes compute " + computedText;
    if (elementDiffers)
      errors.push_back(message);
    else
      emitWarning(value.getLoc(), message + "; dlc uses the computed shape");
  };
  for (auto [declaredOutput, value] : outputs)
    check(*declaredOutput, value, "graph output '" + declaredOutput->name() + "'");
  for (const auto &info : model.graph().value_info())
    if (auto it = values.find(info.name()); it != values.end() && it->second)
      check(info, it->second, "value '" + info.name() + "'");
}

// One walk in graph order: a Shape node reads the type of an already imported value, a node
// whose inputs are all constants is imported and evaluated into constants (shape arithmetic),
// and everything else needed (all of a body's nodes when `needed` is null) is imported.
void Importer::importNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                           const std::set<const onnx::NodeProto *> *needed,
                           const std::set<std::string> &read) {
  for (const auto &node : nodes) {
    try {
      if (auto folded = importTimeValue(node, *this)) {
        constants[node.output(0)] = std::move(*folded);
        continue;
      }
    } catch (const ImportError &e) {
      errors.push_back(nodeLabel(node) + ": " + e.what());
      failedValues.insert(node.output().begin(), node.output().end());
      continue;
    }
    importAndEvaluate(node, read, !needed || needed->count(&node));
  }
}

void Importer::importAndEvaluate(const onnx::NodeProto &node, const std::set<std::string> &read,
                                 bool required) {
  // Weights stay what training updates: a node reading a float initializer is not evaluated.
  bool allConstant = node.input_size() > 0;
  for (const auto &in : node.input()) {
    auto c = in.empty() ? constants.end() : constants.find(in);
    allConstant &= in.empty() || (c != constants.end() &&
                                  !(isInitializer(in) &&
                                    isa_and_nonnull<FloatType>(elementTypeFor(ctx, c->second.dtype))));
  }
  if (!required && !allConstant)
    return;
  Operation *last = entry->empty() ? nullptr : &entry->back();
  size_t errorsBefore = errors.size();
  importNode(node, read);
  if (!required && errors.size() != errorsBefore) {
    // Only its value was wanted (a compile-time input of another node): a reader that needs
    // it reports that it is not a constant, as for any other value.
    errors.resize(errorsBefore);
    for (const auto &out : node.output())
      failedValues.erase(out);
    return;
  }
  if (!allConstant || errors.size() != errorsBefore)
    return;
  SmallVector<Operation *> ops;
  for (auto it = last ? std::next(last->getIterator()) : entry->begin(); it != entry->end(); ++it)
    ops.push_back(&*it);
  SmallVector<Value> results;
  std::vector<std::string> names;
  for (const auto &out : node.output()) {
    auto it = out.empty() ? values.end() : values.find(out);
    if (it == values.end() || !isa<RankedTensorType>(it->second.getType()))
      continue;
    results.push_back(it->second);
    names.push_back(out);
  }
  if (results.empty())
    return;
  Evaluation evaluation = evaluateOps(ops, results);
  if (!evaluation.error.empty()) {
    errors.push_back(nodeLabel(node) + ": " + evaluation.error);
    failedValues.insert(node.output().begin(), node.output().end());
    return;
  }
  // The outputs become constants (materialized where read at run time); the ops computing them
  // are left dead and erased at the end. An output that already is a constant (Identity) keeps
  // its op, so its bytes are stored once.
  for (auto [i, bytes] : llvm::enumerate(evaluation.results)) {
    auto type = cast<RankedTensorType>(results[i].getType());
    ConstTensor value;
    value.dtype = onnxDtypeOf(type.getElementType());
    value.shape.assign(type.getShape().begin(), type.getShape().end());
    value.bytes = std::move(bytes);
    constants[names[i]] = std::move(value);
    if (!results[i].getDefiningOp<ConstantOp>())
      values.erase(names[i]);
  }
}

OwningOpRef<ModuleOp> Importer::run() {
  ctx.loadDialect<DlcDialect, func::FuncDialect>();
  if (!load())
    return {};
  collectConstants();
  const auto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder b(&ctx);
  builder = &b;
  SmallVector<Type> argTypes;
  std::vector<std::string> argNames;
  try {
    for (const auto &in : graph.input()) {
      if (constants.count(in.name()) || unusable.count(in.name()))
        continue; // old-style models list initializers as inputs too
      argTypes.push_back(declaredType(in));
      argNames.push_back(in.name());
    }
  } catch (const ImportError &e) {
    errors.push_back(std::string("graph input: ") + e.what());
    return {};
  }
  b.setInsertionPointToEnd(module->getBody());
  // The results' types are set once the nodes are imported.
  auto func = b.create<func::FuncOp>(fileLoc, "forward", b.getFunctionType(argTypes, {}));
  entry = func.addEntryBlock();
  func.setAllArgAttrs(namesAsAttrs(b, argNames));
  for (auto [i, name] : llvm::enumerate(argNames)) {
    entry->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(name), fileLoc));
    values[name] = entry->getArgument(i);
  }
  b.setInsertionPointToEnd(entry);

  for (const auto &node : graph.node())
    for (const auto &out : node.output())
      producers[out] = &node;
  std::set<const onnx::NodeProto *> needed = nodesToImport();
  // Values some imported node or the graph reads: a node's unsupported extra outputs must not
  // be among them.
  std::set<std::string> read;
  for (const auto *node : needed) {
    read.insert(node->input().begin(), node->input().end());
    for (const auto &in : implicitInputs(*node))
      read.insert(in);
  }
  for (const auto &out : graph.output())
    read.insert(out.name());
  importNodes(graph.node(), &needed, read);
  if (!errors.empty())
    return {};
  // A sequence output (its length known here) returns each element as OUT[i].
  SmallVector<Value> results;
  std::vector<std::string> resultNames;
  std::vector<std::pair<const onnx::ValueInfoProto *, Value>> tensorOutputs;
  try {
    for (const auto &out : graph.output()) {
      if (auto it = sequences.find(out.name()); it != sequences.end()) {
        for (auto [i, item] : llvm::enumerate(it->second)) {
          results.push_back(item);
          resultNames.push_back(out.name() + "[" + std::to_string(i) + "]");
        }
        continue;
      }
      results.push_back(materialize(out.name()));
      resultNames.push_back(out.name());
      tensorOutputs.push_back({&out, results.back()});
    }
  } catch (const ImportError &e) {
    errors.push_back(std::string("graph output: ") + e.what());
    return {};
  }
  b.create<func::ReturnOp>(fileLoc, results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setAllResultAttrs(namesAsAttrs(b, resultNames));
  checkDeclaredTypes(tensorOutputs);
  if (!errors.empty())
    return {};
  // Producers imported only so that a Shape node could read their type.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return module;
}

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
  ops.insert(ops.end(), sequenceOps().begin(), sequenceOps().end());
  ops.insert(ops.end(), controlFlowOps().begin(), controlFlowOps().end());
  std::sort(ops.begin(), ops.end());
  return ops;
}

} // namespace dlc
