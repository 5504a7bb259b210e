// dlc_cuda.h on the CUDA runtime and cuBLAS or, with -DDLC_CUDA_EMULATE, on the host. The
// context's reference counting and the error texts are shared; only the primitives differ.
#include "dlc_cuda.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <mutex>

#ifdef DLC_CUDA_EMULATE
#include "dlc_cuda_kernels.h"
#else
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nvrtc.h>
#include <string>
#include <vector>
#endif

struct dlc_cuda_context {
  int device;
  std::atomic<int> references{1};
  // Held while a model queues work on the stream (StreamLock): models on several threads share
  // the stream, its cuBLAS and cuDNN handles, and a graph capture on it.
  std::recursive_mutex queue;
#ifndef DLC_CUDA_EMULATE
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  // Made by the first createConv (loading cuDNN costs time and memory models without
  // convolutions need not pay).
  cudnnHandle_t dnn = nullptr;
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
const char *check(cudnnStatus_t status, const char *call) {
  return status == CUDNN_STATUS_SUCCESS ? nullptr : failure(call, cudnnGetErrorString(status));
}
const char *check(nvrtcResult result, const char *call) {
  return result == NVRTC_SUCCESS ? nullptr : failure(call, nvrtcGetErrorString(result));
}

void destroy(dlc_cuda_context *context) {
  {
    DeviceScope scope(context);
    if (context->stream)
      cudaStreamSynchronize(context->stream);
    if (context->blas)
      cublasDestroy(context->blas);
    if (context->dnn)
      cudnnDestroy(context->dnn);
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
  // Only a change of device is made and undone: setting a device creates its context, which
  // restoring a device the thread never used would do for nothing.
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == context->device)
    return;
  previous_ = current;
  error_ = check(cudaSetDevice(context->device), "cudaSetDevice");
}
DeviceScope::~DeviceScope() {
  if (previous_ >= 0)
    cudaSetDevice(previous_);
}
#endif

StreamLock::StreamLock(dlc_cuda_context *context) : context_(context) { context_->queue.lock(); }
StreamLock::~StreamLock() { context_->queue.unlock(); }

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

#ifdef DLC_CUDA_EMULATE
namespace emulate {
// Column-major C = alpha op(X) op(Y) + beta C for each product of `shape`, as cuBLAS defines
// it (beta 0: C is not read). The loop order keeps the untransposed operand's walk contiguous.
void columnMajorGemm(const CublasGemmShape &shape, float alpha, const float *first,
                     const float *second, float beta, float *c) {
  for (int batch = 0; batch < shape.count; ++batch) {
    const float *x = first + batch * shape.strideFirst, *y = second + batch * shape.strideSecond;
    float *cBatch = c + batch * shape.strideC;
    auto opX = [&](int64_t i, int64_t p) {
      return shape.transFirst ? x[p + i * shape.ldFirst] : x[i + p * shape.ldFirst];
    };
    auto opY = [&](int64_t p, int64_t j) {
      return shape.transSecond ? y[j + p * shape.ldSecond] : y[p + j * shape.ldSecond];
    };
    for (int64_t j = 0; j < shape.n; ++j) {
      float *column = cBatch + j * shape.ldc;
      for (int64_t i = 0; i < shape.m; ++i)
        column[i] = beta == 0.0f ? 0.0f : beta * column[i];
      if (shape.transFirst) {
        for (int64_t i = 0; i < shape.m; ++i) {
          float acc = 0.0f;
          for (int64_t p = 0; p < shape.k; ++p)
            acc += opX(i, p) * opY(p, j);
          column[i] += alpha * acc;
        }
      } else {
        for (int64_t p = 0; p < shape.k; ++p) {
          const float scaled = alpha * opY(p, j);
          for (int64_t i = 0; i < shape.m; ++i)
            column[i] += opX(i, p) * scaled;
        }
      }
    }
  }
}
} // namespace emulate
#endif

const char *sgemm(dlc_cuda_context *context, bool tf32, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc, GemmBatch batch) {
  CublasGemmShape shape;
  if (!cublasGemmShape(transA, transB, m, n, k, lda, ldb, ldc, batch, shape))
    return failure("cublasGemmEx", "a dimension exceeds cuBLAS's int range");
  // The column-major product's first operand is B, its second A.
  const float *first = b, *second = a;
#ifdef DLC_CUDA_EMULATE
  (void)context;
  (void)tf32;
  emulate::runOrRecord([=] { emulate::columnMajorGemm(shape, alpha, first, second, beta, c); });
  return nullptr;
#else
  auto op = [](bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (shape.count == 1)
    return check(cublasGemmEx(context->blas, op(shape.transFirst), op(shape.transSecond), shape.m,
                              shape.n, shape.k, &alpha, first, CUDA_R_32F, shape.ldFirst, second,
                              CUDA_R_32F, shape.ldSecond, &beta, c, CUDA_R_32F, shape.ldc, compute,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  return check(cublasGemmStridedBatchedEx(
                   context->blas, op(shape.transFirst), op(shape.transSecond), shape.m, shape.n,
                   shape.k, &alpha, first, CUDA_R_32F, shape.ldFirst, shape.strideFirst, second,
                   CUDA_R_32F, shape.ldSecond, shape.strideSecond, &beta, c, CUDA_R_32F, shape.ldc,
                   shape.strideC, shape.count, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
#endif
}

#ifdef DLC_CUDA_EMULATE
struct ConvPlan {
  CudnnConvShape shape;
};
#else
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm{};
  size_t workspaceBytes = 0;
};
#endif

void destroyConv(ConvPlan *plan) {
#ifndef DLC_CUDA_EMULATE
  if (plan) {
    if (plan->x)
      cudnnDestroyTensorDescriptor(plan->x);
    if (plan->y)
      cudnnDestroyTensorDescriptor(plan->y);
    if (plan->w)
      cudnnDestroyFilterDescriptor(plan->w);
    if (plan->conv)
      cudnnDestroyConvolutionDescriptor(plan->conv);
  }
#endif
  delete plan;
}

const char *createConv(dlc_cuda_context *context, const CudnnConvShape &shape, bool tf32,
                       size_t workspaceLimit, ConvPlan **plan, size_t *workspaceBytes) {
  *plan = nullptr;
  *workspaceBytes = 0;
#ifdef DLC_CUDA_EMULATE
  (void)context;
  (void)tf32;
  (void)workspaceLimit;
  *plan = new (std::nothrow) ConvPlan{shape};
  return *plan ? nullptr : failure("cudnnCreate", "out of memory");
#else
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  {
    StreamLock lock(context);
    if (!context->dnn) {
      cudnnHandle_t dnn = nullptr;
      if (const char *error = check(cudnnCreate(&dnn), "cudnnCreate"))
        return error;
      if (const char *error = check(cudnnSetStream(dnn, context->stream), "cudnnSetStream")) {
        cudnnDestroy(dnn);
        return error;
      }
      context->dnn = dnn;
    }
  }
  auto *made = new (std::nothrow) ConvPlan;
  if (!made)
    return failure("cudnnCreate", "out of memory");
  const int rank = shape.spatial + 2;
  // Packed NC(D)HW strides.
  int xStrides[5], yStrides[5];
  xStrides[rank - 1] = yStrides[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; --d) {
    xStrides[d] = xStrides[d + 1] * shape.input[d + 1];
    yStrides[d] = yStrides[d + 1] * shape.output[d + 1];
  }
  int outputDims[5] = {};
  cudnnConvolutionFwdAlgoPerf_t candidates[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  const char *error = check(cudnnCreateTensorDescriptor(&made->x), "cudnnCreateTensorDescriptor");
  if (!error)
    error = check(cudnnCreateTensorDescriptor(&made->y), "cudnnCreateTensorDescriptor");
  if (!error)
    error = check(cudnnCreateFilterDescriptor(&made->w), "cudnnCreateFilterDescriptor");
  if (!error)
    error =
        check(cudnnCreateConvolutionDescriptor(&made->conv), "cudnnCreateConvolutionDescriptor");
  if (!error)
    error =
        check(cudnnSetTensorNdDescriptor(made->x, CUDNN_DATA_FLOAT, rank, shape.input, xStrides),
              "cudnnSetTensorNdDescriptor (input)");
  if (!error)
    error =
        check(cudnnSetTensorNdDescriptor(made->y, CUDNN_DATA_FLOAT, rank, shape.output, yStrides),
              "cudnnSetTensorNdDescriptor (output)");
  if (!error)
    error = check(cudnnSetFilterNdDescriptor(made->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rank,
                                             shape.filter),
                  "cudnnSetFilterNdDescriptor");
  if (!error)
    error = check(cudnnSetConvolutionNdDescriptor(made->conv, shape.spatial, shape.pad,
                                                  shape.stride, shape.dilation,
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  "cudnnSetConvolutionNdDescriptor");
  if (!error)
    error = check(cudnnSetConvolutionGroupCount(made->conv, shape.groups),
                  "cudnnSetConvolutionGroupCount");
  // FMA math keeps float32 convolutions off TF32 tensor cores, which the default allows.
  if (!error)
    error =
        check(cudnnSetConvolutionMathType(made->conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
              "cudnnSetConvolutionMathType");
  if (!error)
    error =
        check(cudnnGetConvolutionNdForwardOutputDim(made->conv, made->x, made->w, rank, outputDims),
              "cudnnGetConvolutionNdForwardOutputDim");
  for (int d = 0; !error && d < rank; ++d)
    if (outputDims[d] != shape.output[d])
      error = failure("cudnnGetConvolutionNdForwardOutputDim",
                      "cuDNN's output shape differs from the planned one");
  if (!error)
    error = check(cudnnGetConvolutionForwardAlgorithm_v7(context->dnn, made->x, made->w, made->conv,
                                                         made->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                         &found, candidates),
                  "cudnnGetConvolutionForwardAlgorithm_v7");
  // The first candidate of an allowed math type (no FP16 conversion; tensor cores only with
  // tf32) within the limit, run with the math type it was ranked for.
  bool chosen = false;
  for (int i = 0; !error && !chosen && i < found; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t &candidate = candidates[i];
    const bool allowed = candidate.mathType == CUDNN_FMA_MATH ||
                         candidate.mathType == CUDNN_DEFAULT_MATH ||
                         (tf32 && candidate.mathType == CUDNN_TENSOR_OP_MATH);
    if (candidate.status != CUDNN_STATUS_SUCCESS || !allowed || candidate.memory > workspaceLimit)
      continue;
    made->algorithm = candidate.algo;
    error = check(cudnnSetConvolutionMathType(made->conv, candidate.mathType),
                  "cudnnSetConvolutionMathType");
    if (!error)
      error = check(cudnnGetConvolutionForwardWorkspaceSize(context->dnn, made->x, made->w,
                                                            made->conv, made->y, made->algorithm,
                                                            &made->workspaceBytes),
                    "cudnnGetConvolutionForwardWorkspaceSize");
    chosen = !error && made->workspaceBytes <= workspaceLimit;
  }
  if (!error && !chosen)
    error = failure("cudnnGetConvolutionForwardAlgorithm_v7",
                    "no algorithm within the workspace limit");
  if (error) {
    destroyConv(made);
    return error;
  }
  *plan = made;
  *workspaceBytes = made->workspaceBytes;
  return nullptr;
#endif
}

const char *conv(dlc_cuda_context *context, const ConvPlan *plan, const float *x, const float *w,
                 float *y, void *workspace) {
#ifdef DLC_CUDA_EMULATE
  (void)context;
  (void)workspace;
  // The definition cuDNN computes: cross-correlation over the padded input, per group.
  const CudnnConvShape s = plan->shape;
  emulate::runOrRecord([=] {
    int in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1}, pad[3] = {0, 0, 0},
        stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
    for (int d = 0; d < s.spatial; ++d) {
      const int at = 3 - s.spatial + d;
      in[at] = s.input[2 + d];
      k[at] = s.filter[2 + d];
      out[at] = s.output[2 + d];
      pad[at] = s.pad[d];
      stride[at] = s.stride[d];
      dilation[at] = s.dilation[d];
    }
    const int64_t inPlane = int64_t(in[0]) * in[1] * in[2], taps = int64_t(k[0]) * k[1] * k[2];
    const int64_t outPlane = int64_t(out[0]) * out[1] * out[2];
    const int channels = s.input[1], outChannels = s.output[1];
    const int perGroup = channels / s.groups, outPerGroup = outChannels / s.groups;
    // Each tap's weight times the input rows it reaches, accumulated over output rows: the
    // innermost loop runs over the output columns the tap keeps inside the input.
    for (int n = 0; n < s.input[0]; ++n)
      for (int m = 0; m < outChannels; ++m) {
        float *outputPlane = y + (int64_t(n) * outChannels + m) * outPlane;
        std::fill(outputPlane, outputPlane + outPlane, 0.0f);
        for (int ci = 0; ci < perGroup; ++ci) {
          const float *plane =
              x + (int64_t(n) * channels + m / outPerGroup * perGroup + ci) * inPlane;
          const float *filter = w + (int64_t(m) * perGroup + ci) * taps;
          for (int a = 0; a < k[0]; ++a)
            for (int b = 0; b < k[1]; ++b)
              for (int e = 0; e < k[2]; ++e) {
                const float weight = filter[(a * k[1] + b) * k[2] + e];
                const int shift = e * dilation[2] - pad[2];
                const int first = shift >= 0 ? 0 : (-shift + stride[2] - 1) / stride[2];
                const int end = std::min(
                    out[2], in[2] - shift <= 0 ? 0 : (in[2] - shift + stride[2] - 1) / stride[2]);
                for (int z = 0; z < out[0]; ++z) {
                  const int iz = z * stride[0] - pad[0] + a * dilation[0];
                  if (iz < 0 || iz >= in[0])
                    continue;
                  for (int r = 0; r < out[1]; ++r) {
                    const int ir = r * stride[1] - pad[1] + b * dilation[1];
                    if (ir < 0 || ir >= in[1])
                      continue;
                    const float *row = plane + (int64_t(iz) * in[1] + ir) * in[2];
                    float *outRow = outputPlane + (int64_t(z) * out[1] + r) * out[2];
                    for (int c = first; c < end; ++c)
                      outRow[c] += weight * row[int64_t(c) * stride[2] + shift];
                  }
                }
              }
        }
      }
  });
  return nullptr;
#else
  const float one = 1.0f, zero = 0.0f;
  return check(cudnnConvolutionForward(context->dnn, &one, plan->x, x, plan->w, w, plan->conv,
                                       plan->algorithm, workspace, plan->workspaceBytes, &zero,
                                       plan->y, y),
               "cudnnConvolutionForward");
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

void clearLaunchError() {
#ifndef DLC_CUDA_EMULATE
  cudaGetLastError();
#endif
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

#ifdef DLC_CUDA_EMULATE
struct KernelLibrary {};

const char *compileKernels(const KernelSource &, int, int, std::string *) {
  return failure("compileKernels", "NVRTC is not part of the emulation");
}

const char *fatBinaryLacksDevice(dlc_cuda_context *, const void *, bool *lacks) {
  *lacks = false;
  return nullptr;
}

const char *loadKernels(dlc_cuda_context *, const KernelSource &, KernelLibrary **library) {
  *library = nullptr;
  return nullptr;
}

void unloadKernels(KernelLibrary *) {}

void launchLoaded(dlc_cuda_context *, const KernelLibrary *, int, unsigned, unsigned, void **) {}
#else
struct KernelLibrary {
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
};

const char *compileKernels(const KernelSource &source, int major, int minor, std::string *image) {
  int count = 0;
  if (const char *error = check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs"))
    return error;
  std::vector<int> archs(count);
  if (const char *error = check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs"))
    return error;
  // Machine code for the device, or, for a device newer than this NVRTC, PTX of the newest
  // architecture it knows (which the driver compiles for the device).
  const int device = major * 10 + minor;
  const bool known = std::find(archs.begin(), archs.end(), device) != archs.end();
  int target = device;
  if (!known) {
    target = 0;
    for (int arch : archs)
      target = arch <= device ? std::max(target, arch) : target;
    if (!target)
      return failure("compileKernels", "NVRTC knows no architecture this GPU runs");
  }
  const std::string arch =
      (known ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") + std::to_string(target);
  nvrtcProgram program = nullptr;
  if (const char *error =
          check(nvrtcCreateProgram(&program, source.source, "dlc_kernels.cu", source.headerCount,
                                   source.headers, source.headerNames),
                "nvrtcCreateProgram"))
    return error;
  const char *options[] = {arch.c_str(), "-std=c++17"};
  const char *error = nullptr;
  if (nvrtcCompileProgram(program, 2, options) != NVRTC_SUCCESS) {
    // The log's first error says what went wrong (a kernel NVRTC cannot compile is a bug).
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, &log[0]);
    size_t start = log.find("error");
    start = start == std::string::npos ? 0 : log.rfind('\n', start) + 1;
    error =
        failure("nvrtcCompileProgram", log.substr(start, log.find('\n', start) - start).c_str());
  } else {
    size_t size = 0;
    error = known ? check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize")
                  : check(nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
    image->assign(size, '\0');
    if (!error)
      error = known ? check(nvrtcGetCUBIN(program, &(*image)[0]), "nvrtcGetCUBIN")
                    : check(nvrtcGetPTX(program, &(*image)[0]), "nvrtcGetPTX");
  }
  nvrtcDestroyProgram(&program);
  return error;
}

const char *fatBinaryLacksDevice(dlc_cuda_context *context, const void *kernel, bool *lacks) {
  *lacks = false;
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  cudaFuncAttributes attributes;
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  // No image for the device, or PTX this driver cannot JIT (too new, no JIT compiler, JIT
  // disabled): a cubin from NVRTC still runs.
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction ||
      status == cudaErrorUnsupportedPtxVersion || status == cudaErrorJitCompilerNotFound ||
      status == cudaErrorJitCompilationDisabled) {
    cudaGetLastError(); // expected: not an error for the next launch to report
    *lacks = true;
    return nullptr;
  }
  return check(status, "cudaFuncGetAttributes");
}

void unloadKernels(KernelLibrary *library) {
  if (library && library->library)
    cudaLibraryUnload(library->library);
  delete library;
}

const char *loadKernels(dlc_cuda_context *context, const KernelSource &source,
                        KernelLibrary **library) {
  *library = nullptr;
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  int major = 0, minor = 0;
  std::string image;
  const char *error =
      check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, context->device),
            "cudaDeviceGetAttribute");
  if (!error)
    error =
        check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, context->device),
              "cudaDeviceGetAttribute");
  if (!error)
    error = compileKernels(source, major, minor, &image);
  if (error)
    return error;
  auto *loaded = new (std::nothrow) KernelLibrary;
  if (!loaded)
    return failure("loadKernels", "out of host memory");
  error = check(
      cudaLibraryLoadData(&loaded->library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
      "cudaLibraryLoadData");
  loaded->kernels.resize(source.kernelCount);
  for (int k = 0; k < source.kernelCount && !error; ++k)
    error = check(cudaLibraryGetKernel(&loaded->kernels[k], loaded->library,
                                       ("kernel" + std::to_string(k)).c_str()),
                  "cudaLibraryGetKernel");
  if (error) {
    unloadKernels(loaded);
    return error;
  }
  *library = loaded;
  return nullptr;
}

void launchLoaded(dlc_cuda_context *context, const KernelLibrary *library, int index,
                  unsigned blocks, unsigned threads, void **args) {
  cudaLaunchKernel(reinterpret_cast<const void *>(library->kernels[index]), dim3(blocks),
                   dim3(threads), args, 0, context->stream);
}
#endif

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
