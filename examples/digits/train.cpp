// Training with no framework: the digits CNN compiled by `dlc compile --train` into
// libdigits_train.a, trained here from its fresh initialization with Adam, then evaluated.
//   usage: digits_train train_images.npy train_labels.npy test_images.npy test_labels.npy
//          EPOCHS [STATE_FILE]
// Prints each epoch's mean loss and the test accuracy; saves the trained state if asked
// (`dlc export-weights STATE_FILE digits_train.onnx -o trained.onnx` makes it a model again).
#include "digits_train.h"
#include "dlc_npy.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = digits_train::k_image_shape[0];
constexpr int kClasses = digits_train::k_logits_shape[1];
constexpr int kPixels = 64;

bool loadPair(const char *imagesPath, const char *labelsPath, dlc::npy::Array &images,
              dlc::npy::Array &labels, int &batches) {
  std::string error;
  if (!dlc::npy::load(imagesPath, images, &error) || !dlc::npy::load(labelsPath, labels, &error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return false;
  }
  size_t count = labels.data.size() / sizeof(int64_t);
  if (images.dtype != DLC_F32 || labels.dtype != DLC_I64 || count % kBatch ||
      images.data.size() != count * kPixels * sizeof(float)) {
    std::fprintf(stderr, "error: expected float32 8x8 images and int64 labels, a multiple of %d\n",
                 kBatch);
    return false;
  }
  batches = static_cast<int>(count / kBatch);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: %s train_images.npy train_labels.npy test_images.npy "
                         "test_labels.npy EPOCHS [STATE_FILE]\n", argv[0]);
    return 2;
  }
  dlc::npy::Array trainX, trainY, testX, testY;
  int trainBatches, testBatches;
  if (!loadPair(argv[1], argv[2], trainX, trainY, trainBatches) ||
      !loadPair(argv[3], argv[4], testX, testY, testBatches))
    return 1;
  int epochs = std::atoi(argv[5]);
  digits_train::Model model;
  if (model.init() != DLC_OK) {
    std::fprintf(stderr, "error: cannot create the model\n");
    return 1;
  }
  const float *images = reinterpret_cast<const float *>(trainX.data.data());
  const int64_t *labels = reinterpret_cast<const int64_t *>(trainY.data.data());
  for (int epoch = 0; epoch < epochs; ++epoch) {
    double total = 0;
    for (int b = 0; b < trainBatches; ++b) {
      float loss = 0;
      dlc_status status = model.trainStep(images + b * kBatch * kPixels, labels + b * kBatch, &loss);
      if (status != DLC_OK) {
        std::fprintf(stderr, "error: %s %s\n", dlc_status_message(status), model.lastError());
        return 1;
      }
      total += loss;
    }
    std::printf("epoch %2d  loss %.4f\n", epoch + 1, total / trainBatches);
  }
  // Evaluation: forward() uses the trained weights and the running statistics.
  const float *tests = reinterpret_cast<const float *>(testX.data.data());
  const int64_t *truth = reinterpret_cast<const int64_t *>(testY.data.data());
  std::vector<float> logits(kBatch * kClasses);
  int correct = 0;
  for (int b = 0; b < testBatches; ++b) {
    if (model.run(tests + b * kBatch * kPixels, logits.data()) != DLC_OK)
      return 1;
    for (int i = 0; i < kBatch; ++i) {
      int best = 0;
      for (int c = 1; c < kClasses; ++c)
        if (logits[i * kClasses + c] > logits[i * kClasses + best])
          best = c;
      correct += best == truth[b * kBatch + i];
    }
  }
  int total = testBatches * kBatch;
  std::printf("test accuracy: %d/%d = %.2f%%\n", correct, total, 100.0 * correct / total);
  if (argc == 7 && model.saveState(argv[6]) != DLC_OK) {
    std::fprintf(stderr, "error: cannot save the state to %s\n", argv[6]);
    return 1;
  }
  return 0;
}
