// The calls a generated CUDA schedule makes: device memory, copies, cuBLAS and cuDNN, graph
// capture and NVRTC loading. dlc_cuda.cpp holds what is common to both implementations;
// dlc_cuda_device.cpp implements the rest on the CUDA runtime, cuBLAS, cuDNN and NVRTC,
// dlc_cuda_emulated.cpp (built with -DDLC_CUDA_EMULATE) on the host instead ("device" memory is
// host memory, kernels run as loops over their grid), so generated CUDA code is tested on
// machines without a GPU. Nothing here runs at static initialisation or at exit.
#ifndef DLC_CUDA_CALLS_H
#define DLC_CUDA_CALLS_H

#include "dlc_cuda.h"
#include "dlc_cuda_conv.h"
#include "dlc_cuda_gemm.h"

#include <stddef.h>
#include <stdint.h>
#include <string>

namespace dlc {
namespace cuda {

// Every call returns null, or the failed call and CUDA's words for it ("cudaMalloc: out of
// memory"), in storage of the calling thread that the next failure on it overwrites.
const char *retain(dlc_cuda_context *context);
const char *allocate(dlc_cuda_context *context, size_t bytes, void **device);
void deallocate(dlc_cuda_context *context, void *device);
// Copies in stream order; the host side of copyToDevice may be reused once it returns (it
// waits for the copy), the host side of copyToHost holds its data after synchronize().
const char *copyToDevice(dlc_cuda_context *context, void *device, const void *host, size_t bytes);
const char *copyToHost(dlc_cuda_context *context, void *host, const void *device, size_t bytes);
const char *copyOnDevice(dlc_cuda_context *context, void *to, const void *from, size_t bytes);
const char *synchronize(dlc_cuda_context *context);
// C = alpha * op(A) * op(B) + beta * C, row-major as dlc::rt::sgemm takes it, on the stream,
// for each product of `batch` (cuBLAS; in float32 throughout unless `tf32`, which lets tensor
// cores round the inputs to TF32; the emulation always computes in float32).
const char *sgemm(dlc_cuda_context *context, bool tf32, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc, GemmBatch batch = {});
// A float32 convolution by cuDNN (y = conv(x, w), nothing added), planned at create time:
// the algorithm cuDNN's heuristics rank first among those needing at most
// `workspaceLimit` bytes of workspace, in float32 unless `tf32`. `workspaceBytes` is what
// conv needs for it. (The emulation computes the same convolution by plain loops.)
const char *createConv(dlc_cuda_context *context, const CudnnConvShape &shape, bool tf32,
                       size_t workspaceLimit, ConvPlan **plan, size_t *workspaceBytes);
const char *conv(dlc_cuda_context *context, const ConvPlan *plan, const float *x, const float *w,
                 float *y, void *workspace);
void destroyConv(ConvPlan *plan); // null is ignored
// A schedule captured once and replayed: a CUDA graph (in emulation, the recorded calls).
// Between beginCapture and endCapture nothing runs: the calling thread's launches, copies and
// sgemm calls on the context's stream are recorded. endCapture always ends the capture; with
// `graph` null it drops what was recorded (a schedule that failed half-way).
const char *beginCapture(dlc_cuda_context *context);
const char *endCapture(dlc_cuda_context *context, Graph **graph);
const char *launchGraph(dlc_cuda_context *context, Graph *graph);
void destroyGraph(Graph *graph); // null is ignored
// Forgets an earlier failure of a CUDA call on this thread, which `launched` would otherwise
// report for the next kernel (cudaGetLastError keeps the last one of any call).
void clearLaunchError();
// After a kernel launch: null, or the launch's error named after `kernel`.
const char *launched(dlc_cuda_context *context, const char *kernel);
// The context's cudaStream_t, for kernel launches (void *: this header needs no CUDA header).
void *stream(dlc_cuda_context *context);

// A model's kernels as source, for NVRTC: compiled at create time when the library's fat
// binary has no image the device can run (an architecture outside --cuda-arch and older than
// its PTX), or always for models compiled with --cuda-jit. `source` defines the kernels as
// extern "C" kernel0 ... kernel<count - 1> and includes the runtime headers given as text.
struct KernelSource {
  const char *source;
  int headerCount;
  const char *const *headers;
  const char *const *headerNames;
  int kernelCount;
};
// NVRTC compiles `source` for compute capability major.minor: a cubin, or PTX of the newest
// architecture NVRTC knows when the device is newer still. Needs no GPU. `warnings`, when
// given, gets what NVRTC said about a source it compiled (empty when it said nothing).
const char *compileKernels(const KernelSource &source, int major, int minor, std::string *image,
                           std::string *warnings = nullptr);
// Whether the device cannot run `kernel`, a kernel of the fat binary (false in emulation).
const char *fatBinaryLacksDevice(dlc_cuda_context *context, const void *kernel, bool *lacks);
// compileKernels for the context's device, loaded (a CUDA library) with its kernels looked
// up. The emulation runs its own kernels and loads nothing (`library` stays null).
const char *loadKernels(dlc_cuda_context *context, const KernelSource &source,
                        KernelLibrary **library);
void unloadKernels(KernelLibrary *library); // null is ignored
// Queues kernel `index` of `library` on the context's stream; `args` point at its arguments.
// Failures show in the next `launched`.
void launchLoaded(dlc_cuda_context *context, const KernelLibrary *library, int index,
                  unsigned blocks, unsigned threads, void **args);

// Serializes the threads that queue work on one context's stream (models sharing a context):
// a model holds it from its first queued call to its last, so a CUDA graph capture on the
// stream records only that model's work, and the shared cuBLAS/cuDNN handles are used by one
// thread at a time. Recursive. Work the application queues on the stream itself from another
// thread while a model with cuda_graph runs would be captured: take this lock around it.
class StreamLock {
public:
  explicit StreamLock(dlc_cuda_context *context);
  ~StreamLock();
  StreamLock(const StreamLock &) = delete;
  StreamLock &operator=(const StreamLock &) = delete;

private:
  dlc_cuda_context *context_;
};

// Makes the context's device current on the calling thread for the scope's lifetime and then
// restores the caller's (when it was another): kernel launches and cuBLAS calls go to the
// current device.
class DeviceScope {
public:
  explicit DeviceScope(const dlc_cuda_context *context);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  // Null, or why the device could not be made current.
  const char *error() const { return error_; }

private:
  int previous_ = -1;
  const char *error_ = nullptr;
};

} // namespace cuda
} // namespace dlc
#endif // DLC_CUDA_CALLS_H
