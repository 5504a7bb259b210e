// dlc_cuda_calls.h on the host, for machines without a GPU (built with -DDLC_CUDA_EMULATE):
// "device" memory is host memory, kernels run as loops over their grid, cuBLAS and cuDNN are
// replaced by plain loops computing their definitions, and a captured graph is the list of the
// calls it recorded.
#include "dlc_cuda_context.h"
#include "dlc_cuda_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace dlc {
namespace cuda {
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

namespace {
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
} // namespace
} // namespace emulate

const char *createHandles(dlc_cuda_context *) { return nullptr; }
void destroyHandles(dlc_cuda_context *) {}

DeviceScope::DeviceScope(const dlc_cuda_context *) {}
DeviceScope::~DeviceScope() {}

const char *allocate(dlc_cuda_context *, size_t bytes, void **device) {
  *device = nullptr;
  if (bytes == 0)
    return nullptr;
  *device = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *device ? nullptr : failure("cudaMalloc", "out of memory");
}

void deallocate(dlc_cuda_context *, void *device) { std::free(device); }

const char *copy(dlc_cuda_context *, void *to, const void *from, size_t bytes, Direction,
                 const char *) {
  if (bytes)
    emulate::runOrRecord([=] { std::memmove(to, from, bytes); });
  return nullptr;
}

const char *synchronize(dlc_cuda_context *) { return nullptr; }

const char *gemm(dlc_cuda_context *, bool, const CublasGemmShape &shape, float alpha,
                 const float *first, const float *second, float beta, float *c) {
  emulate::runOrRecord([=] { emulate::columnMajorGemm(shape, alpha, first, second, beta, c); });
  return nullptr;
}

struct ConvPlan {
  CudnnConvShape shape;
};

void destroyConv(ConvPlan *plan) { delete plan; }

const char *createConv(dlc_cuda_context *, const CudnnConvShape &shape, bool, size_t,
                       ConvPlan **plan, size_t *workspaceBytes) {
  *workspaceBytes = 0;
  *plan = new (std::nothrow) ConvPlan{shape};
  return *plan ? nullptr : failure("cudnnCreate", "out of memory");
}

const char *conv(dlc_cuda_context *, const ConvPlan *plan, const float *x, const float *w,
                 float *y, void *) {
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
}

struct Graph {
  std::vector<std::function<void()>> calls;
};

const char *beginCapture(dlc_cuda_context *) {
  if (emulate::recording)
    return failure("cudaStreamBeginCapture", "already capturing");
  emulate::recording = new (std::nothrow) std::vector<std::function<void()>>;
  return emulate::recording ? nullptr : failure("cudaStreamBeginCapture", "out of memory");
}

const char *endCapture(dlc_cuda_context *, Graph **graph) {
  if (graph)
    *graph = nullptr;
  std::vector<std::function<void()>> *calls = emulate::recording;
  emulate::recording = nullptr;
  if (!calls)
    return failure("cudaStreamEndCapture", "not capturing");
  if (graph)
    *graph = new (std::nothrow) Graph{std::move(*calls)};
  delete calls;
  return graph && !*graph ? failure("cudaGraphInstantiate", "out of memory") : nullptr;
}

const char *launchGraph(dlc_cuda_context *, Graph *graph) {
  for (const auto &call : graph->calls)
    call();
  return nullptr;
}

void destroyGraph(Graph *graph) { delete graph; }

void clearLaunchError() {}

const char *launched(dlc_cuda_context *, const char *) { return nullptr; }

void *stream(dlc_cuda_context *) { return nullptr; }

// Kernels run from the model's own code: there is nothing to compile or load.
struct KernelLibrary {};

const char *compileKernels(const KernelSource &, int, int, std::string *, std::string *) {
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

} // namespace cuda
} // namespace dlc
