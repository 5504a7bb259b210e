// What generated CUDA kernels are written against: DLC_GLOBAL marks a kernel, DLC_INDEX is
// the calling thread's index in the grid, DLC_LAUNCH(kernel, index, ...) starts kernel number
// `index` on a context's stream (from the library NVRTC built at create time, when the model
// has one: `library` in the schedule), DLC_LAUNCH_BOUNDS(threads) tells nvcc a kernel's block
// size (the compiler chose it, so nvcc can budget registers for it), DLC_FAULT(faults, code)
// records that a thread found bad input data (the first code since the model's last
// synchronize is kept). The elementwise definitions are the CPU kernels' own (scalar_ops.h).
// load4/store4 move four floats as one 16-byte access where a kernel found its pointers
// aligned (aligned16).
// With DLC_CUDA_EMULATE the same source compiles as C++: a kernel is a plain function and a
// launch calls it once per (block, thread), in order, on the host. Under NVRTC
// (__CUDACC_RTC__) only the device side is defined, and kernels are extern "C" so that the
// runtime finds them by name.
#ifndef DLC_CUDA_KERNELS_H
#define DLC_CUDA_KERNELS_H

#ifndef __CUDACC_RTC__
#include "dlc_cuda_calls.h"
#endif
#include "scalar_ops.h"

#ifndef __CUDACC_RTC__
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

#ifdef DLC_CUDA_EMULATE
#include <functional>
#include <vector>

namespace dlc {
namespace cuda {
namespace emulate {
struct GridIndex {
  unsigned x;
};
// Set by launch for the kernel it calls (thread_local: models may run on several threads).
extern thread_local GridIndex blockIdx, threadIdx, blockDim;
// While a graph is being captured on this thread (beginCapture), launches and copies are
// recorded here instead of run; the graph replays them in order.
extern thread_local std::vector<std::function<void()>> *recording;
template <typename... Params, typename... Args>
void run(void (*kernel)(Params...), unsigned blocks, unsigned threads, Args... args) {
  blockDim.x = threads;
  for (unsigned block = 0; block < blocks; ++block)
    for (unsigned thread = 0; thread < threads; ++thread) {
      blockIdx.x = block;
      threadIdx.x = thread;
      kernel(args...);
    }
}
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), unsigned blocks, unsigned threads, Args... args) {
  if (recording)
    recording->push_back([=] { run(kernel, blocks, threads, args...); });
  else
    run(kernel, blocks, threads, args...);
}
} // namespace emulate
} // namespace cuda
} // namespace dlc
#define DLC_GLOBAL static
#define DLC_INDEX                                                                                  \
  (int64_t(::dlc::cuda::emulate::blockIdx.x) * ::dlc::cuda::emulate::blockDim.x +                  \
   ::dlc::cuda::emulate::threadIdx.x)
#define DLC_LAUNCH(kernel, index, blocks, threads, context, ...)                                   \
  ::dlc::cuda::emulate::launch(kernel, blocks, threads, __VA_ARGS__)
#define DLC_FAULT(faults, code)                                                                    \
  do {                                                                                             \
    if (*(faults) == 0)                                                                            \
      *(faults) = (code);                                                                          \
  } while (0)
#define DLC_LAUNCH_BOUNDS(threads)
namespace dlc {
namespace cuda {
inline void load4(const float *from, float *to) { memcpy(to, from, 4 * sizeof(float)); }
inline void store4(const float *from, float *to) { memcpy(to, from, 4 * sizeof(float)); }
} // namespace cuda
} // namespace dlc
#else
#ifdef __CUDACC_RTC__
#define DLC_GLOBAL extern "C" __global__
#else
#include <cuda_runtime.h>
#define DLC_GLOBAL __global__
namespace dlc {
namespace cuda {
template <typename... Params> struct Arguments {
  // The kernel's parameters by value, each converted as a direct call would convert it;
  // launchLoaded reads them through pointers while this call lasts.
  static void launch(dlc_cuda_context *context, const KernelLibrary *library, int index,
                     unsigned blocks, unsigned threads, Params... values) {
    void *pointers[] = {static_cast<void *>(&values)...};
    launchLoaded(context, library, index, blocks, threads, pointers);
  }
};
template <typename... Params, typename... Args>
void launch(dlc_cuda_context *context, const KernelLibrary *library, int index,
            void (*kernel)(Params...), unsigned blocks, unsigned threads, Args... args) {
  if (library)
    Arguments<Params...>::launch(context, library, index, blocks, threads, args...);
  else
    kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream(context))>>>(args...);
}
} // namespace cuda
} // namespace dlc
#define DLC_LAUNCH(kernel, index, blocks, threads, context, ...)                                   \
  ::dlc::cuda::launch(context, library, index, kernel, blocks, threads, __VA_ARGS__)
#endif
#define DLC_INDEX (int64_t(blockIdx.x) * blockDim.x + threadIdx.x)
#define DLC_FAULT(faults, code) atomicCAS((faults), 0, (code))
#define DLC_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
namespace dlc {
namespace cuda {
__device__ inline void load4(const float *from, float *to) {
  const float4 v = *reinterpret_cast<const float4 *>(from);
  to[0] = v.x;
  to[1] = v.y;
  to[2] = v.z;
  to[3] = v.w;
}
__device__ inline void store4(const float *from, float *to) {
  *reinterpret_cast<float4 *>(to) = make_float4(from[0], from[1], from[2], from[3]);
}
} // namespace cuda
} // namespace dlc
#endif

namespace dlc {
namespace cuda {
// Whether every pointer allows 16-byte accesses. Kernels test it at run time: a model's inputs
// and outputs are whatever device pointers its caller passes.
template <typename... Pointers> DLC_HOST_DEVICE inline bool aligned16(const Pointers *...pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers) % 16 == 0) && ...);
}
} // namespace cuda
} // namespace dlc

#endif // DLC_CUDA_KERNELS_H
