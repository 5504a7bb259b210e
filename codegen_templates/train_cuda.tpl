Fragments of model_cuda.h.tpl and model_cuda.cu.tpl for models compiled with --train
--target cuda. Each section runs from its "//@@ KEY" line to the next and replaces @KEY@ in
those templates.
//@@ TRAIN_INCLUDE
#include "dlc_state.h"
//@@ TRAIN_MACROS
// Training: @STATE_BYTES@ bytes of device state (trained weights, running statistics, optimizer
// moments), allocated and initialized at create time and updated in place by
// @NAME@_train_step. Gradients and the activations saved for the backward pass live in the
// device arena, which forward and the train step share (@ARENA_BYTES@ bytes: the larger of
// the two plans).
#define @UPPER_NAME@_STATE_BYTES ((size_t)@STATE_BYTES@u)
#define @UPPER_NAME@_TRAIN_NUM_INPUTS @TRAIN_NUM_INPUTS@
//@@ TRAIN_C_API

// ---- Training (compiled with --train) ----
// The train step's inputs: the graph inputs, then the labels (names, dtypes and shapes).
const dlc_model_info *@NAME@_train_info(void);
// Every state tensor's name, kind, shape and place in the state buffer.
const dlc_state_info *@NAME@_state_info(void);
// One step on device buffers (inputs as @NAME@_train_info lists them, the loss one device
// float written before the update): forward, loss, backward and the optimizer update, queued
// on the model's stream like @NAME@_run; @NAME@_synchronize waits for it, and reports a label
// or index out of range (DLC_INVALID_INPUT_DATA) in a step, whose update then did nothing.
// @NAME@_run evaluates, in inference mode, with the current weights.
dlc_status @NAME@_train_step(@NAME@_model *model, const void *const *inputs, float *loss);
// The same on host buffers: copies the inputs in, steps, copies the loss back and waits.
dlc_status @NAME@_train_step_host(@NAME@_model *model, const void *const *inputs, float *loss);
void @NAME@_set_learning_rate(@NAME@_model *model, float learning_rate);
float @NAME@_learning_rate(const @NAME@_model *model);
int64_t @NAME@_step_count(const @NAME@_model *model);
// Copies the state (@UPPER_NAME@_STATE_BYTES bytes, laid out as @NAME@_state_info says) to
// host memory, after the work queued before it.
dlc_status @NAME@_state_to_host(@NAME@_model *model, unsigned char *state);
// Weights, moments, step count and learning rate to a file and back. Loading refuses
// (DLC_INVALID_STATE, state unchanged) a truncated file or one of another model.
dlc_status @NAME@_save_state(@NAME@_model *model, const char *path);
dlc_status @NAME@_load_state(@NAME@_model *model, const char *path);
//@@ TRAIN_METHODS

  // Training (compiled with --train); see the C functions above.
  dlc_status trainStep(const void *const *inputs, float *loss);
  dlc_status trainStepHost(const void *const *inputs, float *loss);
  void setLearningRate(float learningRate) { learningRate_ = learningRate; }
  float learningRate() const { return learningRate_; }
  int64_t stepCount() const { return steps_; }
  dlc_status stateToHost(unsigned char *state);
  dlc_status saveState(const char *path);
  dlc_status loadState(const char *path);
//@@ TRAIN_MEMBERS

  // Device state and, for trainStepHost, device copies of the train inputs and the loss.
  unsigned char *state_ = nullptr, *trainStaging_ = nullptr;
  float learningRate_ = @LEARNING_RATE@;
  int64_t steps_ = 0;
  const char *initState();
//@@ STATE_PARAM
, unsigned char *state
//@@ STATE_ARG
, state_
//@@ TRAIN_INIT

  if (!error)
    error = initState();
//@@ TRAIN_DESTROY

    dlc::cuda::deallocate(context_, trainStaging_);
    dlc::cuda::deallocate(context_, state_);
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

