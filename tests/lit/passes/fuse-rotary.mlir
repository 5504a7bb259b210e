// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-rotary))' %s | FileCheck %s

// LLaMA's rotary embedding of split heads: x * cos + Concat(-x[..., 4:], x[..., :4]) * sin
// becomes one dlc.rotary reading the projection [1, S, heads, D] through the transpose's perm.
// CHECK-LABEL: func.func @llama
// CHECK-NOT: dlc.transpose
// CHECK: %[[Y:.*]] = dlc.rotary %arg0, %arg1, %arg2 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x5x2x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>) -> tensor<1x2x5x8xf32>
// CHECK-NOT: dlc.slice
// CHECK-NOT: dlc.concat
// CHECK-NOT: dlc.mul
// CHECK: return %[[Y]]
func.func @llama(%qp: tensor<1x5x2x8xf32>, %cos: tensor<1x1x5x8xf32>, %sin: tensor<1x1x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %x = dlc.transpose %qp {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x5x2x8xf32>) -> tensor<1x2x5x8xf32>
  %lo = dlc.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x4xf32>
  %hi = dlc.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x4xf32>
  %n = dlc.neg %hi : (tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  %r = dlc.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x8xf32>
  %a = dlc.mul %x, %cos : (tensor<1x2x5x8xf32>, tensor<1x1x5x8xf32>) -> tensor<1x2x5x8xf32>
  %b = dlc.mul %sin, %r : (tensor<1x1x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  %y = dlc.add %b, %a : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %y : tensor<1x2x5x8xf32>
}

// Fused, but reading the transpose's result, which something else reads too.
// CHECK-LABEL: func.func @transpose_also_read
// CHECK: %[[X:.*]] = dlc.transpose
// CHECK: dlc.rotary %[[X]], %arg1, %arg2 : (tensor<1x2x5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<1x2x5x8xf32>
func.func @transpose_also_read(%qp: tensor<1x5x2x8xf32>, %cos: tensor<5x8xf32>, %sin: tensor<5x8xf32>) -> (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) {
  %x = dlc.transpose %qp {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x5x2x8xf32>) -> tensor<1x2x5x8xf32>
  %lo = dlc.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x4xf32>
  %hi = dlc.slice %x {starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x8xf32>) -> tensor<1x2x5x4xf32>
  %n = dlc.neg %hi : (tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  %r = dlc.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x8xf32>
  %a = dlc.mul %x, %cos : (tensor<1x2x5x8xf32>, tensor<5x8xf32>) -> tensor<1x2x5x8xf32>
  %b = dlc.mul %r, %sin : (tensor<1x2x5x8xf32>, tensor<5x8xf32>) -> tensor<1x2x5x8xf32>
  %y = dlc.add %a, %b : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %y, %x : tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>
}

// Left alone: the negated half first in the wrong order (Concat(-x[..., :4], x[..., 4:])),
// and a rotation whose concat is also returned.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: dlc.rotary
// CHECK: return
func.func @left_alone(%x: tensor<5x8xf32>, %cos: tensor<5x8xf32>, %sin: tensor<5x8xf32>) -> (tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) {
  %lo = dlc.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<5x8xf32>) -> tensor<5x4xf32>
  %hi = dlc.slice %x {starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : (tensor<5x8xf32>) -> tensor<5x4xf32>
  %n = dlc.neg %lo : (tensor<5x4xf32>) -> tensor<5x4xf32>
  %r = dlc.concat %n, %hi {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x8xf32>
  %a = dlc.mul %x, %cos : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %b = dlc.mul %r, %sin : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %y = dlc.add %a, %b : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %lo2 = dlc.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<5x8xf32>) -> tensor<5x4xf32>
  %hi2 = dlc.slice %x {starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : (tensor<5x8xf32>) -> tensor<5x4xf32>
  %n2 = dlc.neg %hi2 : (tensor<5x4xf32>) -> tensor<5x4xf32>
  %r2 = dlc.concat %n2, %lo2 {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x8xf32>
  %a2 = dlc.mul %x, %cos : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %b2 = dlc.mul %r2, %sin : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %y2 = dlc.add %a2, %b2 : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  return %y, %y2, %r2 : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>
}
