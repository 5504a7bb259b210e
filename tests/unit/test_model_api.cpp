// The argument checks every generated model's API relies on.
#include "dlc_runtime.h"

#include <catch2/catch.hpp>

TEST_CASE("dlc_check_buffers refuses missing and overlapping buffers") {
  const int64_t shape[] = {4};
  const dlc_tensor_info in[] = {{"x", DLC_F32, 1, shape, 16}};
  const dlc_tensor_info out[] = {{"y", DLC_F32, 1, shape, 16}, {"z", DLC_F32, 1, shape, 16}};
  const dlc_model_info info = {"m", 0, 0, 1, in, 2, out};
  float x[4], y[4], z[4], shared[8];
  const void *inputs[] = {x};
  void *outputs[] = {y, z};
  CHECK(dlc_check_buffers(&info, inputs, outputs) == DLC_OK);

  void *missing[] = {y, nullptr};
  CHECK(dlc_check_buffers(&info, inputs, missing) == DLC_INVALID_ARGUMENT);
  void *overInput[] = {x, z};
  CHECK(dlc_check_buffers(&info, inputs, overInput) == DLC_INVALID_ARGUMENT);
  void *overEachOther[] = {shared, shared + 2};
  CHECK(dlc_check_buffers(&info, inputs, overEachOther) == DLC_INVALID_ARGUMENT);
  void *adjacent[] = {shared, shared + 4};
  CHECK(dlc_check_buffers(&info, inputs, adjacent) == DLC_OK);
}

TEST_CASE("dlc_check_tensors compares dtype, rank and shape") {
  const int64_t shape[] = {2, 3}, other[] = {3, 2};
  const dlc_tensor_info expected[] = {{"x", DLC_F32, 2, shape, 24}};
  float data[6];
  dlc_tensor good = {DLC_F32, 2, shape, data};
  CHECK(dlc_check_tensors(expected, 1, &good, 1) == DLC_OK);
  dlc_tensor wrongShape = {DLC_F32, 2, other, data};
  CHECK(dlc_check_tensors(expected, 1, &wrongShape, 1) == DLC_INVALID_ARGUMENT);
  dlc_tensor wrongType = {DLC_I32, 2, shape, data};
  CHECK(dlc_check_tensors(expected, 1, &wrongType, 1) == DLC_INVALID_ARGUMENT);
  CHECK(dlc_check_tensors(expected, 1, &good, 0) == DLC_INVALID_ARGUMENT);
}
