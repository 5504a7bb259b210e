// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-merge-linears))' %s | FileCheck %s

// Q, K and V of one input, K without a bias (Whisper's): one product by the weights side by
// side, the biases with zeros for K's, and a slice of its columns for each.
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: %[[W:.*]] = dlc.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00, 6.000000e+00, 9.000000e+00, 1.000000e+01], [3.000000e+00, 4.000000e+00, 7.000000e+00, 8.000000e+00, 1.100000e+01, 1.200000e+01]]> : tensor<2x6xf32>
// CHECK-DAG: %[[B:.*]] = dlc.constant dense<[1.000000e-01, 2.000000e-01, 0.000000e+00, 0.000000e+00, 5.000000e-01, 6.000000e-01]> : tensor<6xf32>
// CHECK: %[[P:.*]] = dlc.gemm %arg0, %[[W]], %[[B]] {{.*}}trans_b = false} : (tensor<4x2xf32>, tensor<2x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK: %[[Q:.*]] = dlc.slice %[[P]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
// CHECK: %[[K:.*]] = dlc.slice %[[P]] {starts = array<i64: 0, 2>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
// CHECK: dlc.transpose %[[K]]
// CHECK: %[[V:.*]] = dlc.slice %[[P]] {starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
// CHECK-NOT: dlc.gemm
// CHECK-NOT: dlc.constant
func.func @qkv(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %wq = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %bq = dlc.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %wk = dlc.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %wv = dlc.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %bv = dlc.constant dense<[0.5, 0.6]> : tensor<2xf32>
  %q = dlc.gemm %x, %wq, %bq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %k = dlc.gemm %x, %wk {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %kt = dlc.transpose %k {perm = array<i64: 1, 0>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %s = dlc.matmul %q, %kt : (tensor<4x2xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %v = dlc.gemm %x, %wv, %bv {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = dlc.matmul %s, %v : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// Transposed weights ([n, k], as PyTorch's Linear stores them) follow one another by rows;
// no product has a bias, so neither has the merged one. Two groups of the same weights
// (layers that share them) share one merged copy.
// CHECK-LABEL: func.func @shared_transposed
// CHECK: %[[W:.*]] = dlc.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<4x2xf32>
// CHECK: dlc.gemm %arg0, %[[W]] {{.*}}trans_b = true} : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
// CHECK: dlc.gemm %arg1, %[[W]] {{.*}}trans_b = true} : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
// CHECK-NOT: dlc.constant
func.func @shared_transposed(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %wq = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = dlc.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %q = dlc.gemm %x, %wq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %k = dlc.gemm %x, %wk {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %kt = dlc.transpose %k {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %q2 = dlc.gemm %y, %wq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %k2 = dlc.gemm %y, %wk {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %kt2 = dlc.transpose %k2 {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s2 = dlc.matmul %q2, %kt2 : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %s, %s2 : tensor<3x3xf32>, tensor<3x3xf32>
}

// The importer flattens the input once for each MatMul: the reshapes of one value are one
// input.
// CHECK-LABEL: func.func @flattened_per_product
// CHECK: %[[X:.*]] = dlc.reshape %arg0
// CHECK: dlc.gemm %[[X]], %{{.*}} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT: dlc.reshape
// CHECK-COUNT-2: dlc.slice
func.func @flattened_per_product(%x: tensor<1x3x2xf32>) -> tensor<3x3xf32> {
  %wq = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = dlc.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %xq = dlc.reshape %x : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  %q = dlc.gemm %xq, %wq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %xk = dlc.reshape %x : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  %k = dlc.gemm %xk, %wk {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %kt = dlc.transpose %k {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %s : tensor<3x3xf32>
}

// Left alone: a result read by something other than a product (its slice would be a copy),
// a fused activation, and weights that are not constant.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: dlc.gemm
// CHECK-NOT: dlc.slice
func.func @left_alone(%x: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>) {
  %wq = dlc.constant dense<1.0> : tensor<2x2xf32>
  %wk = dlc.constant dense<2.0> : tensor<2x2xf32>
  %q = dlc.gemm %x, %wq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %k = dlc.gemm %x, %wk {alpha = 1.0 : f32, beta = 1.0 : f32, dlc.activation = "relu", trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %kt = dlc.transpose %k {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s = dlc.matmul %q, %kt : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %a = dlc.gemm %x, %wq {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %b = dlc.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %bt = dlc.transpose %b {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s2 = dlc.matmul %a, %bt : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %s, %q, %s2 : tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>
}
