// RUN: dlc-opt %s | FileCheck %s
// The storage-only element types: float8 and 4-bit values converted by casts (saturating by
// default, as ONNX Cast), bit casts as reshapes of the same width.

// CHECK-LABEL: func.func @storage
func.func @storage(%x: tensor<4xf32>, %q: tensor<4xi4>) -> (tensor<4xf8E5M2>, tensor<4xf8E5M2>, tensor<4xf32>, tensor<4xi32>) {
  // CHECK: dlc.cast %arg0 : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %a = dlc.cast %x : (tensor<4xf32>) -> tensor<4xf8E5M2>
  // CHECK: dlc.cast %arg0 {saturate = false} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %b = dlc.cast %x {saturate = false} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  // CHECK: dlc.cast %arg1 : (tensor<4xi4>) -> tensor<4xf32>
  %c = dlc.cast %q : (tensor<4xi4>) -> tensor<4xf32>
  // CHECK: dlc.reshape %arg0 : (tensor<4xf32>) -> tensor<4xi32>
  %d = dlc.reshape %x : (tensor<4xf32>) -> tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xf8E5M2>, tensor<4xf8E5M2>, tensor<4xf32>, tensor<4xi32>
}

// Types MLIR 19 lacks are the dialect's own: float4 e2m1 and float8 e8m0.
// CHECK-LABEL: func.func @dialect_types
func.func @dialect_types(%x: tensor<4xf32>) -> (tensor<4x!dlc.f4E2M1>, tensor<4x!dlc.f8E8M0>) {
  // CHECK: dlc.cast %arg0 : (tensor<4xf32>) -> tensor<4x!dlc.f4E2M1>
  %a = dlc.cast %x : (tensor<4xf32>) -> tensor<4x!dlc.f4E2M1>
  // CHECK: dlc.cast %arg0 {round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4x!dlc.f8E8M0>
  %b = dlc.cast %x {round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4x!dlc.f8E8M0>
  return %a, %b : tensor<4x!dlc.f4E2M1>, tensor<4x!dlc.f8E8M0>
}
