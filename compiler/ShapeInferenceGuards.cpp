// Checks that some of ONNX's own shape-inference functions (Debian's libonnx) lack: they index
// one tensor's dims by another's rank and crash on inconsistent nodes. They run inside the
// library's graph walk, where only the inferred input types show whether a node is consistent,
// so each guard wraps the op's registered function: it checks, then calls the original. Found
// by fuzzing (dlc_fuzz); the inputs are in tests/fuzz/regressions.
#include "compiler/ModelCheck.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

#include <climits>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

namespace dlc {
namespace {

// Every version of `op`'s schema. The registry owns them as mutable objects and hands out
// const pointers; the setters used below are the library's own way to install functions.
std::vector<onnx::OpSchema *> schemaVersions(const std::string &op) {
  constexpr int kMaxOpset = 30; // beyond every opset the installed library knows
  std::set<onnx::OpSchema *> versions;
  for (int v = 1; v <= kMaxOpset; ++v)
    if (const auto *schema = onnx::OpSchemaRegistry::Schema(op, v, ""))
      versions.insert(const_cast<onnx::OpSchema *>(schema));
  return {versions.begin(), versions.end()};
}

// `check` runs first and fails inference (with a message) on a node the original would
// mishandle.
void guardInference(const std::string &op,
                    const std::function<void(onnx::InferenceContext &)> &check) {
  for (onnx::OpSchema *schema : schemaVersions(op))
    schema->TypeAndShapeInferenceFunction(
        [check, original = schema->GetTypeAndShapeInferenceFunction()](
            onnx::InferenceContext &ctx) {
          check(ctx);
          original(ctx);
        });
}

// Data propagation (values of small int64 tensors, e.g. shapes) is an optional extra: a node
// `safe` refuses simply gets none, and shape inference goes on without it.
void guardDataPropagation(const std::string &op,
                          const std::function<bool(onnx::DataPropagationContext &)> &safe) {
  for (onnx::OpSchema *schema : schemaVersions(op))
    schema->PartialDataPropagationFunction(
        [safe, original = schema->GetDataPropagationFunction()](
            onnx::DataPropagationContext &ctx) {
          if (safe(ctx))
            original(ctx);
        });
}

// Conv takes its kernel's dims from the weight and indexes strides and dilations (sized by the
// input's rank) with them, and reads the weight's dim 0 for the output channels.
void checkConvWeightRank(onnx::InferenceContext &ctx) {
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1))
    return;
  int inputRank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  int weightRank = ctx.getInputType(1)->tensor_type().shape().dim_size();
  if (inputRank != weightRank)
    fail_shape_inference("the weight has rank ", weightRank, " but the input has rank ",
                         inputRank, "; they must be equal");
}

// Slice's data propagation narrows each step to int: a step outside int32 overflows its
// loop (a SEGV at 2^31, a runaway allocation above).
bool sliceStepsFitInt(onnx::DataPropagationContext &ctx) {
  const onnx::TensorShapeProto *steps = ctx.getNumInputs() > 4 ? ctx.getInputData(4) : nullptr;
  if (!steps)
    return true;
  for (const auto &step : steps->dim())
    if (!step.has_dim_value() || step.dim_value() < INT32_MIN || step.dim_value() > INT32_MAX)
      return false;
  return true;
}

} // namespace

void guardShapeInference() {
  static std::once_flag once;
  std::call_once(once, [] {
    guardInference("Conv", checkConvWeightRank);
    guardDataPropagation("Slice", sliceStepsFitInt);
  });
}

} // namespace dlc
