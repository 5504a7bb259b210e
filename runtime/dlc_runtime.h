// The dlc runtime's public C API: the types and checks a generated model's header uses, and
// so what its users see. It depends only on the C standard library.
//
// The kernels generated code calls are not here: they are the compiler's and the runtime's
// contract (dlc_kernels.h), which a model's users never need to include.
#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Element types, numbered as ONNX's TensorProto.DataType so tools can map them directly.
typedef enum dlc_dtype {
  DLC_F32 = 1,
  DLC_U8 = 2,
  DLC_I8 = 3,
  DLC_U16 = 4,
  DLC_I16 = 5,
  DLC_I32 = 6,
  DLC_I64 = 7,
  DLC_BOOL = 9,
  DLC_F16 = 10, // IEEE binary16; ops compute in float32 and round back
  DLC_F64 = 11,
  DLC_U32 = 12,
  DLC_U64 = 13,
  DLC_BF16 = 16, // bfloat16 bits; ops compute in float32 and round back
  // The float8 formats of ONNX, as bits; only casts convert them.
  DLC_F8E4M3FN = 17,
  DLC_F8E4M3FNUZ = 18,
  DLC_F8E5M2 = 19,
  DLC_F8E5M2FNUZ = 20,
  // 4- and 2-bit integers take one byte per element (not packed), signed ones sign-extended.
  DLC_U4 = 21,
  DLC_I4 = 22,
  DLC_F4E2M1 = 23, // float4 bits in the low half of a byte; only casts convert it
  DLC_F8E8M0 = 24, // a power of two 2^(bits - 127); only casts convert it
  DLC_U2 = 25,
  DLC_I2 = 26,
} dlc_dtype;

typedef enum dlc_status {
  DLC_OK = 0,
  DLC_INVALID_ARGUMENT = 1,
  DLC_OUT_OF_MEMORY = 2,
  // Input data a kernel cannot accept (e.g. an index out of range); the model's last error
  // names the op.
  DLC_INVALID_INPUT_DATA = 3,
  // A file could not be opened, read or written.
  DLC_IO_ERROR = 4,
  // A state file that is truncated, damaged or of another model (training builds).
  DLC_INVALID_STATE = 5,
  // A CUDA or cuBLAS call failed (CUDA builds); the model's last error names the call.
  DLC_DEVICE_ERROR = 6,
} dlc_status;

// What NAME_create_with takes: the arena as NAME_create takes it, and the threads one run uses
// (0: $DLC_THREADS, or the cores this process may use).
typedef struct dlc_model_options {
  void *arena;
  int threads;
} dlc_model_options;

typedef struct dlc_tensor_info {
  const char *name;
  dlc_dtype dtype;
  int rank;
  const int64_t *shape;
  size_t bytes;
} dlc_tensor_info;

typedef struct dlc_model_info {
  const char *name;
  size_t arena_bytes;
  size_t weight_bytes;
  int num_inputs;
  const dlc_tensor_info *inputs;
  int num_outputs;
  const dlc_tensor_info *outputs;
} dlc_model_info;

// A caller's tensor, for the shape-checked entry points.
typedef struct dlc_tensor {
  dlc_dtype dtype;
  int rank;
  const int64_t *shape;
  void *data;
} dlc_tensor;

// One op of a model compiled with --profile (NAME_profile): what it computes, and how its
// last run went.
typedef struct dlc_op_profile {
  const char *node;   // the ONNX node it comes from
  const char *op;     // that node's op type (the dlc op's name when it has none)
  const char *shapes; // operand shapes -> result shapes, e.g. "1x3x8x8, 4x3x3x3 -> 1x4x6x6"
  double flops;       // arithmetic operations (a multiply-add is 2; one per result element
                      // for ops that are not products)
  double bytes;       // bytes its operands and results take (what it reads and writes)
  int64_t start_ns;   // when it started in the last run (steady clock, nanoseconds)
  int64_t ns;         // how long it ran
  int threads;        // the most threads its kernels ran on
} dlc_op_profile;

// Where a model compiled with --dump hands each op's results as the op finishes (the
// value is only valid during the call): the ONNX node the op comes from, the ONNX value it
// computes when it is one ("" for an op that computes part of a node, or for results past
// the first), which result of the op, and the data.
typedef void (*dlc_dump_fn)(void *user, const char *node, const char *value, int result,
                            dlc_dtype dtype, const int64_t *shape, int rank, const void *data);
typedef struct dlc_dump {
  dlc_dump_fn fn; // null: nothing is dumped
  void *user;
} dlc_dump;

size_t dlc_dtype_size(dlc_dtype dtype);
const char *dlc_status_message(dlc_status status);
// DLC_OK when every non-empty input and output has a buffer and no output buffer overlaps an
// input or another output (outputs are written while inputs are still being read).
dlc_status dlc_check_buffers(const dlc_model_info *info, const void *const *inputs,
                             void *const *outputs);
// DLC_OK when `actual` has exactly `count` tensors matching `expected` in dtype and shape,
// each with data unless it is empty; DLC_INVALID_ARGUMENT otherwise.
dlc_status dlc_check_tensors(const dlc_tensor_info *expected, int count,
                             const dlc_tensor *actual, int actualCount);

#ifdef __cplusplus
} // extern "C"

namespace dlc {
namespace rt {
// A model's worker threads, opaque to its users (the generated Model class holds one).
struct ThreadPool;
} // namespace rt
} // namespace dlc
#endif // __cplusplus
#endif // DLC_RUNTIME_H
