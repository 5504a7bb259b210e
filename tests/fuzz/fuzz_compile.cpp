// libFuzzer target: any byte string, as an ONNX model file, through everything `dlc compile`
// does before it writes files — import (structure checks, ONNX shape inference), the
// inference pipeline with its independent plan verification, and C++ generation. A crash,
// sanitizer report, hang or runaway allocation here is a bug; an error message is not.
//
// The custom mutator edits parsed models (dims, attribute values, names, node order, data
// types, raw data) so that most inputs stay valid protobuf and reach the deep checks; plain
// byte mutations still run a quarter of the time.
#include "compiler/codegen/Codegen.h"
#include "compiler/import/Importer.h"
#include "compiler/Pipeline.h"
#include "compiler/Training.h"
#include "compiler/target/Target.h"
#include "compiler/target/Targets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "onnx/onnx_pb.h"

#include <cstdint>
#include <cstring>
#include <random>

namespace {

using Rng = std::mt19937_64;

int64_t interestingInt(Rng &rng) {
  static const int64_t values[] = {0, -1, 1, 2, 3, 7, 64, -2, INT32_MAX, int64_t(1) << 31,
                                   int64_t(1) << 40, int64_t(1) << 62, INT64_MAX, INT64_MIN};
  return rng() % 4 ? values[rng() % (sizeof values / sizeof *values)]
                   : static_cast<int64_t>(rng() % 1000) - 500;
}

template <typename T> T &pick(google::protobuf::RepeatedPtrField<T> &items, Rng &rng) {
  return *items.Mutable(static_cast<int>(rng() % items.size()));
}

// One random structural edit; false when the model has nothing of the chosen kind.
bool mutateModel(onnx::ModelProto &model, Rng &rng) {
  onnx::GraphProto &g = *model.mutable_graph();
  auto anyName = [&]() -> std::string {
    std::vector<std::string> names;
    for (const auto &n : g.node())
      names.insert(names.end(), n.output().begin(), n.output().end());
    for (const auto &i : g.input())
      names.push_back(i.name());
    for (const auto &i : g.initializer())
      names.push_back(i.name());
    return names.empty() || rng() % 8 == 0 ? "fresh" + std::to_string(rng() % 4)
                                           : names[rng() % names.size()];
  };
  if (!g.node_size())
    return false;
  onnx::NodeProto &node = pick(*g.mutable_node(), rng);
  switch (rng() % 12) {
  case 0: { // an attribute's integer(s)
    if (!node.attribute_size())
      return false;
    auto &attr = pick(*node.mutable_attribute(), rng);
    if (attr.ints_size())
      attr.set_ints(static_cast<int>(rng() % attr.ints_size()), interestingInt(rng));
    else if (rng() % 2)
      attr.add_ints(interestingInt(rng));
    else
      attr.set_i(interestingInt(rng));
    return true;
  }
  case 1: { // a dim of a graph input or output
    auto *infos = rng() % 2 ? g.mutable_input() : g.mutable_output();
    if (!infos->size())
      return false;
    auto *shape = pick(*infos, rng).mutable_type()->mutable_tensor_type()->mutable_shape();
    if (!shape->dim_size() || rng() % 5 == 0)
      shape->add_dim()->set_dim_value(interestingInt(rng));
    else
      shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))
          ->set_dim_value(interestingInt(rng));
    return true;
  }
  case 2: { // an initializer's dims, dtype or data
    if (!g.initializer_size())
      return false;
    auto &t = pick(*g.mutable_initializer(), rng);
    switch (rng() % 5) {
    case 0:
      if (t.dims_size())
        t.set_dims(static_cast<int>(rng() % t.dims_size()), interestingInt(rng));
      else
        t.add_dims(interestingInt(rng));
      break;
    case 1: t.set_data_type(static_cast<int32_t>(rng() % 18)); break;
    case 2: t.mutable_raw_data()->resize(rng() % (t.raw_data().size() + 17)); break;
    case 3: { // one int64 value (shapes, axes, indices, slice bounds and steps)
      std::string &raw = *t.mutable_raw_data();
      int64_t value = interestingInt(rng);
      if (raw.size() >= 8)
        std::memcpy(&raw[8 * (rng() % (raw.size() / 8))], &value, 8);
      else if (t.int64_data_size())
        t.set_int64_data(static_cast<int>(rng() % t.int64_data_size()), value);
      else
        return false;
      break;
    }
    default: t.add_int64_data(interestingInt(rng)); break;
    }
    return true;
  }
  case 3: // rewire an input
    if (!node.input_size())
      return false;
    node.set_input(static_cast<int>(rng() % node.input_size()), rng() % 6 ? anyName() : "");
    return true;
  case 4: { // rename an output
    if (!node.output_size())
      return false;
    node.set_output(static_cast<int>(rng() % node.output_size()), anyName());
    return true;
  }
  case 5: { // reorder, duplicate or drop a node
    int a = static_cast<int>(rng() % g.node_size()), b = static_cast<int>(rng() % g.node_size());
    if (rng() % 3 == 0)
      g.mutable_node()->SwapElements(a, b);
    else if (rng() % 2)
      *g.add_node() = g.node(a);
    else
      g.mutable_node()->DeleteSubrange(a, 1);
    return true;
  }
  case 6: { // another op type
    static const std::vector<std::string> ops = dlc::supportedOnnxOps();
    node.set_op_type(ops[rng() % ops.size()]);
    return true;
  }
  case 7: // another opset
    if (!model.opset_import_size())
      return false;
    model.mutable_opset_import(0)->set_version(static_cast<int64_t>(rng() % 22));
    return true;
  case 8: { // copy an attribute from another node
    auto &from = pick(*g.mutable_node(), rng);
    if (!from.attribute_size() || &from == &node)
      return false;
    *node.add_attribute() = from.attribute(static_cast<int>(rng() % from.attribute_size()));
    return true;
  }
  case 9: { // a float attribute to an edge value
    if (!node.attribute_size())
      return false;
    static const float values[] = {0.f, -0.f, 1e30f, -1e30f, NAN, INFINITY, 1e-40f};
    pick(*node.mutable_attribute(), rng).set_f(values[rng() % (sizeof values / sizeof *values)]);
    return true;
  }
  case 10: // an extra graph output
    g.add_output()->set_name(anyName());
    return true;
  default: // an element type
    if (!g.input_size())
      return false;
    pick(*g.mutable_input(), rng)
        .mutable_type()
        ->mutable_tensor_type()
        ->set_elem_type(static_cast<int32_t>(rng() % 18));
    return true;
  }
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (rng() % 4 == 0 || !model.ParseFromArray(data, static_cast<int>(size)) ||
      !model.has_graph())
    return LLVMFuzzerMutate(data, size, maxSize);
  for (int edits = 1 + static_cast<int>(rng() % 3), done = 0, tries = 0; done < edits && tries < 20;
       ++tries)
    done += mutateModel(model, rng);
  std::string out = model.SerializeAsString();
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    dlc::registerAll(r);
    return r;
  }();
  mlir::MLIRContext context(registry);
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler quiet(&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  std::vector<std::string> errors;
  // A folder that does not exist: external data references fail cleanly.
  mlir::OwningOpRef<mlir::ModuleOp> module = dlc::importOnnxModel(
      context, std::string(reinterpret_cast<const char *>(data), size),
      "/nonexistent-dlc-fuzz/model.onnx", errors);
  if (!module)
    return 0;
  // The training build of the same model too (dlc compile --train), with a loss and an
  // optimizer picked by the input's size.
  mlir::OwningOpRef<mlir::ModuleOp> training = module->clone();
  dlc::TrainOptions train;
  train.enabled = true;
  const char *losses[] = {"mse", "cross_entropy", "l1", "bce_with_logits", "none"};
  train.loss = losses[size % 5];
  train.optimizer = size % 3 == 0 ? "adam" : "sgd";
  train.momentum = size % 2 ? 0.9f : 0.0f;
  if (dlc::buildTrainStep(*training, train)) {
    mlir::PassManager trainPm(&context);
    dlc::buildTrainingPipeline(trainPm, train, dlc::cpuTarget(), {});
    dlc::GeneratedModel generated;
    if (mlir::succeeded(trainPm.run(*training)))
      dlc::generateCode(*training, dlc::cpuTarget(), "fuzz", "model.onnx", "fuzz.weights.bin",
                        generated);
  }
  dlc::lowerTrainingModeOps(*module);
  // Every target's pipeline and codegen, each on a copy.
  for (const dlc::Target *target : dlc::allTargets()) {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
    mlir::PassManager pm(&context);
    target->buildPipeline(pm, {});
    if (mlir::failed(pm.run(*copy)))
      continue;
    dlc::GeneratedModel generated;
    dlc::generateCode(*copy, *target, "fuzz", "model.onnx", "fuzz.weights.bin", generated);
  }
  return 0;
}
