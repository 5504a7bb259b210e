// Runs a model generated with --target cuda on .npy inputs through its host entry point
// (NAME_run_host) and writes each output to OUT_DIR/output<i>.npy. Built per model with
// -DDLC_MODEL=NAME and -include NAME.h, with nvcc for a GPU or as C++ with
// -DDLC_CUDA_EMULATE; the same source either way.
#include "dlc_npy.h"

#include <cstdio>
#include <string>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)

int main(int argc, char **argv) {
  const dlc_model_info *info = DLC_MODEL_FN(_info)();
  if (argc != 2 + info->num_inputs) {
    std::fprintf(stderr, "usage: %s OUT_DIR INPUT.npy x %d\n", argv[0], info->num_inputs);
    return 2;
  }
  std::vector<dlc::npy::Array> inputs(info->num_inputs);
  std::vector<const void *> inputData;
  for (int i = 0; i < info->num_inputs; ++i) {
    std::string error;
    if (!dlc::npy::load(argv[2 + i], inputs[i], &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    if (inputs[i].data.size() != info->inputs[i].bytes) {
      std::fprintf(stderr, "%s: %zu bytes, the model's input %s takes %zu\n", argv[2 + i],
                   inputs[i].data.size(), info->inputs[i].name, info->inputs[i].bytes);
      return 1;
    }
    inputData.push_back(inputs[i].data.data());
  }
  std::vector<std::vector<unsigned char>> outputs(info->num_outputs);
  std::vector<void *> outputData;
  for (int i = 0; i < info->num_outputs; ++i) {
    outputs[i].resize(info->outputs[i].bytes);
    outputData.push_back(outputs[i].data());
  }
  dlc_cuda_options options = {0, nullptr};
  DLC_JOIN(DLC_MODEL, _model) *model = nullptr;
  dlc_status status = DLC_MODEL_FN(_create)(&options, &model);
  if (status != DLC_OK) {
    std::fprintf(stderr, "create: %s (%s)\n", dlc_status_message(status), dlc_cuda_last_error());
    return 1;
  }
  status = DLC_MODEL_FN(_run_host)(model, inputData.data(), outputData.data());
  if (status != DLC_OK) {
    std::fprintf(stderr, "run: %s (%s)\n", dlc_status_message(status),
                 DLC_MODEL_FN(_last_error)(model));
    DLC_MODEL_FN(_destroy)(model);
    return 1;
  }
  DLC_MODEL_FN(_destroy)(model);
  for (int i = 0; i < info->num_outputs; ++i) {
    std::string error, path = std::string(argv[1]) + "/output" + std::to_string(i) + ".npy";
    if (!dlc::npy::save(path.c_str(), info->outputs[i].dtype, info->outputs[i].shape,
                        info->outputs[i].rank, outputs[i].data(), &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
  }
  return 0;
}
