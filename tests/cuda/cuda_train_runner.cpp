// Runs a training step generated with --train --target cuda: STEPS steps on one batch through
// NAME_train_step_host, then writes OUT_DIR/loss.npy (each step's loss, before its update) and
// OUT_DIR/<weight name>.npy for every trained weight, as `dlc run --train` does for the CPU
// step (test_cuda_train.py compares the two). First, a step on class labels out of range must
// fail and change nothing. It also checks the state's way out and back:
// a second model loading the saved state holds the same bytes and step count and evaluates
// the same outputs, and a truncated state file is refused with the state left as it was.
// Built with -DDLC_MODEL=NAME and -include NAME.h, by nvcc or emulated (-DDLC_CUDA_EMULATE).
// Usage: cuda_train_runner OUT_DIR STEPS TRAIN_INPUT.npy... (graph inputs, then labels)
#include "dlc_npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)
using ModelHandle = DLC_JOIN(DLC_MODEL, _model);

namespace {

bool failed = false;

void expect(bool ok, const std::string &what, ModelHandle *model = nullptr) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (%s)\n", what.c_str(),
                 model ? DLC_MODEL_FN(_last_error)(model) : dlc_cuda_last_error());
    failed = true;
  }
}

bool save(const std::string &dir, std::string name, dlc_dtype dtype, const int64_t *shape, int rank,
          const void *data) {
  for (char &c : name)
    if (c == '/' || c == '\\')
      c = '_';
  std::string path = dir + "/" + name + ".npy", error;
  if (!dlc::npy::save(path.c_str(), dtype, shape, rank, data, &error)) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  return true;
}

std::vector<unsigned char> stateOf(ModelHandle *model) {
  std::vector<unsigned char> state(DLC_MODEL_FN(_state_info)()->state_bytes);
  expect(DLC_MODEL_FN(_state_to_host)(model, state.data()) == DLC_OK, "state_to_host", model);
  return state;
}

// The outputs of one run_host of `model` on the graph inputs, concatenated.
std::vector<unsigned char> forward(ModelHandle *model, const std::vector<const void *> &inputs) {
  const dlc_model_info *info = DLC_MODEL_FN(_info)();
  size_t bytes = 0;
  for (int i = 0; i < info->num_outputs; ++i)
    bytes += info->outputs[i].bytes;
  std::vector<unsigned char> outputs(bytes);
  std::vector<void *> pointers;
  for (int i = 0, at = 0; i < info->num_outputs; at += int(info->outputs[i].bytes), ++i)
    pointers.push_back(outputs.data() + at);
  expect(DLC_MODEL_FN(_run_host)(model, inputs.data(), pointers.data()) == DLC_OK, "run_host",
         model);
  return outputs;
}

} // namespace

