// GPU latency of a model generated with --target cuda (built with -DDLC_MODEL=NAME -include
// NAME.h by nvcc; see scripts/gpu_check.sh): run() on device buffers, each run followed by a
// synchronize (latency) and many runs queued before one (throughput per run), without and
// with CUDA graphs. Prints one line of JSON for each. Usage: cuda_latency INPUT.npy [RUNS]
#include "dlc_npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)
#define DLC_STRING2(a) #a
#define DLC_STRING(a) DLC_STRING2(a)

int main(int argc, char **argv) {
  const dlc_model_info *info = DLC_MODEL_FN(_info)();
  if (argc < 2 || info->num_inputs != 1 || info->num_outputs != 1)
    return 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 500;
  dlc::npy::Array input;
  std::string error;
  if (!dlc::npy::load(argv[1], input, &error))
    return 1;
  dlc_cuda_context *context = nullptr;
  if (dlc_cuda_context_create(0, &context) != DLC_OK) {
    std::fprintf(stderr, "%s\n", dlc_cuda_last_error());
    return 1;
  }
  void *deviceInput = nullptr, *deviceOutput = nullptr;
  if (dlc::cuda::allocate(context, info->inputs[0].bytes, &deviceInput) ||
      dlc::cuda::allocate(context, info->outputs[0].bytes, &deviceOutput) ||
      dlc::cuda::copyToDevice(context, deviceInput, input.data.data(), input.data.size()))
    return 1;
  const void *inputs[] = {deviceInput};
  void *outputs[] = {deviceOutput};
  using Clock = std::chrono::steady_clock;
  auto microseconds = [](Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  // Each schedule launched kernel by kernel, then replayed as one CUDA graph.
  for (int graph = 0; graph < 2; ++graph) {
    dlc_cuda_options options = {0, context, graph};
    DLC_JOIN(DLC_MODEL, _model) *model = nullptr;
    if (DLC_MODEL_FN(_create)(&options, &model) != DLC_OK)
      return 1;
    for (int i = 0; i < 20; ++i)
      DLC_MODEL_FN(_run)(model, inputs, outputs);
    DLC_MODEL_FN(_synchronize)(model);
    std::vector<double> latencies;
    for (int i = 0; i < runs; ++i) {
      Clock::time_point start = Clock::now();
      if (DLC_MODEL_FN(_run)(model, inputs, outputs) != DLC_OK ||
          DLC_MODEL_FN(_synchronize)(model) != DLC_OK) {
        std::fprintf(stderr, "%s\n", DLC_MODEL_FN(_last_error)(model));
        return 1;
      }
      latencies.push_back(microseconds(Clock::now() - start));
    }
    Clock::time_point start = Clock::now();
    for (int i = 0; i < runs; ++i)
      DLC_MODEL_FN(_run)(model, inputs, outputs);
    DLC_MODEL_FN(_synchronize)(model);
    const double queued = microseconds(Clock::now() - start) / runs;
    std::sort(latencies.begin(), latencies.end());
    std::printf("{\"model\": \"%s\", \"cuda_graph\": %d, \"runs\": %d, "
                "\"latency_us_median\": %.2f, \"latency_us_min\": %.2f, "
                "\"queued_us_per_run\": %.2f}\n",
                DLC_STRING(DLC_MODEL), graph, runs, latencies[latencies.size() / 2], latencies[0],
                queued);
    DLC_MODEL_FN(_destroy)(model);
  }
  dlc::cuda::deallocate(context, deviceInput);
  dlc::cuda::deallocate(context, deviceOutput);
  dlc_cuda_context_release(context);
  return 0;
}
