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

// Hugging Face's split heads: each projection [S, heads x D] is read in place (rows 6 apart,
// heads 3 apart; the keys as rows of D, without K^T), the result written as [S, heads, D]
// for the reshape back; no transpose is left.
// CHECK-LABEL: func.func @split_heads
// CHECK-NOT: dlc.transpose
// CHECK: %[[A:.*]] = dlc.attention %arg0, %arg1, %arg2, %arg3 {batch = array<i64: 1, 2>, bias_view = array<i64: 0, 0, 0, 0, 1>, divide = true, keys_view = array<i64: 0, 0, 3, 1, 6>, output_view = array<i64: 0, 0, 3, 6, 1>, query_view = array<i64: 0, 0, 3, 6, 1>, scale = 8.000000e+00 : f32, sizes = array<i64: 4, 3, 4, 3>, values_view = array<i64: 0, 0, 3, 6, 1>} : {{.*}} -> tensor<1x4x2x3xf32>
// CHECK-NOT: dlc.transpose
// CHECK: dlc.reshape %[[A]]
func.func @split_heads(%qp: tensor<4x6xf32>, %kp: tensor<4x6xf32>, %vp: tensor<4x6xf32>, %mask: tensor<1x1x1x4xf32>) -> tensor<4x6xf32> {
  %c8 = dlc.constant dense<8.0> : tensor<f32>
  %q4 = dlc.reshape %qp : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %q = dlc.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x4x3xf32>
  %k4 = dlc.reshape %kp : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %kt = dlc.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x3x4xf32>
  %v4 = dlc.reshape %vp : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %v = dlc.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x4x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<1x2x4x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x4x4xf32>
  %d = dlc.div %s, %c8 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = dlc.add %d, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = dlc.softmax %m {axis = 3 : i64, log = false} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = dlc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = dlc.transpose %a {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x4x3xf32>) -> tensor<1x4x2x3xf32>
  %r = dlc.reshape %o : (tensor<1x4x2x3xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// GPT-2's and timm's fused projection: query, keys and values are slices of one [S, 3 x 6]
// product (offsets 0, 6 and 12); the query's scale by 1/2, a power of 2, joins the scores'
// division by 8 exactly.
// CHECK-LABEL: func.func @fused_projection
// CHECK-NOT: dlc.slice
// CHECK-NOT: dlc.transpose
// CHECK-NOT: dlc.mul
// CHECK: %[[X:.*]] = dlc.reshape %arg0
// CHECK: dlc.attention %[[X]], %[[X]], %[[X]] {batch = array<i64: 2>, divide = false, keys_view = array<i64: 6, 3, 1, 18>, output_view = array<i64: 0, 12, 3, 1>, query_view = array<i64: 0, 3, 18, 1>, scale = 6.250000e-02 : f32, sizes = array<i64: 4, 3, 4, 3>, values_view = array<i64: 12, 3, 18, 1>}
func.func @fused_projection(%qkv: tensor<4x18xf32>) -> tensor<2x4x3xf32> {
  %half = dlc.constant dense<0.5> : tensor<f32>
  %c8 = dlc.constant dense<8.0> : tensor<f32>
  %x = dlc.reshape %qkv : (tensor<4x18xf32>) -> tensor<4x1x18xf32>
  %qs = dlc.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : (tensor<4x1x18xf32>) -> tensor<4x1x6xf32>
  %ks = dlc.slice %x {starts = array<i64: 0, 0, 6>, steps = array<i64: 1, 1, 1>} : (tensor<4x1x18xf32>) -> tensor<4x1x6xf32>
  %vs = dlc.slice %x {starts = array<i64: 0, 0, 12>, steps = array<i64: 1, 1, 1>} : (tensor<4x1x18xf32>) -> tensor<4x1x6xf32>
  %q3 = dlc.reshape %qs : (tensor<4x1x6xf32>) -> tensor<4x2x3xf32>
  %qt = dlc.transpose %q3 {perm = array<i64: 1, 0, 2>} : (tensor<4x2x3xf32>) -> tensor<2x4x3xf32>
  %q = dlc.mul %qt, %half : (tensor<2x4x3xf32>, tensor<f32>) -> tensor<2x4x3xf32>
  %k3 = dlc.reshape %ks : (tensor<4x1x6xf32>) -> tensor<4x2x3xf32>
  %kt = dlc.transpose %k3 {perm = array<i64: 1, 2, 0>} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %v3 = dlc.reshape %vs : (tensor<4x1x6xf32>) -> tensor<4x2x3xf32>
  %v = dlc.transpose %v3 {perm = array<i64: 1, 0, 2>} : (tensor<4x2x3xf32>) -> tensor<2x4x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<2x4x3xf32>, tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  %d = dlc.div %s, %c8 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = dlc.softmax %d {axis = 2 : i64, log = false} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %a = dlc.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %a : tensor<2x4x3xf32>
}

// LLaMA's grouped-query attention: each key/value head repeated for two query heads by
// Unsqueeze, Expand and Reshape; the heads split into [kv heads, group], the keys' and
// values' group stride 0 (read, and packed, once).
// CHECK-LABEL: func.func @grouped_query
// CHECK-NOT: dlc.broadcast
// CHECK: dlc.attention %arg0, %arg1, %arg2 {batch = array<i64: 1, 2, 2>, divide = false, keys_view = array<i64: 0, 0, 15, 0, 1, 3>, output_view = array<i64: 0, 60, 30, 15, 3, 1>, query_view = array<i64: 0, 60, 30, 15, 3, 1>, scale = 1.000000e+00 : f32, sizes = array<i64: 5, 3, 5, 3>, values_view = array<i64: 0, 0, 15, 0, 3, 1>}
func.func @grouped_query(%q: tensor<1x4x5x3xf32>, %k: tensor<1x2x5x3xf32>, %v: tensor<1x2x5x3xf32>) -> tensor<1x4x5x3xf32> {
  %k5 = dlc.reshape %k : (tensor<1x2x5x3xf32>) -> tensor<1x2x1x5x3xf32>
  %kb = dlc.broadcast %k5 : (tensor<1x2x1x5x3xf32>) -> tensor<1x2x2x5x3xf32>
  %kr = dlc.reshape %kb : (tensor<1x2x2x5x3xf32>) -> tensor<1x4x5x3xf32>
  %kt = dlc.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x4x3x5xf32>
  %v5 = dlc.reshape %v : (tensor<1x2x5x3xf32>) -> tensor<1x2x1x5x3xf32>
  %vb = dlc.broadcast %v5 : (tensor<1x2x1x5x3xf32>) -> tensor<1x2x2x5x3xf32>
  %vr = dlc.reshape %vb : (tensor<1x2x2x5x3xf32>) -> tensor<1x4x5x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<1x4x5x3xf32>, tensor<1x4x3x5xf32>) -> tensor<1x4x5x5xf32>
  %p = dlc.softmax %s {axis = 3 : i64, log = false} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %a = dlc.matmul %p, %vr : (tensor<1x4x5x5xf32>, tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
  return %a : tensor<1x4x5x3xf32>
}

// Stay: a transpose something else reads too, and a slice whose rows are not contiguous
// (step 2): the attention reads their results (the values' transpose above the slice still
// becomes a view).
// CHECK-LABEL: func.func @stay
// CHECK: %[[Q:.*]] = dlc.transpose
// CHECK: %[[V:.*]] = dlc.slice
// CHECK-NOT: dlc.transpose
// CHECK: dlc.attention %[[Q]], %arg1, %[[V]] {{.*}}values_view = array<i64: 0, 0, 3, 6, 1>}
func.func @stay(%qp: tensor<4x6xf32>, %kt: tensor<1x2x3x4xf32>, %vp: tensor<4x12xf32>) -> (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) {
  %q4 = dlc.reshape %qp : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %q = dlc.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x4x3xf32>
  %vs = dlc.slice %vp {starts = array<i64: 0, 0>, steps = array<i64: 1, 2>} : (tensor<4x12xf32>) -> tensor<4x6xf32>
  %v4 = dlc.reshape %vs : (tensor<4x6xf32>) -> tensor<1x4x2x3xf32>
  %v = dlc.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x4x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<1x2x4x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x4x4xf32>
  %p = dlc.softmax %s {axis = 3 : i64, log = false} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = dlc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  return %a, %q : tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>
}
