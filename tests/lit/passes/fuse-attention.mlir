// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-attention))' %s | FileCheck %s

// Scores, a scale by Mul or Div, a mask Add (bias on either side), Softmax over the last axis,
// the weighted sum: one dlc.attention each, the chain gone.
// CHECK-LABEL: func.func @attention_forms
// CHECK-NOT: dlc.softmax
// CHECK-NOT: dlc.matmul
// CHECK: %[[A:.*]] = dlc.attention %arg0, %arg1, %arg2 {divide = false, scale = 1.000000e+00 : f32}
// CHECK: %[[B:.*]] = dlc.attention %arg0, %arg1, %arg2, %arg3 {divide = true, scale = 8.000000e+00 : f32}
// CHECK: %[[C:.*]] = dlc.attention %arg0, %arg1, %arg2, %arg3 {divide = false, scale = 1.250000e-01 : f32}
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @attention_forms(%q: tensor<2x6x10x8xf32>, %kt: tensor<2x6x8x12xf32>, %v: tensor<2x6x12x4xf32>, %mask: tensor<2x1x1x12xf32>) -> (tensor<2x6x10x4xf32>, tensor<2x6x10x4xf32>, tensor<2x6x10x4xf32>) {
  %c8 = dlc.constant dense<8.0> : tensor<f32>
  %eighth = dlc.constant dense<0.125> : tensor<1xf32>
  %s0 = dlc.matmul %q, %kt : (tensor<2x6x10x8xf32>, tensor<2x6x8x12xf32>) -> tensor<2x6x10x12xf32>
  %p0 = dlc.softmax %s0 {axis = 3 : i64, log = false} : (tensor<2x6x10x12xf32>) -> tensor<2x6x10x12xf32>
  %a = dlc.matmul %p0, %v : (tensor<2x6x10x12xf32>, tensor<2x6x12x4xf32>) -> tensor<2x6x10x4xf32>
  %s1 = dlc.matmul %q, %kt : (tensor<2x6x10x8xf32>, tensor<2x6x8x12xf32>) -> tensor<2x6x10x12xf32>
  %d1 = dlc.div %s1, %c8 : (tensor<2x6x10x12xf32>, tensor<f32>) -> tensor<2x6x10x12xf32>
  %m1 = dlc.add %d1, %mask : (tensor<2x6x10x12xf32>, tensor<2x1x1x12xf32>) -> tensor<2x6x10x12xf32>
  %p1 = dlc.softmax %m1 {axis = 3 : i64, log = false} : (tensor<2x6x10x12xf32>) -> tensor<2x6x10x12xf32>
  %b = dlc.matmul %p1, %v : (tensor<2x6x10x12xf32>, tensor<2x6x12x4xf32>) -> tensor<2x6x10x4xf32>
  %s2 = dlc.matmul %q, %kt : (tensor<2x6x10x8xf32>, tensor<2x6x8x12xf32>) -> tensor<2x6x10x12xf32>
  %d2 = dlc.mul %eighth, %s2 : (tensor<1xf32>, tensor<2x6x10x12xf32>) -> tensor<2x6x10x12xf32>
  %m2 = dlc.add %mask, %d2 : (tensor<2x1x1x12xf32>, tensor<2x6x10x12xf32>) -> tensor<2x6x10x12xf32>
  %p2 = dlc.softmax %m2 {axis = 3 : i64, log = false} : (tensor<2x6x10x12xf32>) -> tensor<2x6x10x12xf32>
  %c = dlc.matmul %p2, %v : (tensor<2x6x10x12xf32>, tensor<2x6x12x4xf32>) -> tensor<2x6x10x4xf32>
  return %a, %b, %c : tensor<2x6x10x4xf32>, tensor<2x6x10x4xf32>, tensor<2x6x10x4xf32>
}

