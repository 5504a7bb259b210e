// Turns an imported inference module into a training module (docs/architecture.md,
// "Training"): weights become state arguments and a @train_step function computes the loss.
#ifndef DLC_COMPILER_TRAINING_H
#define DLC_COMPILER_TRAINING_H

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace dlc {

struct TrainOptions {
  bool enabled = false;
  std::string loss;       // mse | cross_entropy | bce_with_logits | l1 | none
  std::string lossOutput; // graph output the loss is computed on ("": the only one)
  std::string optimizer = "sgd"; // sgd | adam | adamw
  float learningRate = -1;       // < 0: the optimizer's default
  float momentum = 0, weightDecay = 0, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  bool nesterov = false;
  // Initializer names or name prefixes: only these are trained / these are not.
  std::vector<std::string> trainable, freeze;

  // Parses "sgd:lr=0.05,momentum=0.9" into the optimizer fields; false with `error` set.
  bool parseOptimizer(const std::string &spec, std::string &error);
  float defaultedLearningRate() const;
};

// Makes @forward read its weights (and batch-norm running statistics) from state
// arguments, and adds @train_step(inputs..., labels, state...) -> loss. Reports errors as
// diagnostics (on the node where there is one) and returns false.
bool buildTrainStep(mlir::ModuleOp module, const TrainOptions &options);

// Inference builds: batch norms exported in training mode (ONNX training_mode=1) normalize
// with the batch's statistics, as ONNX defines; dropouts pass their input through.
void lowerTrainingModeOps(mlir::ModuleOp module);

} // namespace dlc

#endif
