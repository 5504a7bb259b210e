// The CUDA target: generated kernels and cuBLAS/cuDNN calls over runtime/cuda/.
#include "compiler/Embedded.h"
#include "compiler/toolchain/Toolchain.h"
#include "compiler/codegen/Emitter.h"
#include "compiler/target/Target.h"
#include "compiler/target/Targets.h"
#include "dialects/DlcDialect.h"

#include "llvm/Support/Path.h"

using namespace mlir;

namespace dlc {
namespace {

// One float per [batch, channel] row: the kernels sum rows in parallel, then add them up per
// channel in the CPU kernel's order.
int64_t batchNormRows(Value input) {
  auto shape = tensorType(input).getShape();
  return shape[0] * shape[1];
}

class CudaTarget final : public Target {
public:
  // The kernels read every constant as it is; the arena is device memory (no poisoning).
  CudaTarget()
      : Target({"cuda", "_cuda", ".cu", /*packsWeights=*/false, /*poisonsDeadMemory=*/false,
                /*needsNvcc=*/true,
                // NVRTC compiles the kernels at create time on GPUs the fat binary lacks.
                /*libraries=*/{"cudart", "cublas", "cudnn", "nvrtc"}}) {}

  std::optional<int64_t> workspaceBytes(Operation *op) const override {
    // An LU copy of every matrix: one thread factors each.
    if (auto det = dyn_cast<DetOp>(op)) {
      int64_t m = tensorType(det.getInput()).getShape().back();
      return tensorType(det.getOutput()).getNumElements() * m * m * int64_t(sizeof(double));
    }
    const int64_t f = sizeof(float);
    if (auto stats = dyn_cast<BatchNormStatsOp>(op))
      return batchNormRows(stats.getInput()) * f;
    // Two sums per row, then two per channel.
    if (auto grad = dyn_cast<BatchNormGradInputOp>(op))
      return (2 * batchNormRows(grad.getInput()) + 2 * tensorType(grad.getInput()).getShape()[1]) *
             f;
    if (auto grad = dyn_cast<BatchNormGradParamsOp>(op))
      return 2 * batchNormRows(grad.getInput()) * f;
    // Convolutions: cuDNN's workspace is the model's, sized when it is created.
    return 0;
  }

  void emitCopyToOutput(KernelEmitter &e, const std::string &buffer, const std::string &source,
                        const std::string &bytes) const override {
    e.checkedCall("dlc::cuda::copyOnDevice(context, " + buffer + ", " + source + ", " + bytes +
                  ")");
  }

  std::vector<BuildStep> modelBuild(const std::string &source, const std::string &weightsSource,
                                    const std::string &includeDir,
                                    const Toolchain &tools) const override {
    return {{{source}, {includeDir}, nvccCommand(tools.nvcc, tools.cudaArchs)},
            {{weightsSource}, {includeDir}, cxxCommand("")}};
  }
  std::vector<std::string> shippedRuntimeFiles() const override {
    std::vector<std::string> files;
    for (const EmbeddedFile &f : embeddedFiles())
      if (f.isCudaRuntime())
        files.push_back(f.name);
    return files;
  }
  std::vector<BuildStep> runtimeBuild(const std::string &dir,
                                      const Toolchain &tools) const override {
    // The calls both implementations share, over the CUDA libraries' implementation (the
    // emulated one, dlc_cuda_emulated.cpp, ships for tests on machines without a GPU).
    return {{{dir + "/dlc_cuda.cpp", dir + "/dlc_cuda_device.cpp"},
             {dir, cudaIncludeDir(tools.nvcc)},
             cxxCommand("")}};
  }

protected:
  void addEmitters(EmitterTable &table) const override { addCudaEmitters(table); }
  void addLayoutPasses(OpPassManager &) const override {}
  LogicalResult checkAttributes(Operation *op) const override {
    auto conv = dyn_cast<ConvOp>(op);
    if (conv && conv.getChannelsLast())
      return op->emitError("the cuda target's convolutions read NCHW data; this one is "
                           "channels_last (a CPU layout)");
    return success();
  }
};

} // namespace

const Target &cudaTarget() {
  static const CudaTarget target;
  return target;
}

} // namespace dlc