// Left alone: probabilities also returned (a training step's backward reads them), scores
// also returned, a softmax over another axis, a log-softmax, a scale that is not a constant,
// keys broadcast over the heads (leading dims differ), probabilities as the right operand.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: dlc.attention
// CHECK: return
func.func @left_alone(%q: tensor<6x10x8xf32>, %kt: tensor<6x8x10xf32>, %v: tensor<6x10x4xf32>, %k1: tensor<1x8x10xf32>, %t: tensor<f32>, %w: tensor<6x10x10xf32>) -> (tensor<6x10x10xf32>, tensor<6x10x4xf32>, tensor<6x10x10xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x10xf32>) {
  %s0 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p0 = dlc.softmax %s0 {axis = 2 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %a = dlc.matmul %p0, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s1 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p1 = dlc.softmax %s1 {axis = 2 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %b = dlc.matmul %p1, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s2 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p2 = dlc.softmax %s2 {axis = 1 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %c = dlc.matmul %p2, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s3 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p3 = dlc.softmax %s3 {axis = 2 : i64, log = true} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %d = dlc.matmul %p3, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s4 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %d4 = dlc.div %s4, %t : (tensor<6x10x10xf32>, tensor<f32>) -> tensor<6x10x10xf32>
  %p4 = dlc.softmax %d4 {axis = 2 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %e = dlc.matmul %p4, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s5 = dlc.matmul %q, %k1 : (tensor<6x10x8xf32>, tensor<1x8x10xf32>) -> tensor<6x10x10xf32>
  %p5 = dlc.softmax %s5 {axis = 2 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %f = dlc.matmul %p5, %v : (tensor<6x10x10xf32>, tensor<6x10x4xf32>) -> tensor<6x10x4xf32>
  %s6 = dlc.matmul %q, %kt : (tensor<6x10x8xf32>, tensor<6x8x10xf32>) -> tensor<6x10x10xf32>
  %p6 = dlc.softmax %s6 {axis = 2 : i64, log = false} : (tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  %g = dlc.matmul %w, %p6 : (tensor<6x10x10xf32>, tensor<6x10x10xf32>) -> tensor<6x10x10xf32>
  return %p0, %a, %s1, %b, %c, %d, %e, %f, %g : tensor<6x10x10xf32>, tensor<6x10x4xf32>, tensor<6x10x10xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x4xf32>, tensor<6x10x10xf32>
}

// GPT-2's causal mask: where(constant condition, scaled scores, finfo(float32).min) becomes
// the bias condition ? 0 : fill, a constant. A condition computed at run time, or a fill
// that is not a one-element constant, leaves the chain alone.
// CHECK-LABEL: func.func @causal_where
// CHECK: %[[MASK:.*]] = dlc.constant dense<{{\[}}[0.000000e+00, -3.40282347E+38], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[A:.*]] = dlc.attention %arg0, %arg1, %arg2, %[[MASK]] {divide = true, scale = 8.000000e+00 : f32}
// CHECK: dlc.where %arg3
// CHECK: dlc.where
// CHECK: return %[[A]]
func.func @causal_where(%q: tensor<3x2x8xf32>, %kt: tensor<3x8x2xf32>, %v: tensor<3x2x4xf32>, %runtime: tensor<2x2xi1>, %fill: tensor<f32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>) {
  %causal = dlc.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %min = dlc.constant dense<-3.40282347E+38> : tensor<f32>
  %c8 = dlc.constant dense<8.0> : tensor<f32>
  %s0 = dlc.matmul %q, %kt : (tensor<3x2x8xf32>, tensor<3x8x2xf32>) -> tensor<3x2x2xf32>
  %d0 = dlc.div %s0, %c8 : (tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %m0 = dlc.where %causal, %d0, %min : (tensor<2x2xi1>, tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %p0 = dlc.softmax %m0 {axis = 2 : i64, log = false} : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %a = dlc.matmul %p0, %v : (tensor<3x2x2xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %s1 = dlc.matmul %q, %kt : (tensor<3x2x8xf32>, tensor<3x8x2xf32>) -> tensor<3x2x2xf32>
  %m1 = dlc.where %runtime, %s1, %min : (tensor<2x2xi1>, tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %p1 = dlc.softmax %m1 {axis = 2 : i64, log = false} : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %b = dlc.matmul %p1, %v : (tensor<3x2x2xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %s2 = dlc.matmul %q, %kt : (tensor<3x2x8xf32>, tensor<3x8x2xf32>) -> tensor<3x2x2xf32>
  %m2 = dlc.where %causal, %s2, %fill : (tensor<2x2xi1>, tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %p2 = dlc.softmax %m2 {axis = 2 : i64, log = false} : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %c = dlc.matmul %p2, %v : (tensor<3x2x2xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  return %a, %b, %c : tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>
}
