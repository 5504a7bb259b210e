// RUN: dlc-opt --verify-diagnostics --pass-pipeline='builtin.module(func.func(dlc-verify-plan-cpu))' %s
// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-verify-plan))' %s | FileCheck %s

// A workspace record that is not what the target's kernel needs: 64 bytes recorded and
// given, where the CPU convolution's im2col buffer takes 1152 (2 channels x 9 taps x 16
// positions). dlc-verify-plan alone trusts the record and accepts the plan; each target's
// pipeline verifies with its kernels' own sizes and refuses it.
// CHECK-LABEL: func.func @stale_record
func.func @stale_record(%x: tensor<1x2x4x4xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32> attributes {dlc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{unsafe memory plan: '<unnamed>' (dlc.conv) has 64 workspace bytes recorded, but its kernel needs 1152}}
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, dlc.output = 0 : i64, dlc.workspace_bytes = 64 : i64, dlc.workspace_offset = 0 : i64, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32>
  return %c : tensor<1x1x4x4xf32>
}
