// The CPU target: C++ over the runtime's kernels in runtime/.
#include "compiler/toolchain/Toolchain.h"
#include "compiler/codegen/Emitter.h"
#include "compiler/target/Target.h"
#include "compiler/target/Targets.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace dlc {
namespace {

// A convolution's workspace as the runtime sizes it. Its im2col chunks hold at least one
// output row's columns, and the runtime's sizing multiplies that row out in int64: where the
// row alone is beyond the tensor limit (a kernel about as wide as its input), no arena could
// hold it and the product may overflow, so the size is refused before the runtime is asked.
std::optional<int64_t> convWorkspace(const rt::ConvParams &p,
                                     size_t (*runtimeBytes)(const rt::ConvParams &)) {
  const rt::WindowParams &w = p.window;
  std::optional<int64_t> rowBytes = int64_t(sizeof(float)) * (w.channels / p.groups);
  for (int64_t d : {w.kernel[0], w.kernel[1], w.kernel[2], w.out[2]})
    rowBytes = rowBytes ? checkedMul(*rowBytes, d) : std::nullopt;
  if (!rowBytes || *rowBytes > kMaxTensorBytes)
    return std::nullopt;
  return int64_t(runtimeBytes(p));
}

class CpuTarget final : public Target {
public:
  CpuTarget()
      : Target({"cpu", "", ".cpp", /*packsWeights=*/true, /*poisonsDeadMemory=*/true,
                /*needsNvcc=*/false, /*libraries=*/{},
                /*ownOps=*/{AttentionOp::getOperationName().data(),
                            LayerNormOp::getOperationName().data(),
                            RotaryOp::getOperationName().data()}}) {}

  std::optional<int64_t> workspaceBytes(Operation *op) const override {
    if (auto conv = dyn_cast<ConvOp>(op))
      return convWorkspace(convParams(conv), rt::convWorkspaceBytes);
    if (auto grad = dyn_cast<ConvGradInputOp>(op))
      return convWorkspace(convParams(grad), rt::convBackwardDataWorkspaceBytes);
    if (auto grad = dyn_cast<ConvGradWeightOp>(op))
      return convWorkspace(convParams(grad), rt::convBackwardFilterWorkspaceBytes);
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      const AttentionGeometry g = *attentionGeometry(attention); // verified
      return int64_t(rt::attentionWorkspaceBytes(product(g.batch), g.queries, g.depth, g.keys,
                                                 g.valueDepth,
                                                 attentionVisibleKeys(attention).has_value()));
    }
    // An LU copy of one matrix: the kernel factors the matrices one after another.
    if (auto det = dyn_cast<DetOp>(op)) {
      int64_t m = tensorType(det.getInput()).getShape().back();
      return m * m * int64_t(sizeof(double));
    }
    return 0;
  }

  void emitCopyToOutput(KernelEmitter &e, const std::string &buffer, const std::string &source,
                        const std::string &bytes) const override {
    e.line("dlc::rt::copyBytes(" + source + ", " + buffer + ", " + bytes + ");");
  }

  std::vector<BuildStep> modelBuild(const std::string &source, const std::string &weightsSource,
                                    const std::string &includeDir,
                                    const Toolchain &tools) const override {
    return {{{source, weightsSource}, {includeDir}, cxxCommand(tools.cpu)}};
  }
  // The CPU runtime's objects go into every library (runtimeObjects, Toolchain.h).
  std::vector<std::string> shippedRuntimeFiles() const override { return {}; }
  std::vector<BuildStep> runtimeBuild(const std::string &, const Toolchain &) const override {
    return {};
  }

protected:
  void addEmitters(EmitterTable &table) const override {
    addElementwiseEmitters(table);
    addLinalgEmitters(table);
    addWindowEmitters(table);
    addReductionEmitters(table);
    addDataMovementEmitters(table);
    addOptimizerEmitters(table);
  }
  void addLayoutPasses(OpPassManager &pm) const override {
    pm.addNestedPass<func::FuncOp>(createChannelsLast());
    pm.addNestedPass<func::FuncOp>(createFuseInputScale());
    pm.addNestedPass<func::FuncOp>(createFuseRotary());
    pm.addNestedPass<func::FuncOp>(createMergeLinears());
    pm.addNestedPass<func::FuncOp>(createFuseAttention());
    pm.addNestedPass<func::FuncOp>(createFuseLayerNorm());
  }
  LogicalResult checkAttributes(Operation *) const override { return success(); }
};

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace dlc
