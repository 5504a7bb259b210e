// The whole user path in a page: a model compiled by dlc into libdigits.a + digits.h, linked
// into a plain C++ program. Classifies the bundled 8x8 digit samples and prints the accuracy.
//   usage: digits_demo samples.npy labels.npy
// Built with -DDIGITS_CUDA against a library from `dlc compile --target cuda` (linked with
// cudart, cublas, cudnn and nvrtc), the same program runs the model on the GPU.
#include "digits.h"
#include "dlc_npy.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s samples.npy labels.npy\n", argv[0]);
    return 2;
  }
  dlc::npy::Array samples, labels;
  std::string error;
  if (!dlc::npy::load(argv[1], samples, &error) || !dlc::npy::load(argv[2], labels, &error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  constexpr int kBatch = digits::k_image_shape[0], kClasses = digits::k_logits_shape[1];
  if (samples.dtype != DLC_F32 || samples.data.size() != sizeof(float) * kBatch * 64 ||
      labels.dtype != DLC_I64 || labels.data.size() != sizeof(int64_t) * kBatch) {
    std::fprintf(stderr, "error: expected %d float32 8x8 images and %d int64 labels\n", kBatch,
                 kBatch);
    return 1;
  }
  std::vector<float> logits(kBatch * kClasses);
  digits::Model model;
#ifdef DIGITS_CUDA
  // On GPU 0, with a CUDA context of the model's own; runHost copies in, runs and copies back.
  dlc_cuda_options options = {0, nullptr, 0};
  if (dlc_status status = model.init(options); status != DLC_OK) {
    std::fprintf(stderr, "error: cannot create the model: %s (%s)\n", dlc_status_message(status),
                 model.lastError());
    return 1;
  }
  const void *inputs[] = {samples.data.data()};
  void *outputs[] = {logits.data()};
  dlc_status status = model.runHost(inputs, outputs);
#else
  if (model.init() != DLC_OK) {
    std::fprintf(stderr, "error: cannot create the model\n");
    return 1;
  }
  dlc_status status =
      model.run(reinterpret_cast<const float *>(samples.data.data()), logits.data());
#endif
  if (status != DLC_OK) {
    std::fprintf(stderr, "error: %s\n", dlc_status_message(status));
    return 1;
  }
  const int64_t *truth = reinterpret_cast<const int64_t *>(labels.data.data());
  int correct = 0;
  std::printf("sample  predicted  label\n");
  for (int i = 0; i < kBatch; ++i) {
    int best = 0;
    for (int c = 1; c < kClasses; ++c)
      if (logits[i * kClasses + c] > logits[i * kClasses + best])
        best = c;
    correct += best == truth[i];
    std::printf("%6d  %9d  %5lld\n", i, best, static_cast<long long>(truth[i]));
  }
  std::printf("accuracy: %d/%d = %.1f%%\n", correct, kBatch, 100.0 * correct / kBatch);
  return 0;
}