// Forward, loss, backward and the optimizer's in-place updates, queued on the context's
// stream; `hyper` (host memory, passed to the kernels by value) is [learning rate, 1 on the
// first step, 1 - beta1^t, 1 - beta2^t]; `step` (from 0) keys the dropout masks. When a
// kernel finds bad input data (a label out of range), the state updates do nothing.
const char *trainSchedule(dlc_cuda_context *context, const dlc::cuda::KernelLibrary *library,
                          const unsigned char *weights, unsigned char *arena,
                          const void *const *inputs, void *const *outputs, int *faults,
                          dlc::cuda::ConvPlan *const *convs, void *workspace,
                          unsigned char *state, const float *hyper, uint64_t step) {
  (void)context;
  (void)library;
  (void)weights;
  (void)arena;
  (void)inputs;
  (void)outputs;
  (void)faults;
  (void)convs;
  (void)workspace;
  (void)state;
  (void)hyper;
  (void)step;
@TRAIN_SCHEDULE@  return nullptr;
}

} // namespace

// Weights and running statistics start from the model's values, moments from zero.
const char *Model::initState() {
  void *state = nullptr;
  const char *error = dlc::cuda::allocate(context_, @UPPER_NAME@_STATE_BYTES, &state);
  state_ = static_cast<unsigned char *>(state);
  if (error)
    return error;
  unsigned char *initial = new (std::nothrow) unsigned char[@UPPER_NAME@_STATE_BYTES]();
  if (!initial)
    return "allocating the initial state: out of host memory";
  std::memcpy(initial, dlc_weights_@NAME@ + @INITIAL_STATE_OFFSET@, @INITIAL_STATE_BYTES@);
  error = dlc::cuda::copyToDevice(context_, state_, initial, @UPPER_NAME@_STATE_BYTES);
  delete[] initial;
  return error;
}

dlc_status Model::trainStep(const void *const *inputs, float *loss) {
  lastError_[0] = '\0';
  if (!context_ || !loss)
    return DLC_INVALID_ARGUMENT;
  void *outputs[] = {loss};
  dlc_status status = dlc_check_buffers(&kTrainInfo, inputs, outputs);
  if (status != DLC_OK)
    return status;
  dlc::cuda::StreamLock lock(context_);
  dlc::cuda::DeviceScope device(context_);
  if (device.error())
    return fail(device.error());
  double t = double(steps_ + 1);
  const float hyper[4] = {learningRate_, steps_ == 0 ? 1.0f : 0.0f,
                          float(1.0 - std::pow(double(@BETA1@), t)),
                          float(1.0 - std::pow(double(@BETA2@), t))};
  dlc::cuda::clearLaunchError();
  const char *error =
      trainSchedule(context_, library_, weights_, arena_, inputs, outputs, faults_, convs_,
                    convWorkspace_, state_, hyper, static_cast<uint64_t>(steps_));
  if (error)
    return fail(error);
  ++steps_;
  return DLC_OK;
}

dlc_status Model::trainStepHost(const void *const *inputs, float *loss) {
  lastError_[0] = '\0';
  if (!context_ || !loss)
    return DLC_INVALID_ARGUMENT;
  void *outputs[] = {loss};
  dlc_status status = dlc_check_buffers(&kTrainInfo, inputs, outputs);
  if (status != DLC_OK)
    return status;
  size_t stagingBytes = aligned(sizeof(float));
  for (int i = 0; i < @TRAIN_NUM_INPUTS@; ++i)
    stagingBytes += aligned(kTrainInputs[i].bytes);
  if (!trainStaging_) {
    void *staging = nullptr;
    if (const char *error = dlc::cuda::allocate(context_, stagingBytes, &staging))
      return fail(error);
    trainStaging_ = static_cast<unsigned char *>(staging);
  }
  dlc::cuda::StreamLock lock(context_);
  dlc::cuda::DeviceScope device(context_);
  if (device.error())
    return fail(device.error());
  const void *deviceInputs[@TRAIN_NUM_INPUTS@];
  size_t offset = aligned(sizeof(float));
  for (int i = 0; i < @TRAIN_NUM_INPUTS@; ++i) {
    deviceInputs[i] = trainStaging_ + offset;
    if (const char *error = dlc::cuda::copyToDevice(context_, trainStaging_ + offset, inputs[i],
                                                    kTrainInputs[i].bytes))
      return fail(error);
    offset += aligned(kTrainInputs[i].bytes);
  }
  float *deviceLoss = reinterpret_cast<float *>(trainStaging_);
  status = trainStep(deviceInputs, deviceLoss);
  if (status != DLC_OK)
    return status;
  if (const char *error = dlc::cuda::copyToHost(context_, loss, deviceLoss, sizeof(float)))
    return fail(error);
  status = synchronize();
  // The step's updates did nothing (see trainSchedule): it does not count.
  if (status == DLC_INVALID_INPUT_DATA)
    --steps_;
  return status;
}

