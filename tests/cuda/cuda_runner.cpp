// Runs a model generated with --target cuda on .npy inputs through its host entry point
// (NAME_run_host) and writes each output to OUT_DIR/output<i>.npy. With --fault TEXT BAD.npy...
// first, the same model first runs on the bad inputs, which must fail with
// DLC_INVALID_INPUT_DATA and a last error containing TEXT; the good run after it must succeed
// (the fault is reported once). Built per model with
// -DDLC_MODEL=NAME and -include NAME.h, with nvcc for a GPU or as C++ with
// -DDLC_CUDA_EMULATE; the same source either way.
#include "dlc_npy.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)

// Loads the model's inputs from `paths`; false after a message.
static bool loadInputs(const dlc_model_info *info, char **paths,
                       std::vector<dlc::npy::Array> &inputs, std::vector<const void *> &data) {
  inputs.resize(info->num_inputs);
  data.clear();
  for (int i = 0; i < info->num_inputs; ++i) {
    std::string error;
    if (!dlc::npy::load(paths[i], inputs[i], &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return false;
    }
    if (inputs[i].data.size() != info->inputs[i].bytes) {
      std::fprintf(stderr, "%s: %zu bytes, the model's input %s takes %zu\n", paths[i],
                   inputs[i].data.size(), info->inputs[i].name, info->inputs[i].bytes);
      return false;
    }
    data.push_back(inputs[i].data.data());
  }
  return true;
}

int main(int argc, char **argv) {
  const dlc_model_info *info = DLC_MODEL_FN(_info)();
  const char *program = argv[0], *faultText = nullptr;
  char **badPaths = nullptr;
  if (argc > 2 + info->num_inputs && std::string(argv[1]) == "--fault") {
    faultText = argv[2];
    badPaths = argv + 3;
    argc -= 2 + info->num_inputs;
    argv += 2 + info->num_inputs;
  }
  if (argc != 2 + info->num_inputs) {
    std::fprintf(stderr, "usage: %s [--fault TEXT BAD.npy x %d] OUT_DIR INPUT.npy x %d\n",
                 program, info->num_inputs, info->num_inputs);
    return 2;
  }
  std::vector<dlc::npy::Array> inputs, badInputs;
  std::vector<const void *> inputData, badData;
  if (!loadInputs(info, argv + 2, inputs, inputData) ||
      (faultText && !loadInputs(info, badPaths, badInputs, badData)))
    return 1;
  std::vector<std::vector<unsigned char>> outputs(info->num_outputs);
  std::vector<void *> outputData;
  for (int i = 0; i < info->num_outputs; ++i) {
    outputs[i].resize(info->outputs[i].bytes);
    outputData.push_back(outputs[i].data());
  }
  dlc_cuda_options options = {0, nullptr, 0};
  DLC_JOIN(DLC_MODEL, _model) *model = nullptr;
  dlc_status status = DLC_MODEL_FN(_create)(&options, &model);
  if (status != DLC_OK) {
    std::fprintf(stderr, "create: %s (%s)\n", dlc_status_message(status), dlc_cuda_last_error());
    return 1;
  }
  if (faultText) {
    status = DLC_MODEL_FN(_run_host)(model, badData.data(), outputData.data());
    const char *error = DLC_MODEL_FN(_last_error)(model);
    if (status != DLC_INVALID_INPUT_DATA || !std::strstr(error, faultText)) {
      std::fprintf(stderr, "run on bad inputs: %s (%s), expected %s (%s)\n",
                   dlc_status_message(status), error,
                   dlc_status_message(DLC_INVALID_INPUT_DATA), faultText);
      DLC_MODEL_FN(_destroy)(model);
      return 1;
    }
    std::printf("bad inputs refused: %s\n", error);
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
