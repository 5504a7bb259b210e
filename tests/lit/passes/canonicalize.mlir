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

// x^2 is x * x and x^3 is (x * x) * x; other exponents, and an exponent that broadcasts x to
// a bigger shape, stay.
// CHECK-LABEL: func.func @square
func.func @square(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-DAG: %[[TWO:.*]] = dlc.constant dense<2.000000e+00> : tensor<2x3xf32>
  // CHECK-DAG: %[[FOUR:.*]] = dlc.constant dense<4.000000e+00> : tensor<f32>
  // CHECK: %[[SQ:.*]] = dlc.mul %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[XX:.*]] = dlc.mul %arg0, %arg0
  // CHECK: %[[CUBE:.*]] = dlc.mul %[[XX]], %arg0
  // CHECK: %[[FOURTH:.*]] = dlc.pow %arg0, %[[FOUR]]
  // CHECK: %[[WIDE:.*]] = dlc.pow %arg1, %[[TWO]]
  // CHECK: return %[[SQ]], %[[CUBE]], %[[FOURTH]], %[[WIDE]]
  %two = dlc.constant dense<2.0> : tensor<f32>
  %three = dlc.constant dense<3.0> : tensor<f32>
  %four = dlc.constant dense<4.0> : tensor<f32>
  %twos = dlc.constant dense<2.0> : tensor<2x3xf32>
  %sq = dlc.pow %x, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %cube = dlc.pow %x, %three : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %fourth = dlc.pow %x, %four : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %wide = dlc.pow %v, %twos : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %sq, %cube, %fourth, %wide : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
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

// A transpose that moves only dims of size 1 is a reshape (PyTorch attention's [1, S, E] to
// [S, 1, E]); one that also reorders dims larger than 1 stays a transpose.
// CHECK-LABEL: func.func @unit_dim_transposes
func.func @unit_dim_transposes(%x: tensor<1x6x4xf32>, %y: tensor<6x1x4x1xf32>) -> (tensor<6x1x4xf32>, tensor<1x6x1x4xf32>, tensor<1x4x6xf32>) {
  // CHECK-NEXT: %[[A:.*]] = dlc.reshape %arg0 : (tensor<1x6x4xf32>) -> tensor<6x1x4xf32>
  // CHECK-NEXT: %[[B:.*]] = dlc.reshape %arg1 : (tensor<6x1x4x1xf32>) -> tensor<1x6x1x4xf32>
  // CHECK-NEXT: %[[C:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 1>}
  // CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
  %a = dlc.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x6x4xf32>) -> tensor<6x1x4xf32>
  %b = dlc.transpose %y {perm = array<i64: 3, 0, 1, 2>} : (tensor<6x1x4x1xf32>) -> tensor<1x6x1x4xf32>
  %c = dlc.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<1x6x4xf32>) -> tensor<1x4x6xf32>
  return %a, %b, %c : tensor<6x1x4xf32>, tensor<1x6x1x4xf32>, tensor<1x4x6xf32>
}

// x + 0, 0 + x, x - 0, x * 1, 1 * x and x / 1 are x (floats and integers; zeros held in a
// resource as Paddle's loop state assignments hold them too). An identity that broadcasts x to
// a bigger shape, 0 - x, x * 0 and a constant that is not all identities stay.
// CHECK-LABEL: func.func @identities
func.func @identities(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-DAG: %[[ZEROS:.*]] = dlc.constant dense<0.000000e+00> : tensor<2x3xf32>
  // CHECK-DAG: %[[ZERO:.*]] = dlc.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[MIXED:.*]] = dlc.constant dense<[1.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>
  // CHECK: %[[WIDE:.*]] = dlc.add %arg1, %[[ZEROS]]
  // CHECK: %[[NEG:.*]] = dlc.sub %[[ZERO]], %arg0
  // CHECK: %[[TIMES0:.*]] = dlc.mul %arg0, %[[ZERO]]
  // CHECK: %[[NOT1:.*]] = dlc.mul %arg0, %[[MIXED]]
  // CHECK: return %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg2, %[[WIDE]], %[[NEG]], %[[TIMES0]], %[[NOT1]]
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %zeros = dlc.constant dense<0.0> : tensor<2x3xf32>
  %izero = dlc.constant dense_resource<izeros> : tensor<4xi64>
  %mixed = dlc.constant dense<[1.0, 2.0, 1.0]> : tensor<3xf32>
  %a = dlc.add %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %b = dlc.add %zeros, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = dlc.sub %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %d = dlc.mul %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %e = dlc.mul %one, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %f = dlc.div %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %g = dlc.add %i, %izero : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %wide = dlc.add %v, %zeros : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %neg = dlc.sub %zero, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %times0 = dlc.mul %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %not1 = dlc.mul %x, %mixed : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %a, %b, %c, %d, %e, %f, %g, %wide, %neg, %times0, %not1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      izeros: "0x080000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}
