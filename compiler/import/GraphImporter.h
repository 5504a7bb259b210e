// Internal to the importer: the state of one model's import, shared by Importer.cpp (graphs,
// nodes, sequences) and ImportControlFlow.cpp (If, Loop and Scan bodies).
#ifndef DLC_COMPILER_GRAPHIMPORTER_H
#define DLC_COMPILER_GRAPHIMPORTER_H

#include "compiler/import/ImportContext.h"
#include "compiler/import/Importer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dlc {

using mlir::Block;
using mlir::Location;
using mlir::MLIRContext;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Value;
namespace func = mlir::func;

// Ops the importer evaluates itself instead of through the op table: sequence ops (their
// sequences exist only at compile time) and control flow (unrolled).
bool isSequenceOp(const std::string &op);
// The sequence and Optional ops, for the list of supported ops.
const std::set<std::string> &sequenceOps();
// If, Loop, Scan and SequenceMap: their bodies are imported where they run.
const std::set<std::string> &controlFlowOps();
// A rank-0 int64 or bool constant.
ConstTensor scalarConstant(int32_t dtype, int64_t value);
bool isControlFlowOp(const std::string &op);

class Importer : public ValueScope {
public:
  // `bytes` holds the model file's contents; `path` names it in locations and locates its
  // external data.
  Importer(MLIRContext &ctx, const std::string &bytes, std::string path,
           std::vector<std::string> &errors, const ShapePins &pins)
      : ctx(ctx), bytes(bytes), path(std::move(path)), errors(errors), pins(pins) {}

  mlir::OwningOpRef<mlir::ModuleOp> run();
  struct Binding;

  Value value(const std::string &name) override { return materialize(name); }
  const ConstTensor *constant(const std::string &name) override {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : &it->second;
  }
  RankedTensorType type(const std::string &name) override { return typeOf(name); }
  std::string whyNotConstant(const std::string &name) override;
  bool isInitializer(const std::string &name) override { return initializers.count(name) != 0; }

private:
  bool load();
  void collectConstants();
  std::set<const onnx::NodeProto *> nodesToImport();
  RankedTensorType declaredType(const onnx::ValueInfoProto &info);
  RankedTensorType typeOf(const std::string &name);
  Value materialize(const std::string &name);
  // An op's entry in opImportTable(): its name, prefixed "domain." outside the default domain.
  static std::string tableKey(const onnx::NodeProto &node);
  // The version of the op's definition that the model's opset for its domain selects (0: none).
  int nodeVersion(const onnx::NodeProto &node) const;
  void importNode(const onnx::NodeProto &node, const std::set<std::string> &read);
  // Imports a `required` node (one the outputs depend on). A node whose inputs are all
  // constants, required or read only at compile time by another (Pad's pads), is also
  // evaluated by the kernels (Evaluate.h) into constants of its outputs when its ops allow.
  void importAndEvaluate(const onnx::NodeProto &node, const std::set<std::string> &read,
                         bool required);
  void importSequenceNode(const onnx::NodeProto &node, NodeImporter &n);
  // If, Loop and Scan, unrolled at compile time (ImportControlFlow.cpp).
  void importControlFlowNode(const onnx::NodeProto &node, NodeImporter &n);
  std::optional<std::vector<Binding>> importBody(const onnx::GraphProto &body,
                                                 const std::vector<Binding> &inputs);
  Binding bindingOf(const std::string &name);
  Value valueOf(const Binding &binding, Location loc);
  // Makes `name` stand for what `binding` holds.
  void bind(const std::string &name, const Binding &binding);
  // Drops whatever `name` stands for.
  void forget(const std::string &name);
  void importNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                   const std::set<const onnx::NodeProto *> *needed,
                   const std::set<std::string> &read);
  void checkDeclaredTypes(
      llvm::ArrayRef<std::pair<const onnx::ValueInfoProto *, Value>> outputs);

  MLIRContext &ctx;
  const std::string &bytes;
  std::string path;
  std::vector<std::string> &errors;
  const ShapePins &pins;
  onnx::ModelProto model;
  int opset = 0;
  std::map<std::string, int> domainOpsets; // the other domains the model imports
  std::map<std::string, ConstTensor> constants;
  std::set<std::string> initializers;
  std::map<std::string, std::string> unusable; // initializers that failed to decode, why
  std::map<std::string, Value> values;
  // Large constants made so far, by name and a hash of their bytes: a loop body that reads a
  // weight reads it in every unrolled step, and must not store a copy per step.
  std::map<std::pair<std::string, size_t>, std::vector<Value>> materialized;
  // Sequences whose structure is known at compile time: each is a list of tensors.
  std::map<std::string, std::vector<Value>> sequences;
  // Optionals known at compile time to hold nothing; a present optional is its value.
  std::set<std::string> emptyOptionals;
  std::map<std::string, const onnx::NodeProto *> producers;
  // Values of nodes that failed, or read such a value: their readers stay silent, so each
  // problem is reported once, at its root.
  std::set<std::string> failedValues;
  OpBuilder *builder = nullptr;
  Block *entry = nullptr;
  int64_t unrolledBodies = 0; // bodies imported so far, over all control-flow nodes
};

// What a name in a body is bound to: a compile-time constant where one is known (loop counters,
// conditions, shape arithmetic keep folding across iterations), a sequence (the compile-time
// list of its tensors), an empty optional, else a run-time value.
struct Importer::Binding {
  Value value;
  // (Default initializers let a binding be written {value} or {Value(), constant}.)
  std::optional<ConstTensor> constant = std::nullopt;
  std::optional<std::vector<Value>> sequence = std::nullopt;
  bool emptyOptional = false;
};

} // namespace dlc

#endif
