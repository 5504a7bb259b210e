// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-epilogues))' %s | FileCheck %s

// CHECK-LABEL: func.func @conv_relu
func.func @conv_relu(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: %[[C:.*]] = dlc.conv %arg0, %arg1 {dilations = {{.*}}, dlc.activation = "relu"
  // CHECK-NOT: dlc.relu
  // CHECK: return %[[C]]
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r = dlc.relu %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// ReLU6 of a depthwise conv: the clip's bounds travel with it.
// CHECK-LABEL: func.func @conv_clip
func.func @conv_clip(%x: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK: dlc.conv {{.*}}dlc.activation = "clip", dlc.activation_max = 6.000000e+00 : f32, dlc.activation_min = 0.000000e+00 : f32
  // CHECK-NOT: dlc.clip
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %r = dlc.clip %c {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @gemm_relu
func.func @gemm_relu(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[G:.*]] = dlc.gemm %arg0, %arg1 {alpha = {{.*}}, dlc.activation = "relu"
  // CHECK: return %[[G]]
  %g = dlc.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %r = dlc.relu %g : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// The conv's own result is also returned: fusing would lose it.
// CHECK-LABEL: func.func @conv_used_twice
func.func @conv_used_twice(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: dlc.conv
  // CHECK-NOT: dlc.activation
  // CHECK: dlc.relu
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r = dlc.relu %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %c, %r : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// Only one activation per producer: the clip after a fused relu stays.
// CHECK-LABEL: func.func @relu_then_clip
func.func @relu_then_clip(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: dlc.conv {{.*}}dlc.activation = "relu"
  // CHECK-NOT: dlc.relu
  // CHECK: dlc.clip
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r = dlc.relu %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %k = dlc.clip %r {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %k : tensor<1x3x4x4xf32>
}

// A relu of something else is left alone.
// CHECK-LABEL: func.func @plain_relu
func.func @plain_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: dlc.relu %arg0
  %r = dlc.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
