// dlc_cuda.h on the CUDA runtime and cuBLAS or, with -DDLC_CUDA_EMULATE, on the host. The
// context's reference counting and the error texts are shared; only the primitives differ.
#include "dlc_cuda.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#ifdef DLC_CUDA_EMULATE
#include "dlc_cuda_kernels.h"
#else
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

struct dlc_cuda_context {
  int device;
  std::atomic<int> references{1};
#ifndef DLC_CUDA_EMULATE
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
#endif
};

namespace dlc {
namespace cuda {
namespace {

// The text of the last failure on this thread.
thread_local char lastMessage[256];

const char *failure(const char *call, const char *why) {
  std::snprintf(lastMessage, sizeof lastMessage, "%s: %s", call, why);
  return lastMessage;
}

#ifndef DLC_CUDA_EMULATE
const char *check(cudaError_t error, const char *call) {
  return error == cudaSuccess ? nullptr : failure(call, cudaGetErrorString(error));
}
const char *check(cublasStatus_t status, const char *call) {
  return status == CUBLAS_STATUS_SUCCESS ? nullptr : failure(call, cublasGetStatusString(status));
}

void destroy(dlc_cuda_context *context) {
  {
    DeviceScope scope(context);
    if (context->stream)
      cudaStreamSynchronize(context->stream);
    if (context->blas)
      cublasDestroy(context->blas);
    if (context->stream)
      cudaStreamDestroy(context->stream);
  }
  delete context;
}
#else
void destroy(dlc_cuda_context *context) { delete context; }
#endif

} // namespace

#ifdef DLC_CUDA_EMULATE
DeviceScope::DeviceScope(const dlc_cuda_context *) {}
DeviceScope::~DeviceScope() {}
#else
DeviceScope::DeviceScope(const dlc_cuda_context *context) {
  if (cudaGetDevice(&previous_) != cudaSuccess)
    previous_ = -1;
  error_ = check(cudaSetDevice(context->device), "cudaSetDevice");
}
DeviceScope::~DeviceScope() {
  if (previous_ >= 0)
    cudaSetDevice(previous_);
}
#endif

#ifdef DLC_CUDA_EMULATE
namespace emulate {
thread_local GridIndex blockIdx, threadIdx, blockDim;
thread_local std::vector<std::function<void()>> *recording;

// Runs `call` now, or records it while a graph is being captured.
void runOrRecord(std::function<void()> call) {
  if (recording)
    recording->push_back(std::move(call));
  else
    call();
}
} // namespace emulate

struct Graph {
  std::vector<std::function<void()>> calls;
};
#else
struct Graph {
  cudaGraphExec_t exec = nullptr;
};
#endif

const char *retain(dlc_cuda_context *context) {
  if (!context)
    return failure("dlc_cuda_context", "null context");
  context->references.fetch_add(1);
  return nullptr;
}

const char *allocate(dlc_cuda_context *context, size_t bytes, void **device) {
  *device = nullptr;
  if (bytes == 0)
    return nullptr;
#ifdef DLC_CUDA_EMULATE
  (void)context;
  *device = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *device ? nullptr : failure("cudaMalloc", "out of memory");
#else
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  return check(cudaMalloc(device, bytes), "cudaMalloc");
#endif
}

void deallocate(dlc_cuda_context *context, void *device) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  std::free(device);
#else
  if (!device)
    return;
  DeviceScope scope(context);
  cudaFree(device);
#endif
}

namespace {
// The one copy primitive, in stream order (the emulation copies at once).
#ifdef DLC_CUDA_EMULATE
enum Direction { kToDevice, kToHost, kOnDevice };
#else
enum Direction {
  kToDevice = cudaMemcpyHostToDevice,
  kToHost = cudaMemcpyDeviceToHost,
  kOnDevice = cudaMemcpyDeviceToDevice,
};
#endif
const char *copy(dlc_cuda_context *context, void *to, const void *from, size_t bytes,
                 Direction direction, const char *call) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  (void)direction;
  (void)call;
  if (bytes)
    emulate::runOrRecord([=] { std::memmove(to, from, bytes); });
  return nullptr;
#else
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  return check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyKind(direction), context->stream), call);
#endif
}
} // namespace

const char *copyToDevice(dlc_cuda_context *context, void *device, const void *host, size_t bytes) {
  if (const char *error =
          copy(context, device, host, bytes, kToDevice, "cudaMemcpyAsync (to the device)"))
    return error;
  // Pageable host memory may be reused as soon as the copy has read it.
  return synchronize(context);
}

const char *copyToHost(dlc_cuda_context *context, void *host, const void *device, size_t bytes) {
  return copy(context, host, device, bytes, kToHost, "cudaMemcpyAsync (to the host)");
}

const char *copyOnDevice(dlc_cuda_context *context, void *to, const void *from, size_t bytes) {
  return copy(context, to, from, bytes, kOnDevice, "cudaMemcpyAsync (on the device)");
}

const char *synchronize(dlc_cuda_context *context) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  return nullptr;
#else
  return check(cudaStreamSynchronize(context->stream), "cudaStreamSynchronize");
#endif
}

