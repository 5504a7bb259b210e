// RUN: dlc-opt --canonicalize %s | FileCheck %s

// Reshape chains collapse to one reshape; identity reshapes vanish; unused ops are removed.
// CHECK-LABEL: func.func @reshapes
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x4xf32>) {
  // CHECK-NEXT: %[[R:.*]] = dlc.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %a = dlc.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %b = dlc.reshape %a : (tensor<24xf32>) -> tensor<6x4xf32>
  %same = dlc.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %dead = dlc.exp %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: return %[[R]], %arg0
  return %b, %same : tensor<6x4xf32>, tensor<2x3x4xf32>
}
