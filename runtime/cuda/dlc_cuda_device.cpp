// dlc_cuda_calls.h on the CUDA runtime, cuBLAS, cuDNN and NVRTC.
#include "dlc_cuda_context.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace dlc {
namespace cuda {
namespace {
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
} // namespace

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

const char *createHandles(dlc_cuda_context *context) {
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  const char *error = check(cudaStreamCreateWithFlags(&context->stream, cudaStreamNonBlocking),
                            "cudaStreamCreateWithFlags");
  if (!error)
    error = check(cublasCreate(&context->blas), "cublasCreate");
  if (!error)
    error = check(cublasSetStream(context->blas, context->stream), "cublasSetStream");
  // FP32 products stay FP32: the default math mode never uses TF32 tensor cores.
  if (!error)
    error = check(cublasSetMathMode(context->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return error;
}

void destroyHandles(dlc_cuda_context *context) {
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

const char *allocate(dlc_cuda_context *context, size_t bytes, void **device) {
  *device = nullptr;
  if (bytes == 0)
    return nullptr;
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  return check(cudaMalloc(device, bytes), "cudaMalloc");
}

void deallocate(dlc_cuda_context *context, void *device) {
  if (!device)
    return;
  DeviceScope scope(context);
  cudaFree(device);
}

const char *copy(dlc_cuda_context *context, void *to, const void *from, size_t bytes,
                 Direction direction, const char *call) {
  DeviceScope scope(context);
  if (scope.error())
    return scope.error();
  const cudaMemcpyKind kind = direction == Direction::ToDevice ? cudaMemcpyHostToDevice
                              : direction == Direction::ToHost ? cudaMemcpyDeviceToHost
                                                               : cudaMemcpyDeviceToDevice;
  return check(cudaMemcpyAsync(to, from, bytes, kind, context->stream), call);
}

const char *synchronize(dlc_cuda_context *context) {
  return check(cudaStreamSynchronize(context->stream), "cudaStreamSynchronize");
}

const char *gemm(dlc_cuda_context *context, bool tf32, const CublasGemmShape &shape, float alpha,
                 const float *first, const float *second, float beta, float *c) {
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
}

struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm{};
  size_t workspaceBytes = 0;
};

void destroyConv(ConvPlan *plan) {
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
  delete plan;
}

const char *createConv(dlc_cuda_context *context, const CudnnConvShape &shape, bool tf32,
                       size_t workspaceLimit, ConvPlan **plan, size_t *workspaceBytes) {
  *plan = nullptr;
  *workspaceBytes = 0;
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
}

const char *conv(dlc_cuda_context *context, const ConvPlan *plan, const float *x, const float *w,
                 float *y, void *workspace) {
  const float one = 1.0f, zero = 0.0f;
  return check(cudnnConvolutionForward(context->dnn, &one, plan->x, x, plan->w, w, plan->conv,
                                       plan->algorithm, workspace, plan->workspaceBytes, &zero,
                                       plan->y, y),
               "cudnnConvolutionForward");
}

struct Graph {
  cudaGraphExec_t exec = nullptr;
};

const char *beginCapture(dlc_cuda_context *context) {
  // Thread-local mode: other threads' CUDA calls (other models) do not disturb the capture.
  return check(cudaStreamBeginCapture(context->stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
}

const char *endCapture(dlc_cuda_context *context, Graph **graph) {
  if (graph)
    *graph = nullptr;
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
}

const char *launchGraph(dlc_cuda_context *context, Graph *graph) {
  return check(cudaGraphLaunch(graph->exec, context->stream), "cudaGraphLaunch");
}

void destroyGraph(Graph *graph) {
  if (graph && graph->exec)
    cudaGraphExecDestroy(graph->exec);
  delete graph;
}

void clearLaunchError() { cudaGetLastError(); }

const char *launched(dlc_cuda_context *, const char *kernel) {
  return check(cudaGetLastError(), kernel);
}

void *stream(dlc_cuda_context *context) { return context->stream; }

struct KernelLibrary {
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
};

const char *compileKernels(const KernelSource &source, int major, int minor, std::string *image,
                           std::string *warnings) {
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
  const bool compiled = nvrtcCompileProgram(program, 2, options) == NVRTC_SUCCESS;
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  nvrtcGetProgramLog(program, &log[0]);
  log.resize(std::strlen(log.c_str()));
  if (!compiled) {
    // The log's first error says what went wrong (a kernel NVRTC cannot compile is a bug).
    size_t start = log.find("error");
    start = start == std::string::npos ? 0 : log.rfind('\n', start) + 1;
    error =
        failure("nvrtcCompileProgram", log.substr(start, log.find('\n', start) - start).c_str());
  } else {
    if (warnings)
      *warnings = log;
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
} // namespace cuda
} // namespace dlc
