// Checks that some of ONNX's own shape-inference functions (Debian's libonnx) lack: they index
// one tensor's dims by another's rank and crash on inconsistent nodes. They run inside the
// library's graph walk, where only the inferred input types show whether a node is consistent,
// so each guard wraps the op's registered function: it checks, then calls the original. Found
// by fuzzing (dlc_fuzz); the inputs are in tests/fuzz/regressions.
#include "compiler/ModelCheck.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

#include <functional>
#include <mutex>
#include <set>

namespace dlc {
namespace {

using Check = std::function<void(onnx::InferenceContext &)>;

// Wraps the inference function of every version of `op` up to `maxOpset`.
void guard(const std::string &op, const Check &check) {
  constexpr int kMaxOpset = 30; // beyond every opset the installed library knows
  std::set<const onnx::OpSchema *> versions;
  for (int v = 1; v <= kMaxOpset; ++v)
    if (const auto *schema = onnx::OpSchemaRegistry::Schema(op, v, ""))
      versions.insert(schema);
  for (const onnx::OpSchema *schema : versions) {
    // The registry owns its schemas as mutable objects and hands out const pointers; the
    // setter is the library's own way to install an inference function.
    auto original = schema->GetTypeAndShapeInferenceFunction();
    const_cast<onnx::OpSchema *>(schema)->TypeAndShapeInferenceFunction(
        [check, original](onnx::InferenceContext &ctx) {
          check(ctx);
          original(ctx);
        });
  }
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

} // namespace

void guardShapeInference() {
  static std::once_flag once;
  std::call_once(once, [] { guard("Conv", checkConvWeightRank); });
}

} // namespace dlc
