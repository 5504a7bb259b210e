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
