// Model state of training builds (weights, running statistics, optimizer moments) and its
// file format, shared by every generated training library and by `dlc export-weights`.
#ifndef DLC_STATE_H
#define DLC_STATE_H

#include "dlc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dlc_state_kind {
  DLC_STATE_TRAINED = 0, // a weight the optimizer updates
  DLC_STATE_BUFFER = 1,  // updated by the forward pass, not trained (batch-norm running stats)
  DLC_STATE_MOMENT = 2,  // optimizer state (momentum buffer, Adam moments)
} dlc_state_kind;

typedef struct dlc_state_entry {
  const char *name; // the ONNX initializer's name; moments append ".exp_avg" etc.
  dlc_state_kind kind;
  dlc_dtype dtype;
  int rank;
  const int64_t *shape;
  size_t offset; // in the state buffer
  size_t bytes;
} dlc_state_entry;

typedef struct dlc_state_info {
  const char *model;
  int num_entries;
  const dlc_state_entry *entries;
  size_t state_bytes;
} dlc_state_info;

// A state file: "DLCSTATE", format version, the step count and learning rate, the layout
// (every entry's name, kind, dtype, shape, offset and size) and the state bytes. Loading
// checks everything against `info` before it writes `state`: a truncated file, a file of
// another model or of another layout is DLC_INVALID_STATE and leaves the state unchanged.
dlc_status dlc_state_save(const dlc_state_info *info, const unsigned char *state, int64_t step,
                          float learning_rate, const char *path);
dlc_status dlc_state_load(const dlc_state_info *info, unsigned char *state, int64_t *step,
                          float *learning_rate, const char *path);

#ifdef __cplusplus
} // extern "C"
#endif
#endif // DLC_STATE_H
