// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fold-batch-norm))' %s | FileCheck %s

// scale 2, var 3 (+eps 1 = 4), mean 1, bias 0.5, w 3, b 2: s = 4 / sqrt(4) = 2
//   w' = w * s = 6,  b' = (b - mean) * s + bias = (2 - 1) * 2 + 0.5 = 2.5
// CHECK-LABEL: func.func @folded
func.func @folded(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w = dlc.constant dense<3.0> : tensor<1x1x1x1xf32>
  %b = dlc.constant dense<2.0> : tensor<1xf32>
  %scale = dlc.constant dense<4.0> : tensor<1xf32>
  %shift = dlc.constant dense<0.5> : tensor<1xf32>
  %mean = dlc.constant dense<1.0> : tensor<1xf32>
  %var = dlc.constant dense<3.0> : tensor<1xf32>
  // CHECK-DAG: %[[W:.*]] = dlc.constant dense<6.000000e+00> : tensor<1x1x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = dlc.constant dense<2.500000e+00> : tensor<1xf32>
  // CHECK: dlc.conv %arg0, %[[W]], %[[B]]
  // CHECK-NOT: dlc.batch_norm
  %c = dlc.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %n = dlc.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %n : tensor<1x1x4x4xf32>
}

// The conv's result is also returned: folding would lose it.
// CHECK-LABEL: func.func @conv_used_twice
func.func @conv_used_twice(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w = dlc.constant dense<3.0> : tensor<1x1x1x1xf32>
  %p = dlc.constant dense<1.0> : tensor<1xf32>
  // CHECK: dlc.conv
  // CHECK: dlc.batch_norm
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %n = dlc.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-5 : f32} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %c, %n : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// ConvTranspose with its bias Add: s = scale / sqrt(var + 1) = [1, 2], t = shift - mean * s =
// [-0.5, -3]; w' = w * s per output channel (the weight's dim 1) = [1, 4];
// b' = b * s + t = [2.5, 5]. One Add of b' remains, with the batch norm's value.
// CHECK-LABEL: func.func @transposed
func.func @transposed(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %w = dlc.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %b = dlc.constant dense<[[[3.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %scale = dlc.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %shift = dlc.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = dlc.constant dense<3.0> : tensor<2xf32>
  // CHECK-DAG: %[[W:.*]] = dlc.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<1x2x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = dlc.constant dense<{{\[\[\[}}2.500000e+00]], {{\[\[}}5.000000e+00]]]> : tensor<2x1x1xf32>
  // CHECK: %[[T:.*]] = dlc.conv_grad_input %arg0, %[[W]]
  // CHECK: dlc.add %[[T]], %[[B]]
  // CHECK-NOT: dlc.batch_norm
  %t = dlc.conv_grad_input %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = dlc.add %t, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = dlc.batch_norm %a, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %n : tensor<1x2x4x4xf32>
}

// Without a bias the Add is new; the transposed convolution read twice keeps its batch norm.
// CHECK-LABEL: func.func @transposed_without_bias
func.func @transposed_without_bias(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = dlc.constant dense<1.0> : tensor<1x2x1x1xf32>
  %p = dlc.constant dense<1.0> : tensor<2xf32>
  // CHECK: %[[T:.*]] = dlc.conv_grad_input
  // CHECK: dlc.add %[[T]]
  // CHECK-NOT: dlc.batch_norm
  %t = dlc.conv_grad_input %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = dlc.batch_norm %t, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[U:.*]] = dlc.conv_grad_input
  // CHECK: dlc.batch_norm %[[U]]
  %u = dlc.conv_grad_input %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %m = dlc.batch_norm %u, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %n, %u : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// Grouped: entry [i, c'] of the weight is output channel i / (C_in / group) * (C_out / group)
// + c', here i * 2 + c'. s = scale / sqrt(0 + 1) = [1, 2, 3, 4]: w' = [[1, 2], [3, 4]] * s.
// CHECK-LABEL: func.func @transposed_grouped
func.func @transposed_grouped(%x: tensor<1x2x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %w = dlc.constant dense<1.0> : tensor<2x2x1x1xf32>
  %scale = dlc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %zero = dlc.constant dense<0.0> : tensor<4xf32>
  // CHECK-DAG: %[[W:.*]] = dlc.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
  // CHECK: dlc.conv_grad_input %arg0, %[[W]] {{.*}}group = 2
  %t = dlc.conv_grad_input %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x4x2x2xf32>
  %n = dlc.batch_norm %t, %scale, %zero, %zero, %zero {epsilon = 1.0 : f32} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %n : tensor<1x4x2x2xf32>
}
