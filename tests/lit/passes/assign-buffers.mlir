// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-assign-buffers))' %s | FileCheck %s

// Intermediates get disjoint 64-byte aligned ranges; the returned value is written into the
// caller's buffer and gets none; the conv's im2col workspace gets its own range.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: dlc.arena_bytes = 768
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: dlc.constant
  %w = dlc.constant dense<1.0> : tensor<2x1x3x3xf32>
  // CHECK: dlc.relu %{{.*}} {dlc.arena_offset = 0 : i64}
  %r = dlc.relu %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // CHECK: dlc.conv {{.*}}dlc.arena_offset = 64 : i64{{.*}}dlc.workspace_offset = 192 : i64
  %c = dlc.conv %r, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: dlc.sigmoid
  // CHECK-NOT: arena_offset
  // CHECK-SAME: -> tensor<1x2x4x4xf32>
  %s = dlc.sigmoid %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %s : tensor<1x2x4x4xf32>
}
