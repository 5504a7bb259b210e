// The device-choosing API of a --target cpu,cuda library (NAME_any.h), on a model of one
// float32 input and output: the CPU and the CUDA model give the same outputs through
// run_host, run() takes buffers of the chosen device, and bad options are refused. Built
// with -DDLC_MODEL=NAME and -include NAME_any.h, by nvcc or emulated (-DDLC_CUDA_EMULATE).
// Usage: cuda_any_check INPUT.npy
#include "dlc_cuda_calls.h" // device buffers, also in emulation
#include "dlc_npy.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)
using AnyModel = DLC_JOIN(DLC_MODEL, _any_model);

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

std::vector<float> runHost(AnyModel *model, const void *input) {
  std::vector<float> output(DLC_MODEL_FN(_any_info)()->outputs[0].bytes / sizeof(float));
  const void *inputs[] = {input};
  void *outputs[] = {output.data()};
  expect(DLC_MODEL_FN(_any_run_host)(model, inputs, outputs) == DLC_OK,
         std::string("run_host: ") + DLC_MODEL_FN(_any_last_error)(model));
  return output;
}

} // namespace

int main(int argc, char **argv) {
  const dlc_model_info *info = DLC_MODEL_FN(_any_info)();
  dlc::npy::Array input;
  std::string error;
  if (argc != 2 || info->num_inputs != 1 || info->num_outputs != 1 ||
      !dlc::npy::load(argv[1], input, &error) || input.data.size() != info->inputs[0].bytes) {
    std::fprintf(stderr, "usage: %s INPUT.npy (%s)\n", argv[0], error.c_str());
    return 2;
  }
  AnyModel *model = nullptr;
  dlc_device_options bad = {static_cast<dlc_device_kind>(7), 0, {0, nullptr, 0}};
  expect(DLC_MODEL_FN(_any_create)(&bad, &model) == DLC_INVALID_ARGUMENT && !model,
         "an unknown device kind is refused");
  expect(DLC_MODEL_FN(_any_create)(nullptr, &model) == DLC_INVALID_ARGUMENT && !model,
         "create without options is refused");

  dlc_device_options cpuOptions = {DLC_DEVICE_CPU, 1, {0, nullptr, 0}};
  dlc_device_options cudaOptions = {DLC_DEVICE_CUDA, 0, {0, nullptr, 0}};
  AnyModel *cpu = nullptr, *gpu = nullptr;
  expect(DLC_MODEL_FN(_any_create)(&cpuOptions, &cpu) == DLC_OK &&
             DLC_MODEL_FN(_any_device)(cpu) == DLC_DEVICE_CPU,
         "create on the CPU");
  expect(DLC_MODEL_FN(_any_create)(&cudaOptions, &gpu) == DLC_OK &&
             DLC_MODEL_FN(_any_device)(gpu) == DLC_DEVICE_CUDA,
         std::string("create on CUDA device 0: ") + dlc_cuda_last_error());
  if (!cpu || !gpu)
    return 1;
  const std::vector<float> onCpu = runHost(cpu, input.data.data());
  const std::vector<float> onGpu = runHost(gpu, input.data.data());
  bool same = onCpu.size() == onGpu.size();
  for (size_t i = 0; same && i < onCpu.size(); ++i)
    same = std::fabs(onCpu[i] - onGpu[i]) <= 1e-4f * (1.0f + std::fabs(onCpu[i]));
  expect(same, "the CPU and the CUDA model give the same outputs");

  // run() on the CPU takes host buffers; on CUDA, buffers of the model's device.
  std::vector<float> direct(onCpu.size());
  const void *hostInputs[] = {input.data.data()};
  void *hostOutputs[] = {direct.data()};
  expect(DLC_MODEL_FN(_any_run)(cpu, hostInputs, hostOutputs) == DLC_OK &&
             DLC_MODEL_FN(_any_synchronize)(cpu) == DLC_OK && direct == onCpu,
         "run on the CPU with host buffers");
  dlc_cuda_context *context = nullptr;
  void *deviceInput = nullptr, *deviceOutput = nullptr;
  expect(
      dlc_cuda_context_create(0, &context) == DLC_OK &&
          !dlc::cuda::allocate(context, info->inputs[0].bytes, &deviceInput) &&
          !dlc::cuda::allocate(context, info->outputs[0].bytes, &deviceOutput) &&
          !dlc::cuda::copyToDevice(context, deviceInput, input.data.data(), info->inputs[0].bytes),
      "device buffers");
  const void *deviceInputs[] = {deviceInput};
  void *deviceOutputs[] = {deviceOutput};
  std::vector<float> fromDevice(onGpu.size());
  expect(DLC_MODEL_FN(_any_run)(gpu, deviceInputs, deviceOutputs) == DLC_OK &&
             DLC_MODEL_FN(_any_synchronize)(gpu) == DLC_OK &&
             !dlc::cuda::copyToHost(context, fromDevice.data(), deviceOutput,
                                    info->outputs[0].bytes) &&
             !dlc::cuda::synchronize(context) && fromDevice == onGpu,
         "run on CUDA with device buffers");
  dlc::cuda::deallocate(context, deviceInput);
  dlc::cuda::deallocate(context, deviceOutput);
  dlc_cuda_context_release(context);
  DLC_MODEL_FN(_any_destroy)(cpu);
  DLC_MODEL_FN(_any_destroy)(gpu);
  DLC_MODEL_FN(_any_destroy)(nullptr);
  std::printf("%s\n", failures ? "any-device API: FAILED" : "any-device API: OK");
  return failures ? 1 : 0;
}
