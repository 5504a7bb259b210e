Fragments of model.h.tpl and model.cpp.tpl for models compiled with --train. Each section
runs from its "//@@ KEY" line to the next and replaces @KEY@ in those templates.
//@@ TRAIN_INCLUDE
#include "dlc_state.h"
//@@ TRAIN_MACROS
// Training: @STATE_BYTES@ bytes of state (trained weights, running statistics, optimizer
// moments), allocated at create time and updated in place by @NAME@_train_step. Gradients and
// the activations saved for the backward pass live in the arena, which forward and the train
// step share (@ARENA_BYTES@ bytes: the larger of the two plans).
#define @UPPER_NAME@_STATE_BYTES ((size_t)@STATE_BYTES@u)
#define @UPPER_NAME@_TRAIN_NUM_INPUTS @TRAIN_NUM_INPUTS@
//@@ TRAIN_C_API

// ---- Training (compiled with --train) ----
// The train step's inputs: the graph inputs, then the labels (names, dtypes and shapes).
const dlc_model_info *@NAME@_train_info(void);
// Every state tensor's name, kind, shape and place in the state buffer.
const dlc_state_info *@NAME@_state_info(void);
// One step: forward, loss, backward, optimizer update; writes the loss before the update.
// @NAME@_forward (the same as @NAME@_run) evaluates, in inference mode, with the current
// weights.
dlc_status @NAME@_forward(@NAME@_model *model, const void *const *inputs, void *const *outputs);
dlc_status @NAME@_train_step(@NAME@_model *model, const void *const *inputs, float *loss);
// Like @NAME@_train_step, but first checks each input's dtype and shape.
dlc_status @NAME@_train_step_checked(@NAME@_model *model, const dlc_tensor *inputs,
                                     int num_inputs, float *loss);
void @NAME@_set_learning_rate(@NAME@_model *model, float learning_rate);
float @NAME@_learning_rate(const @NAME@_model *model);
int64_t @NAME@_step_count(const @NAME@_model *model);
// The state buffer, @UPPER_NAME@_STATE_BYTES bytes laid out as @NAME@_state_info says.
const unsigned char *@NAME@_state(const @NAME@_model *model);
// Weights, moments, step count and learning rate to a file and back. Loading refuses
// (DLC_INVALID_STATE, state unchanged) a truncated file or one of another model.
dlc_status @NAME@_save_state(const @NAME@_model *model, const char *path);
dlc_status @NAME@_load_state(@NAME@_model *model, const char *path);
//@@ TRAIN_METHODS

  // Training (compiled with --train); see the C functions above.
  dlc_status forward(const void *const *inputs, void *const *outputs) {
    return run(inputs, outputs);
  }
  dlc_status trainStep(const void *const *inputs, float *loss);
  dlc_status trainStep(@TRAIN_TYPED_PARAMS@, float *loss);
  dlc_status trainStepChecked(const dlc_tensor *inputs, int numInputs, float *loss);
  void setLearningRate(float learningRate) { learningRate_ = learningRate; }
  float learningRate() const { return learningRate_; }
  int64_t stepCount() const { return steps_; }
  const unsigned char *state() const { return state_; }
  dlc_status saveState(const char *path) const;
  dlc_status loadState(const char *path);
//@@ TRAIN_MEMBERS

  unsigned char *state_ = nullptr;
  float learningRate_ = @LEARNING_RATE@;
  int64_t steps_ = 0;
//@@ STATE_PARAM
, unsigned char *state
//@@ STATE_ARG
, state_
//@@ TRAIN_INIT

  if (!state_) {
    state_ = static_cast<unsigned char *>(dlc::rt::alignedAlloc(@UPPER_NAME@_STATE_BYTES));
    if (!state_)
      return DLC_OUT_OF_MEMORY;
    // Weights and running statistics start from the model's values, moments from zero.
    dlc::rt::copyBytes(dlc_weights_@NAME@ + @INITIAL_STATE_OFFSET@, state_, @INITIAL_STATE_BYTES@);
    std::fill(state_ + @INITIAL_STATE_BYTES@, state_ + @UPPER_NAME@_STATE_BYTES, 0);
  }
//@@ TRAIN_DESTROY

  dlc::rt::alignedFree(state_);
//@@ TRAIN_DEFINITIONS

