// RUN: dlc-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dlc-check-legality-cuda))' %s
// RUN: dlc-opt --split-input-file --pass-pipeline='builtin.module(func.func(dlc-check-legality-cpu))' %s | FileCheck %s

// A channels-last convolution (what dlc-channels-last makes for the CPU kernels) has no
// CUDA kernel: the CUDA convolutions index NCHW data, and would compute garbage.
// CHECK-LABEL: func.func @channels_last
func.func @channels_last(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x1x3x3xf32>
  // expected-error @+1 {{the cuda target's convolutions read NCHW data}}
  %c = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x4x4x8xf32>
  return %c : tensor<1x4x4x8xf32>
}

// -----

// Ops of the training step that only the CPU target has kernels for would be refused the same
// way; every op here has a kernel on both targets.
// CHECK-LABEL: func.func @both
func.func @both(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = dlc.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
