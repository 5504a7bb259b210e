// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-layer-norm))' %s | FileCheck %s

// PyTorch's export before opset 17 (Pow 2, Div, scale and bias: the scale on either side),
// LayerNormalization as imported (Mul by itself, Mul by the Reciprocal), and a norm without
// its affine part: one dlc.layer_norm each, the chain gone.
// CHECK-LABEL: func.func @layer_norm_forms
// CHECK-NOT: dlc.reduce_mean
// CHECK: %[[A:.*]] = dlc.layer_norm %arg0, %arg1, %arg2 {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1>}
// CHECK: %[[B:.*]] = dlc.layer_norm %arg0, %arg1 {epsilon = 9.99999996E-13 : f32, operandSegmentSizes = array<i32: 1, 1, 0>}
// CHECK: %[[C:.*]] = dlc.layer_norm %arg0 {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 0>}
// CHECK-NOT: dlc.sqrt
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @layer_norm_forms(%x: tensor<2x5x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  %two = dlc.constant dense<2.0> : tensor<f32>
  %eps = dlc.constant dense<1.0e-5> : tensor<f32>
  %tiny = dlc.constant dense<1.0e-12> : tensor<1xf32>
  %m0 = dlc.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d0 = dlc.sub %x, %m0 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %q0 = dlc.pow %d0, %two : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %v0 = dlc.reduce_mean %q0 {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %e0 = dlc.add %v0, %eps : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5x1xf32>
  %s0 = dlc.sqrt %e0 : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n0 = dlc.div %d0, %s0 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %g0 = dlc.mul %gamma, %n0 : (tensor<8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %a = dlc.add %g0, %beta : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %m1 = dlc.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d1 = dlc.sub %x, %m1 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %q1 = dlc.mul %d1, %d1 : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v1 = dlc.reduce_mean %q1 {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %e1 = dlc.add %tiny, %v1 : (tensor<1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %s1 = dlc.sqrt %e1 : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %r1 = dlc.reciprocal %s1 : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n1 = dlc.mul %d1, %r1 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %b = dlc.mul %n1, %gamma : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %m2 = dlc.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d2 = dlc.sub %x, %m2 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %q2 = dlc.pow %d2, %two : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %v2 = dlc.reduce_mean %q2 {axes = array<i64: 2>} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %e2 = dlc.add %v2, %eps : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5x1xf32>
  %s2 = dlc.sqrt %e2 : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %c = dlc.div %d2, %s2 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  return %a, %b, %c : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
}

// A scale that is not one per element of the last dim stays a Mul after the fused norm; the
// bias after it then stays too.
// CHECK-LABEL: func.func @scale_per_row
// CHECK: %[[N:.*]] = dlc.layer_norm %arg0 {epsilon
// CHECK: %[[S:.*]] = dlc.mul %[[N]], %arg1
// CHECK: dlc.add %[[S]], %arg2
func.func @scale_per_row(%x: tensor<5x8xf32>, %rows: tensor<5x1xf32>, %beta: tensor<8xf32>) -> tensor<5x8xf32> {
  %eps = dlc.constant dense<1.0e-5> : tensor<f32>
  %m = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<5x8xf32>) -> tensor<5x1xf32>
  %d = dlc.sub %x, %m : (tensor<5x8xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
  %q = dlc.mul %d, %d : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %v = dlc.reduce_mean %q {axes = array<i64: 1>} : (tensor<5x8xf32>) -> tensor<5x1xf32>
  %e = dlc.add %v, %eps : (tensor<5x1xf32>, tensor<f32>) -> tensor<5x1xf32>
  %s = dlc.sqrt %e : (tensor<5x1xf32>) -> tensor<5x1xf32>
  %n = dlc.div %d, %s : (tensor<5x8xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
  %g = dlc.mul %n, %rows : (tensor<5x8xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
  %y = dlc.add %g, %beta : (tensor<5x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// Not LayerNorm: the mean also returned (LayerNormalization's Mean output, a training step),
// the centered values read a third time; the division of the centered values by the root of
// their mean square is still an RMSNorm of them, which fuses. Left alone: a mean over another
// axis, an epsilon that is not a constant, a square by another exponent, a normalization of
// another value.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[M0:.*]] = dlc.reduce_mean %arg0
// CHECK: %[[D0:.*]] = dlc.sub %arg0, %[[M0]]
// CHECK: dlc.layer_norm %[[D0]] {{.*}}, rms}
// CHECK: %[[D1:.*]] = dlc.sub
// CHECK: dlc.layer_norm %[[D1]] {{.*}}, rms}
// CHECK-NOT: dlc.layer_norm
// CHECK: return
func.func @left_alone(%x: tensor<4x8xf32>, %t: tensor<f32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) {
  %eps = dlc.constant dense<1.0e-5> : tensor<f32>
  %three = dlc.constant dense<3.0> : tensor<f32>
  %m0 = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d0 = dlc.sub %x, %m0 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q0 = dlc.mul %d0, %d0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v0 = dlc.reduce_mean %q0 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e0 = dlc.add %v0, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s0 = dlc.sqrt %e0 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %a = dlc.div %d0, %s0 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %m1 = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d1 = dlc.sub %x, %m1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q1 = dlc.mul %d1, %d1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v1 = dlc.reduce_mean %q1 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e1 = dlc.add %v1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s1 = dlc.sqrt %e1 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %b = dlc.div %d1, %s1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %m2 = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d2 = dlc.sub %x, %m2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q2 = dlc.mul %d2, %d2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v2 = dlc.reduce_mean %q2 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e2 = dlc.add %v2, %t : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s2 = dlc.sqrt %e2 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %c = dlc.div %d2, %s2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %m3 = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d3 = dlc.sub %x, %m3 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q3 = dlc.pow %d3, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v3 = dlc.reduce_mean %q3 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e3 = dlc.add %v3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s3 = dlc.sqrt %e3 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = dlc.div %d3, %s3 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %m4 = dlc.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d4 = dlc.sub %x, %m4 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q4 = dlc.mul %d4, %d4 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v4 = dlc.reduce_mean %q4 {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e4 = dlc.add %v4, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s4 = dlc.sqrt %e4 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %e = dlc.div %w, %s4 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %extra = dlc.add %d4, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m5 = dlc.reduce_mean %x {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  return %a, %m0, %b, %d1, %c, %d, %m5, %e : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>
}

// RMSNorm as LLaMA exports it (Pow 2, ReduceMean, Add, Sqrt, Div 1 by it, Mul, the weight's
// Mul) and with a Reciprocal: x is also read elsewhere (the residual stream), which the
// input of a norm may be.
// CHECK-LABEL: func.func @rms_norm_forms
// CHECK: %[[A:.*]] = dlc.layer_norm %arg0, %arg1 {epsilon = 9.99999997E-7 : f32, operandSegmentSizes = array<i32: 1, 1, 0>, rms}
// CHECK: %[[B:.*]] = dlc.layer_norm %arg0 {epsilon = 9.99999997E-7 : f32, operandSegmentSizes = array<i32: 1, 0, 0>, rms}
// CHECK-NOT: dlc.reduce_mean
// CHECK: dlc.add %arg0, %[[A]]
func.func @rms_norm_forms(%x: tensor<3x8xf32>, %w: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %two = dlc.constant dense<2.0> : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %eps = dlc.constant dense<1.0e-6> : tensor<f32>
  %q0 = dlc.pow %x, %two : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %v0 = dlc.reduce_mean %q0 {axes = array<i64: 1>} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %e0 = dlc.add %v0, %eps : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %s0 = dlc.sqrt %e0 : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %r0 = dlc.div %one, %s0 : (tensor<f32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %n0 = dlc.mul %x, %r0 : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %a = dlc.mul %w, %n0 : (tensor<8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %q1 = dlc.mul %x, %x : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %v1 = dlc.reduce_mean %q1 {axes = array<i64: 1>} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %e1 = dlc.add %v1, %eps : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %s1 = dlc.sqrt %e1 : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %r1 = dlc.reciprocal %s1 : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %b = dlc.mul %r1, %x : (tensor<3x1xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %sum = dlc.add %x, %a : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %sum, %b : tensor<3x8xf32>, tensor<3x8xf32>
}
