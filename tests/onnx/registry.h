// The models linked into the ONNX node-test harness (registry.cpp is generated).
#ifndef DLC_TESTS_ONNX_REGISTRY_H
#define DLC_TESTS_ONNX_REGISTRY_H

#include "dlc_runtime.h"

#include <vector>

struct RegisteredModel {
  const char *name;
  const dlc_model_info *(*info)();
  dlc_status (*create)(void **model);
  dlc_status (*run)(void *model, const dlc_tensor *inputs, int numInputs,
                    const dlc_tensor *outputs, int numOutputs);
  void (*destroy)(void *model);
};

const std::vector<RegisteredModel> &registeredModels();

#endif