namespace @NAME@ {
namespace {

const int64_t kTrainInputShapes[][@TRAIN_MAX_RANK@] = {@TRAIN_INPUT_SHAPES@};
const dlc_tensor_info kTrainInputs[] = {@TRAIN_INPUT_INFOS@};
const int64_t kLossShape[] = {0};
const dlc_tensor_info kLoss[] = {{"loss", DLC_F32, 0, kLossShape, 4u}};
const dlc_model_info kTrainInfo = {"@NAME@", @ARENA_BYTES@u, @WEIGHT_BYTES@u,
                                   @TRAIN_NUM_INPUTS@, kTrainInputs, 1, kLoss};
@STATE_SHAPES@const dlc_state_entry kStateEntries[] = {
    @STATE_ENTRIES@};
const dlc_state_info kStateInfo = {"@NAME@", @NUM_STATE_ENTRIES@, kStateEntries,
                                   @STATE_BYTES@u};

// Forward, loss, backward and the optimizer's in-place updates; `hyper` is
// [learning rate, 1 on the first step, 1 - beta1^t, 1 - beta2^t]; `step` (from 0) keys the
// dropout masks.
const char *trainSchedule(const unsigned char *weights, unsigned char *arena,
                          const void *const *inputs, void *const *outputs,
                          unsigned char *state, const float *hyper, uint64_t step) {
  (void)weights;
  (void)arena;
  (void)inputs;
  (void)outputs;
  (void)state;
  (void)hyper;
  (void)step;
@TRAIN_SCHEDULE@  return nullptr;
}

} // namespace

dlc_status Model::trainStep(const void *const *inputs, float *loss) {
  lastError_ = nullptr;
  if (!arena_ || !loss)
    return DLC_INVALID_ARGUMENT;
  void *outputs[] = {loss};
  dlc_status status = dlc_check_buffers(&kTrainInfo, inputs, outputs);
  if (status != DLC_OK)
    return status;
  double t = double(steps_ + 1);
  const float hyper[4] = {learningRate_, steps_ == 0 ? 1.0f : 0.0f,
                          float(1.0 - std::pow(double(@BETA1@), t)),
                          float(1.0 - std::pow(double(@BETA2@), t))};
  dlc::rt::ThreadScope threadScope(threads_);
  lastError_ = trainSchedule(dlc_weights_@NAME@, arena_, inputs, outputs, state_, hyper,
                             static_cast<uint64_t>(steps_));
  if (lastError_)
    return DLC_INVALID_INPUT_DATA;
  ++steps_;
  return DLC_OK;
}

dlc_status Model::trainStep(@TRAIN_TYPED_PARAMS@, float *loss) {
  const void *inputs[] = {@TRAIN_TYPED_ARGS@};
  return trainStep(inputs, loss);
}

dlc_status Model::trainStepChecked(const dlc_tensor *inputs, int numInputs, float *loss) {
  lastError_ = nullptr;
  dlc_status status = dlc_check_tensors(kTrainInputs, @TRAIN_NUM_INPUTS@, inputs, numInputs);
  if (status != DLC_OK)
    return status;
  const void *data[@TRAIN_NUM_INPUTS@];
  for (int i = 0; i < @TRAIN_NUM_INPUTS@; ++i)
    data[i] = inputs[i].data;
  return trainStep(data, loss);
}

dlc_status Model::saveState(const char *path) const {
  return state_ ? dlc_state_save(&kStateInfo, state_, steps_, learningRate_, path)
                : DLC_INVALID_ARGUMENT;
}

dlc_status Model::loadState(const char *path) {
  return state_ ? dlc_state_load(&kStateInfo, state_, &steps_, &learningRate_, path)
                : DLC_INVALID_ARGUMENT;
}

} // namespace @NAME@

extern "C" {

const dlc_model_info *@NAME@_train_info(void) { return &@NAME@::kTrainInfo; }

const dlc_state_info *@NAME@_state_info(void) { return &@NAME@::kStateInfo; }

dlc_status @NAME@_forward(@NAME@_model *model, const void *const *inputs, void *const *outputs) {
  return @NAME@_run(model, inputs, outputs);
}

dlc_status @NAME@_train_step(@NAME@_model *model, const void *const *inputs, float *loss) {
  return model ? model->impl.trainStep(inputs, loss) : DLC_INVALID_ARGUMENT;
}

dlc_status @NAME@_train_step_checked(@NAME@_model *model, const dlc_tensor *inputs,
                                     int num_inputs, float *loss) {
  return model ? model->impl.trainStepChecked(inputs, num_inputs, loss) : DLC_INVALID_ARGUMENT;
}

void @NAME@_set_learning_rate(@NAME@_model *model, float learning_rate) {
  if (model)
    model->impl.setLearningRate(learning_rate);
}

float @NAME@_learning_rate(const @NAME@_model *model) {
  return model ? model->impl.learningRate() : 0.0f;
}

int64_t @NAME@_step_count(const @NAME@_model *model) {
  return model ? model->impl.stepCount() : 0;
}

const unsigned char *@NAME@_state(const @NAME@_model *model) {
  return model ? model->impl.state() : nullptr;
}

dlc_status @NAME@_save_state(const @NAME@_model *model, const char *path) {
  return model ? model->impl.saveState(path) : DLC_INVALID_ARGUMENT;
}

dlc_status @NAME@_load_state(@NAME@_model *model, const char *path) {
  return model ? model->impl.loadState(path) : DLC_INVALID_ARGUMENT;
}

} // extern "C"