const char *sgemm(dlc_cuda_context *context, bool tf32, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  (void)tf32;
  emulate::runOrRecord(
      [=] { dlc::rt::sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  return nullptr;
#else
  // cuBLAS wants every leading dimension >= 1, also for an empty product (k = 0: C = beta C).
  lda = lda < 1 ? 1 : lda;
  ldb = ldb < 1 ? 1 : ldb;
  ldc = ldc < 1 ? 1 : ldc;
  const int64_t limit = 0x7fffffff;
  if (m > limit || n > limit || k > limit || lda > limit || ldb > limit || ldc > limit)
    return failure("cublasGemmEx", "a dimension exceeds cuBLAS's int range");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same buffers with
  // the operands swapped.
  return check(cublasGemmEx(context->blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                            transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &alpha, b,
                            CUDA_R_32F, int(ldb), a, CUDA_R_32F, int(lda), &beta, c, CUDA_R_32F,
                            int(ldc), tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
#endif
}

const char *beginCapture(dlc_cuda_context *context) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  if (emulate::recording)
    return failure("cudaStreamBeginCapture", "already capturing");
  emulate::recording = new (std::nothrow) std::vector<std::function<void()>>;
  return emulate::recording ? nullptr : failure("cudaStreamBeginCapture", "out of memory");
#else
  // Thread-local mode: other threads' CUDA calls (other models) do not disturb the capture.
  return check(cudaStreamBeginCapture(context->stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
#endif
}

const char *endCapture(dlc_cuda_context *context, Graph **graph) {
  if (graph)
    *graph = nullptr;
#ifdef DLC_CUDA_EMULATE
  (void)context;
  std::vector<std::function<void()>> *calls = emulate::recording;
  emulate::recording = nullptr;
  if (!calls)
    return failure("cudaStreamEndCapture", "not capturing");
  if (graph)
    *graph = new (std::nothrow) Graph{std::move(*calls)};
  delete calls;
  return graph && !*graph ? failure("cudaGraphInstantiate", "out of memory") : nullptr;
#else
  cudaGraph_t captured = nullptr;
  const char *error =
      check(cudaStreamEndCapture(context->stream, &captured), "cudaStreamEndCapture");
  auto *made = graph && !error ? new (std::nothrow) Graph : nullptr;
  if (graph && !error && !made)
    error = failure("cudaGraphInstantiate", "out of memory");
  if (made && !error)
    error = check(cudaGraphInstantiate(&made->exec, captured, 0), "cudaGraphInstantiate");
  if (captured)
    cudaGraphDestroy(captured);
  if (error) {
    destroyGraph(made);
    return error;
  }
  if (graph)
    *graph = made;
  return nullptr;
#endif
}

const char *launchGraph(dlc_cuda_context *context, Graph *graph) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  for (const auto &call : graph->calls)
    call();
  return nullptr;
#else
  return check(cudaGraphLaunch(graph->exec, context->stream), "cudaGraphLaunch");
#endif
}

void destroyGraph(Graph *graph) {
#ifndef DLC_CUDA_EMULATE
  if (graph && graph->exec)
    cudaGraphExecDestroy(graph->exec);
#endif
  delete graph;
}

const char *launched(dlc_cuda_context *context, const char *kernel) {
  (void)context;
#ifdef DLC_CUDA_EMULATE
  (void)kernel;
  return nullptr;
#else
  return check(cudaGetLastError(), kernel);
#endif
}

void *stream(dlc_cuda_context *context) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  return nullptr;
#else
  return context->stream;
#endif
}

} // namespace cuda
} // namespace dlc

extern "C" {

dlc_status dlc_cuda_context_create(int device, dlc_cuda_context **context) {
  if (!context)
    return DLC_INVALID_ARGUMENT;
  *context = nullptr;
  if (device < 0)
    return DLC_INVALID_ARGUMENT;
  auto *created = new (std::nothrow) dlc_cuda_context;
  if (!created)
    return DLC_OUT_OF_MEMORY;
  created->device = device;
#ifndef DLC_CUDA_EMULATE
  {
    using dlc::cuda::check;
    dlc::cuda::DeviceScope scope(created);
    bool ok = !scope.error() &&
              !check(cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking),
                     "cudaStreamCreateWithFlags") &&
              !check(cublasCreate(&created->blas), "cublasCreate") &&
              !check(cublasSetStream(created->blas, created->stream), "cublasSetStream") &&
              // FP32 products stay FP32: the default math mode never uses TF32 tensor cores.
              !check(cublasSetMathMode(created->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    if (!ok) {
      dlc::cuda::destroy(created);
      return DLC_DEVICE_ERROR;
    }
  }
#endif
  *context = created;
  return DLC_OK;
}

const char *dlc_cuda_last_error(void) { return dlc::cuda::lastMessage; }

void *dlc_cuda_context_stream(dlc_cuda_context *context) {
  return context ? dlc::cuda::stream(context) : nullptr;
}

void dlc_cuda_context_release(dlc_cuda_context *context) {
  if (context && context->references.fetch_sub(1) == 1)
    dlc::cuda::destroy(context);
}

} // extern "C"
