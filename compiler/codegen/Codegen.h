// dlc dialect (after buffer assignment) -> C++ sources for the CPU runtime, or CUDA sources
// for the CUDA runtime.
#ifndef DLC_COMPILER_CODEGEN_H
#define DLC_COMPILER_CODEGEN_H

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
}

namespace dlc {

class Target;

struct GeneratedModel {
  std::string header;        // NAME.h
  std::string source;        // NAME.cpp (NAME.cu for CUDA): the schedule and the API
  std::string weightsSource; // NAME_weights.cpp: embeds the weights file
  std::vector<char> weights; // NAME.weights.bin
  size_t arenaBytes = 0;
};

// What only the CUDA target reads.
struct CudaCodegenOptions {
  bool allowTf32 = false; // --allow-tf32: float32 products may use TF32 tensor cores
  bool alwaysJit = false; // --cuda-jit: NVRTC compiles the kernels at create time on any GPU
};

struct CodegenOptions {
  CudaCodegenOptions cuda;
  // --profile: every run of @forward times each op (NAME_profile); CPU targets only.
  bool profile = false;
  // --dump: every run of @forward hands each op's results to a function (NAME_set_dump); CPU
  // targets only, not with profile.
  bool dump = false;
  // --fused-chains interpret: fused elementwise chains run on the runtime's interpreter
  // instead of as generated code (A/B comparisons; the same bits).
  bool interpretFusedChains = false;
};

// Fails (after emitting MLIR diagnostics on the offending ops) when an op has no kernel for
// `target`. `weightsPath` is what NAME_weights.cpp's `.incbin` names.
bool generateCode(mlir::ModuleOp module, const Target &target, const std::string &name,
                  const std::string &modelPath, const std::string &weightsPath, GeneratedModel &out,
                  const CodegenOptions &options = {});

// NAME_weights.cpp for a weights file of `bytes` bytes at `path`.
std::string weightsSource(const std::string &name, size_t bytes, const std::string &path);
// NAME_any.h or NAME_any.cpp (`header`): the API that picks the CPU model NAME or the CUDA
// model NAME_cuda of a --target cpu,cuda library at create time.
std::string anyDeviceSource(const std::string &name, const std::string &modelPath, bool header);

} // namespace dlc

#endif
