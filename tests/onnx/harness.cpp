// Runs every model registered by run_node_tests.py on its test inputs:
//   harness WORK_DIR  reads WORK_DIR/<model>/data/input_<i>.npy and writes
//   WORK_DIR/<model>/out/output_<i>.npy; the script compares them with the references.
// One binary serves all models so the suite builds the runtime and links once.
#include "dlc_npy.h"
#include "registry.h"

#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

bool runModel(const RegisteredModel &m, const std::string &dir, std::string &error) {
  const dlc_model_info *info = m.info();
  std::vector<dlc::npy::Array> arrays(info->num_inputs);
  std::vector<dlc_tensor> inputs(info->num_inputs), outputs(info->num_outputs);
  std::vector<std::vector<unsigned char>> outData(info->num_outputs);
  for (int i = 0; i < info->num_inputs; ++i) {
    std::string path = dir + "/data/input_" + std::to_string(i) + ".npy";
    if (!dlc::npy::load(path.c_str(), arrays[i], &error))
      return false;
    dlc::npy::adoptStoredType(arrays[i], info->inputs[i].dtype);
    inputs[i] = {arrays[i].dtype, (int)arrays[i].shape.size(), arrays[i].shape.data(),
                 arrays[i].data.data()};
  }
  for (int i = 0; i < info->num_outputs; ++i) {
    outData[i].resize(info->outputs[i].bytes + 1);
    outputs[i] = {info->outputs[i].dtype, info->outputs[i].rank, info->outputs[i].shape,
                  outData[i].data()};
  }
  void *model = nullptr;
  dlc_status status = m.create(&model);
  if (status == DLC_OK)
    status = m.run(model, inputs.data(), info->num_inputs, outputs.data(), info->num_outputs);
  m.destroy(model);
  if (status != DLC_OK) {
    error = std::string("run failed: ") + dlc_status_message(status);
    return false;
  }
  mkdir((dir + "/out").c_str(), 0755);
  for (int i = 0; i < info->num_outputs; ++i) {
    std::string path = dir + "/out/output_" + std::to_string(i) + ".npy";
    if (!dlc::npy::save(path.c_str(), info->outputs[i].dtype, info->outputs[i].shape,
                        info->outputs[i].rank, outData[i].data(), &error))
      return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: harness WORK_DIR\n");
    return 2;
  }
  int failures = 0;
  for (const RegisteredModel &m : registeredModels()) {
    std::string error;
    if (!runModel(m, std::string(argv[1]) + "/" + m.name, error)) {
      std::printf("%s: %s\n", m.name, error.c_str());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
