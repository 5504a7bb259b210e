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

// x^2 is x * x; other exponents, and an exponent that broadcasts x to a bigger shape, stay.
// CHECK-LABEL: func.func @square
func.func @square(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-DAG: %[[TWO:.*]] = dlc.constant dense<2.000000e+00> : tensor<2x3xf32>
  // CHECK-DAG: %[[THREE:.*]] = dlc.constant dense<3.000000e+00> : tensor<f32>
  // CHECK: %[[SQ:.*]] = dlc.mul %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[CUBE:.*]] = dlc.pow %arg0, %[[THREE]]
  // CHECK: %[[WIDE:.*]] = dlc.pow %arg1, %[[TWO]]
  // CHECK: return %[[SQ]], %[[CUBE]], %[[WIDE]]
  %two = dlc.constant dense<2.0> : tensor<f32>
  %three = dlc.constant dense<3.0> : tensor<f32>
  %twos = dlc.constant dense<2.0> : tensor<2x3xf32>
  %sq = dlc.pow %x, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %cube = dlc.pow %x, %three : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %wide = dlc.pow %v, %twos : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %sq, %cube, %wide : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// A transpose of a transpose is one transpose (perms composed); one that restores the order
// is no transpose at all.
// CHECK-LABEL: func.func @transposes
func.func @transposes(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<4x2x5x3xf32>, tensor<2x3x4x5xf32>) {
  // CHECK-NEXT: %[[T:.*]] = dlc.transpose %arg0 {perm = array<i64: 2, 0, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<4x2x5x3xf32>
  // CHECK-NEXT: return %arg0, %[[T]], %arg0
  %last = dlc.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %back = dlc.transpose %last {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x4x5x3xf32>) -> tensor<2x3x4x5xf32>
  %other = dlc.transpose %last {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x4x5x3xf32>) -> tensor<4x2x5x3xf32>
  %same = dlc.transpose %x {perm = array<i64: 0, 1, 2, 3>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %back, %other, %same : tensor<2x3x4x5xf32>, tensor<4x2x5x3xf32>, tensor<2x3x4x5xf32>
}
