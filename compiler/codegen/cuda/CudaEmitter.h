// Internal to the CUDA target's codegen: the helpers its emitter files share (Kernels.cpp
// defines them) and each file's registration.
#ifndef DLC_COMPILER_CODEGEN_CUDA_CUDAEMITTER_H
#define DLC_COMPILER_CODEGEN_CUDA_CUDAEMITTER_H

#include "compiler/codegen/Emitter.h"

namespace dlc {
namespace cudagen {

// An integer constant in device code (kernels spell shapes and strides as constants).
std::string str(int64_t value);
// "  const int64_t c = ...;": the channel of flat element `i` of an [N, C, d...] tensor.
std::string channelOfElement(int64_t channels, int64_t spatial);
// A float constant in device code (INFINITY / NAN spelled as nvcc accepts them in kernels).
std::string deviceFloat(double value);
bool isF32(mlir::Value v);
// The C type kernels compute `v`'s elements in, or "" for the types that travel as bits.
std::string computeType(mlir::Value v);
// "no CUDA kernel for op ...: <kind> on <result type> is not built yet", on the op.
mlir::LogicalResult noKernelFor(mlir::Operation *op, llvm::StringRef kind);
// A kernel's first lines: the thread's index `i`; threads past `elements` return.
std::string threadIndex(int64_t elements);
// Defines a kernel of `params` and `body` and launches it over `threads` threads on the
// model's stream (blocks of a size fixed here, which the kernel declares as its launch
// bounds), then checks the launch.
void launchKernel(KernelEmitter &e, const std::string &params, const std::string &body,
                  int64_t threads, const std::string &args);
// Statements setting `<prefix><o>` for each operand o from the flat output index `index`.
std::string broadcastOffsets(llvm::ArrayRef<llvm::SmallVector<int64_t>> strides,
                             llvm::ArrayRef<int64_t> outShape, const std::string &index = "i",
                             const std::string &prefix = "offset");
// The fused activation of a conv or gemm applied to `v`, as a device expression.
std::string activationExpression(const dlc::rt::Epilogue &epilogue);
// Copies `input`'s bytes to `result` on the device, unless they are the same buffer.
void copyInputToResult(KernelEmitter &e, mlir::Value input, mlir::Value result);

void addCastEmitters(EmitterTable &table);
void addIndexingEmitters(EmitterTable &table);
void addWindowEmitters(EmitterTable &table);
void addTrainingEmitters(EmitterTable &table);

} // namespace cudagen
} // namespace dlc

#endif
