// Times one training step of a model compiled with `dlc compile --train --name bench_model`
// (bench/train.py builds it): random inputs, labels in [0, classes), `warmup` untimed steps,
// then prints each timed step's milliseconds on one line.
//   usage: train_bench STEPS WARMUP CLASSES
#include "bench_model.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  int steps = std::atoi(argv[1]), warmup = std::atoi(argv[2]);
  int64_t classes = std::atoll(argv[3]);
  const dlc_model_info *info = bench_model_train_info();
  std::mt19937 rng(0);
  std::vector<std::vector<unsigned char>> buffers(info->num_inputs);
  std::vector<const void *> inputs(info->num_inputs);
  for (int i = 0; i < info->num_inputs; ++i) {
    const dlc_tensor_info &t = info->inputs[i];
    buffers[i].resize(t.bytes);
    if (t.dtype == DLC_I64) {
      auto *labels = reinterpret_cast<int64_t *>(buffers[i].data());
      for (size_t j = 0; j < t.bytes / 8; ++j)
        labels[j] = static_cast<int64_t>(rng() % classes);
    } else {
      auto *values = reinterpret_cast<float *>(buffers[i].data());
      std::normal_distribution<float> normal;
      for (size_t j = 0; j < t.bytes / 4; ++j)
        values[j] = normal(rng);
    }
    inputs[i] = buffers[i].data();
  }
  bench_model_model *model = nullptr;
  if (bench_model_create(nullptr, &model) != DLC_OK)
    return 1;
  float loss = 0;
  for (int s = 0; s < warmup + steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    if (bench_model_train_step(model, inputs.data(), &loss) != DLC_OK)
      return 1;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          start).count();
    if (s >= warmup)
      std::printf("%.4f ", ms);
  }
  std::printf("\nloss %g\n", loss);
  bench_model_destroy(model);
  return 0;
}
