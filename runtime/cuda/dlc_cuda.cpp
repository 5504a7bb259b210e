// What the CUDA runtime's two implementations share: the context's reference counting, the
// error texts, the copy and GEMM entry points over each implementation's primitive, and the
// C API. Built with dlc_cuda_device.cpp, or with dlc_cuda_emulated.cpp and -DDLC_CUDA_EMULATE.
#include "dlc_cuda_context.h"

#include <cstdio>
#include <new>

namespace dlc {
namespace cuda {
namespace {
// The text of the last failure on this thread.
thread_local char lastMessage[256];

void destroy(dlc_cuda_context *context) {
  destroyHandles(context);
  delete context;
}
} // namespace

const char *failure(const char *call, const char *why) {
  std::snprintf(lastMessage, sizeof lastMessage, "%s: %s", call, why);
  return lastMessage;
}

StreamLock::StreamLock(dlc_cuda_context *context) : context_(context) { context_->queue.lock(); }
StreamLock::~StreamLock() { context_->queue.unlock(); }

const char *retain(dlc_cuda_context *context) {
  if (!context)
    return failure("dlc_cuda_context", "null context");
  context->references.fetch_add(1);
  return nullptr;
}

const char *copyToDevice(dlc_cuda_context *context, void *device, const void *host, size_t bytes) {
  if (const char *error =
          copy(context, device, host, bytes, Direction::ToDevice, "cudaMemcpyAsync (to the device)"))
    return error;
  // Pageable host memory may be reused as soon as the copy has read it.
  return synchronize(context);
}

const char *copyToHost(dlc_cuda_context *context, void *host, const void *device, size_t bytes) {
  return copy(context, host, device, bytes, Direction::ToHost, "cudaMemcpyAsync (to the host)");
}

const char *copyOnDevice(dlc_cuda_context *context, void *to, const void *from, size_t bytes) {
  return copy(context, to, from, bytes, Direction::OnDevice, "cudaMemcpyAsync (on the device)");
}

const char *sgemm(dlc_cuda_context *context, bool tf32, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc, GemmBatch batch) {
  CublasGemmShape shape;
  if (!cublasGemmShape(transA, transB, m, n, k, lda, ldb, ldc, batch, shape))
    return failure("cublasGemmEx", "a dimension exceeds cuBLAS's int range");
  // The column-major product's first operand is B, its second A.
  return gemm(context, tf32, shape, alpha, b, a, beta, c);
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
  if (dlc::cuda::createHandles(created)) {
    dlc::cuda::destroy(created);
    return DLC_DEVICE_ERROR;
  }
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
