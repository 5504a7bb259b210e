// The CUDA target's public C API: contexts and the options a generated CUDA model's create
// takes. The calls a generated schedule makes are not here: they are the compiler's and the
// runtime's contract (dlc_cuda_calls.h).
#ifndef DLC_CUDA_H
#define DLC_CUDA_H

#include "dlc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

// One device, one stream on it and a cuBLAS handle (and, from the first model with a cuDNN
// convolution, a cuDNN handle), which models created with it share. It
// is reference counted: a model holds a reference from create to destroy, so the context and
// its models may be released and destroyed in either order.
typedef struct dlc_cuda_context dlc_cuda_context;
dlc_status dlc_cuda_context_create(int device, dlc_cuda_context **context);
// Drops the caller's reference (null is ignored); the context is destroyed, its stream
// synchronized first, when no model holds it any more.
void dlc_cuda_context_release(dlc_cuda_context *context);

// The last CUDA or cuBLAS call that failed on the calling thread and why ("" if none): what
// a create that returned DLC_DEVICE_ERROR ran into.
const char *dlc_cuda_last_error(void);
// The context's stream (a cudaStream_t). It does not synchronize with the legacy default
// stream: work the caller queues on other streams for a model's device buffers (filling the
// inputs, reading the outputs) must be ordered with this one (events, or a synchronize).
void *dlc_cuda_context_stream(dlc_cuda_context *context);

// What a CUDA model's create takes: a context to share, or (context null) the device ordinal
// for a context of the model's own. cuda_graph non-zero: run() captures its launches into a
// CUDA graph once and replays it (one launch instead of one per kernel) while the input and
// output pointers are the ones it was captured with; new pointers capture a new graph.
typedef struct dlc_cuda_options {
  int device;
  dlc_cuda_context *context;
  int cuda_graph;
} dlc_cuda_options;

// Where a model of a library built with --target cpu,cuda runs (NAME_any_create): on the CPU
// with `threads` threads per run (0: the default), or on a GPU as `cuda` says.
typedef enum dlc_device_kind { DLC_DEVICE_CPU = 0, DLC_DEVICE_CUDA = 1 } dlc_device_kind;
typedef struct dlc_device_options {
  dlc_device_kind kind;
  int threads;
  dlc_cuda_options cuda;
} dlc_device_options;

#ifdef __cplusplus
} // extern "C"

namespace dlc {
namespace cuda {
// What a generated model holds, opaque to its users.
struct ConvPlan;
struct Graph;
struct KernelLibrary;
} // namespace cuda
} // namespace dlc
#endif // __cplusplus
#endif // DLC_CUDA_H
