// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-input-scale))' %s | FileCheck %s

// Squeeze-and-excitation's gate times the map, read only by a channels-last pointwise
// convolution: the convolution takes the map and the gate (either operand order).
// CHECK-LABEL: func.func @gate_into_pointwise
// CHECK-NOT: dlc.mul
// CHECK: %[[A:.*]] = dlc.conv %arg0, %{{.*}} input_scale %arg1 {channels_last
// CHECK: %[[B:.*]] = dlc.conv %arg0, %{{.*}} residual %[[A]] input_scale %arg1 {channels_last
// CHECK: return %[[B]]
func.func @gate_into_pointwise(%x: tensor<1x5x5x16xf32>, %gate: tensor<1x1x1x16xf32>) -> tensor<1x5x5x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %m = dlc.mul %x, %gate : (tensor<1x5x5x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x5x5x16xf32>
  %a = dlc.conv %m, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<8x16x1x1xf32>) -> tensor<1x5x5x8xf32>
  %n = dlc.mul %gate, %x : (tensor<1x1x1x16xf32>, tensor<1x5x5x16xf32>) -> tensor<1x5x5x16xf32>
  %b = dlc.conv %n, %w residual %a {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<8x16x1x1xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
  return %b : tensor<1x5x5x8xf32>
}

// Channels-first, the gate is [N, C, 1, 1] (RegNetY's blocks, whose grouped convolutions
// keep them channels-first).
// CHECK-LABEL: func.func @gate_into_channels_first
// CHECK-NOT: dlc.mul
// CHECK: %[[A:.*]] = dlc.conv %arg0, %{{.*}} input_scale %arg1 {dilations
// CHECK: return %[[A]]
func.func @gate_into_channels_first(%x: tensor<1x16x5x5xf32>, %gate: tensor<1x16x1x1xf32>) -> tensor<1x8x5x5xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %m = dlc.mul %gate, %x : (tensor<1x16x1x1xf32>, tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %a = dlc.conv %m, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x5x5xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x5x5xf32>
  return %a : tensor<1x8x5x5xf32>
}

// Left alone: a product also returned, one read as a residual, one feeding a depthwise or
// a strided channels-first convolution, and a scale per position rather than per channel.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: input_scale
// CHECK: return
func.func @left_alone(%x: tensor<1x5x5x16xf32>, %gate: tensor<1x1x1x16xf32>, %y: tensor<1x16x5x5xf32>, %g: tensor<1x16x1x1xf32>, %pos: tensor<1x5x5x1xf32>) -> (tensor<1x5x5x16xf32>, tensor<1x5x5x8xf32>, tensor<1x5x5x16xf32>, tensor<1x5x5x16xf32>, tensor<1x8x3x3xf32>, tensor<1x5x5x8xf32>) {
  %w = dlc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %wp = dlc.constant dense<0.5> : tensor<16x16x1x1xf32>
  %wd = dlc.constant dense<0.5> : tensor<16x1x3x3xf32>
  %shared = dlc.mul %x, %gate : (tensor<1x5x5x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x5x5x16xf32>
  %a = dlc.conv %shared, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<8x16x1x1xf32>) -> tensor<1x5x5x8xf32>
  %r = dlc.mul %x, %gate : (tensor<1x5x5x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x5x5x16xf32>
  %b = dlc.conv %x, %wp residual %r {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<16x16x1x1xf32>, tensor<1x5x5x16xf32>) -> tensor<1x5x5x16xf32>
  %dm = dlc.mul %x, %gate : (tensor<1x5x5x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x5x5x16xf32>
  %d = dlc.conv %dm, %wd {channels_last, dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<16x1x3x3xf32>) -> tensor<1x5x5x16xf32>
  %fm = dlc.mul %y, %g : (tensor<1x16x5x5xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x5x5xf32>
  %f = dlc.conv %fm, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x16x5x5xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x3x3xf32>
  %pm = dlc.mul %x, %pos : (tensor<1x5x5x16xf32>, tensor<1x5x5x1xf32>) -> tensor<1x5x5x16xf32>
  %p = dlc.conv %pm, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x16xf32>, tensor<8x16x1x1xf32>) -> tensor<1x5x5x8xf32>
  return %shared, %a, %b, %d, %f, %p : tensor<1x5x5x16xf32>, tensor<1x5x5x8xf32>, tensor<1x5x5x16xf32>, tensor<1x5x5x16xf32>, tensor<1x8x3x3xf32>, tensor<1x5x5x8xf32>
}
