// What dlc_cuda.cpp shares with the implementation it is built with (dlc_cuda_device.cpp, or
// dlc_cuda_emulated.cpp with -DDLC_CUDA_EMULATE): the context, the error texts, and the
// primitives the common calls are written over. Internal to the CUDA runtime.
#ifndef DLC_CUDA_CONTEXT_H
#define DLC_CUDA_CONTEXT_H

#include "dlc_cuda_calls.h"

#include <atomic>
#include <mutex>

// The CUDA libraries' handle types (cudaStream_t, cublasHandle_t, cudnnHandle_t point at
// these), declared so that this header needs no CUDA header. The emulation leaves them null.
struct CUstream_st;
struct cublasContext;
struct cudnnContext;

struct dlc_cuda_context {
  int device;
  std::atomic<int> references{1};
  // Held while a model queues work on the stream (StreamLock): models on several threads share
  // the stream, its cuBLAS and cuDNN handles, and a graph capture on it.
  std::recursive_mutex queue;
  CUstream_st *stream = nullptr;
  cublasContext *blas = nullptr;
  // Made by the first createConv (loading cuDNN costs time and memory models without
  // convolutions need not pay).
  cudnnContext *dnn = nullptr;
};

namespace dlc {
namespace cuda {

// Formats "call: why" into the calling thread's last-failure storage and returns it.
const char *failure(const char *call, const char *why);

// Implemented once per backend.
// The context's stream and library handles; on failure the caller destroys the context.
const char *createHandles(dlc_cuda_context *context);
// Waits for the stream, then releases whatever createHandles and createConv made.
void destroyHandles(dlc_cuda_context *context);
enum class Direction { ToDevice, ToHost, OnDevice };
// The one copy primitive, in stream order (or recorded while capturing).
const char *copy(dlc_cuda_context *context, void *to, const void *from, size_t bytes,
                 Direction direction, const char *call);
// The column-major product `shape` describes, with B as its first operand and A as its second.
const char *gemm(dlc_cuda_context *context, bool tf32, const CublasGemmShape &shape, float alpha,
                 const float *first, const float *second, float beta, float *c);

} // namespace cuda
} // namespace dlc

#endif // DLC_CUDA_CONTEXT_H