int main(int argc, char **argv) {
  const dlc_model_info *train = DLC_MODEL_FN(_train_info)();
  if (argc != 3 + train->num_inputs) {
    std::fprintf(stderr, "usage: %s OUT_DIR STEPS TRAIN_INPUT.npy x %d\n", argv[0],
                 train->num_inputs);
    return 2;
  }
  const std::string out = argv[1];
  const long steps = std::strtol(argv[2], nullptr, 10);
  std::vector<dlc::npy::Array> arrays(train->num_inputs);
  std::vector<const void *> inputs;
  for (int i = 0; i < train->num_inputs; ++i) {
    std::string error;
    if (!dlc::npy::load(argv[3 + i], arrays[i], &error) ||
        arrays[i].data.size() != train->inputs[i].bytes) {
      std::fprintf(stderr, "%s: %s\n", argv[3 + i], error.empty() ? "wrong size" : error.c_str());
      return 1;
    }
    inputs.push_back(arrays[i].data.data());
  }

  dlc_cuda_options options = {0, nullptr, 0};
  ModelHandle *model = nullptr;
  if (DLC_MODEL_FN(_create)(&options, &model) != DLC_OK) {
    std::fprintf(stderr, "create: %s\n", dlc_cuda_last_error());
    return 1;
  }
  float noLoss = 0.0f;
  expect(DLC_MODEL_FN(_train_step_host)(model, inputs.data(), nullptr) == DLC_INVALID_ARGUMENT &&
             DLC_MODEL_FN(_train_step)(nullptr, inputs.data(), &noLoss) == DLC_INVALID_ARGUMENT &&
             DLC_MODEL_FN(_step_count)(model) == 0,
         "refused train steps leave the model untouched");
  // Class labels (int64) out of range: the step fails at its synchronize and leaves the state
  // and the step count as they were.
  const dlc_tensor_info &labels = train->inputs[train->num_inputs - 1];
  if (labels.dtype == DLC_I64 && labels.bytes) {
    const std::vector<unsigned char> before = stateOf(model);
    std::vector<int64_t> bad(labels.bytes / sizeof(int64_t));
    std::memcpy(bad.data(), inputs.back(), labels.bytes);
    bad[0] = int64_t(1) << 40;
    std::vector<const void *> badInputs = inputs;
    badInputs.back() = bad.data();
    float loss = 0.0f;
    expect(DLC_MODEL_FN(_train_step_host)(model, badInputs.data(), &loss) ==
                   DLC_INVALID_INPUT_DATA &&
               std::strstr(DLC_MODEL_FN(_last_error)(model), "out of range") &&
               stateOf(model) == before && DLC_MODEL_FN(_step_count)(model) == 0,
           "a label out of range fails the step and leaves the state unchanged", model);
  }
  std::vector<float> losses(steps > 0 ? steps : 0);
  for (long step = 0; step < steps && !failed; ++step)
    expect(DLC_MODEL_FN(_train_step_host)(model, inputs.data(), &losses[step]) == DLC_OK,
           "train_step_host", model);
  expect(DLC_MODEL_FN(_step_count)(model) == steps, "step count");
  const int64_t count = steps;
  bool ok = !failed && save(out, "loss", DLC_F32, &count, 1, losses.data());
  const dlc_state_info *info = DLC_MODEL_FN(_state_info)();
  const std::vector<unsigned char> state = stateOf(model);
  for (int i = 0; ok && i < info->num_entries; ++i) {
    const dlc_state_entry &e = info->entries[i];
    if (e.kind == DLC_STATE_TRAINED)
      ok = save(out, e.name, e.dtype, e.shape, e.rank, state.data() + e.offset);
  }

  // The saved state, loaded by a second model: the same bytes, step count and outputs.
  const std::string path = out + "/state.bin", truncated = out + "/truncated.bin";
  expect(DLC_MODEL_FN(_save_state)(model, path.c_str()) == DLC_OK, "save_state", model);
  ModelHandle *loaded = nullptr;
  expect(DLC_MODEL_FN(_create)(&options, &loaded) == DLC_OK, "create a second model");
  if (loaded) {
    const std::vector<unsigned char> initial = stateOf(loaded);
    {
      std::ifstream whole(path, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
      std::ofstream(truncated, std::ios::binary).write(bytes.data(), bytes.size() / 2);
    }
    expect(DLC_MODEL_FN(_load_state)(loaded, truncated.c_str()) == DLC_INVALID_STATE &&
               stateOf(loaded) == initial && DLC_MODEL_FN(_step_count)(loaded) == 0,
           "a truncated state file is refused, the state unchanged");
    expect(DLC_MODEL_FN(_load_state)(loaded, path.c_str()) == DLC_OK, "load_state", loaded);
    expect(stateOf(loaded) == state && DLC_MODEL_FN(_step_count)(loaded) == steps,
           "the loaded state is the saved one");
    const std::vector<const void *> graphInputs(inputs.begin(),
                                                inputs.begin() + DLC_MODEL_FN(_info)()->num_inputs);
    expect(forward(loaded, graphInputs) == forward(model, graphInputs),
           "the loaded model evaluates as the trained one");
    DLC_MODEL_FN(_destroy)(loaded);
  }
  DLC_MODEL_FN(_destroy)(model);
  return ok && !failed ? 0 : 1;
}