dlc_status Model::stateToHost(unsigned char *state) {
  lastError_[0] = '\0';
  if (!context_ || !state)
    return DLC_INVALID_ARGUMENT;
  dlc::cuda::StreamLock lock(context_);
  dlc::cuda::DeviceScope device(context_);
  if (device.error())
    return fail(device.error());
  if (const char *error =
          dlc::cuda::copyToHost(context_, state, state_, @UPPER_NAME@_STATE_BYTES))
    return fail(error);
  return synchronize();
}

dlc_status Model::saveState(const char *path) {
  unsigned char *host = new (std::nothrow) unsigned char[@UPPER_NAME@_STATE_BYTES];
  if (!host)
    return DLC_OUT_OF_MEMORY;
  dlc_status status = stateToHost(host);
  if (status == DLC_OK)
    status = dlc_state_save(&kStateInfo, host, steps_, learningRate_, path);
  delete[] host;
  return status;
}

dlc_status Model::loadState(const char *path) {
  unsigned char *host = new (std::nothrow) unsigned char[@UPPER_NAME@_STATE_BYTES];
  if (!host)
    return DLC_OUT_OF_MEMORY;
  // Loaded into host memory first: a refused file leaves the device state as it was.
  int64_t steps = steps_;
  float learningRate = learningRate_;
  dlc::cuda::StreamLock lock(context_);
  dlc::cuda::DeviceScope device(context_);
  dlc_status status = device.error() ? fail(device.error()) : stateToHost(host);
  if (status == DLC_OK)
    status = dlc_state_load(&kStateInfo, host, &steps, &learningRate, path);
  if (status == DLC_OK) {
    if (const char *error =
            dlc::cuda::copyToDevice(context_, state_, host, @UPPER_NAME@_STATE_BYTES))
      status = fail(error);
  }
  delete[] host;
  if (status == DLC_OK) {
    steps_ = steps;
    learningRate_ = learningRate;
  }
  return status;
}

} // namespace @NAME@

extern "C" {

const dlc_model_info *@NAME@_train_info(void) { return &@NAME@::kTrainInfo; }

const dlc_state_info *@NAME@_state_info(void) { return &@NAME@::kStateInfo; }

dlc_status @NAME@_train_step(@NAME@_model *model, const void *const *inputs, float *loss) {
  return model ? model->impl.trainStep(inputs, loss) : DLC_INVALID_ARGUMENT;
}

dlc_status @NAME@_train_step_host(@NAME@_model *model, const void *const *inputs, float *loss) {
  return model ? model->impl.trainStepHost(inputs, loss) : DLC_INVALID_ARGUMENT;
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

dlc_status @NAME@_state_to_host(@NAME@_model *model, unsigned char *state) {
  return model ? model->impl.stateToHost(state) : DLC_INVALID_ARGUMENT;
}

dlc_status @NAME@_save_state(@NAME@_model *model, const char *path) {
  return model ? model->impl.saveState(path) : DLC_INVALID_ARGUMENT;
}

dlc_status @NAME@_load_state(@NAME@_model *model, const char *path) {
  return model ? model->impl.loadState(path) : DLC_INVALID_ARGUMENT;
}

} // extern "C"
