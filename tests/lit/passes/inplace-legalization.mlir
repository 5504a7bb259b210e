// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-inplace-legalization))' %s | FileCheck %s

// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  // The first op may not overwrite the graph input.
  // CHECK: dlc.exp %arg0 :
  %a = dlc.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // %a has no later reader: written in place.
  // CHECK: dlc.relu %{{.*}} {dlc.inplace = 0 : i64}
  %b = dlc.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // A reshape is a view of its operand.
  // CHECK: dlc.reshape %{{.*}} {dlc.view}
  %c = dlc.reshape %b : (tensor<4x8xf32>) -> tensor<32xf32>
  // CHECK: dlc.sigmoid %{{.*}} {dlc.inplace = 0 : i64}
  %d = dlc.sigmoid %c : (tensor<32xf32>) -> tensor<32xf32>
  return %d : tensor<32xf32>
}

// CHECK-LABEL: func.func @later_reader
func.func @later_reader(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = dlc.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  // %a is read again by the add below: no in-place write over it, nor over its view.
  // CHECK: dlc.reshape %{{.*}} {dlc.view}
  // CHECK-NEXT: dlc.tanh %{{[0-9]+}} :
  %v = dlc.reshape %a : (tensor<8xf32>) -> tensor<2x4xf32>
  %t = dlc.tanh %v : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = dlc.reshape %t : (tensor<2x4xf32>) -> tensor<8xf32>
  // The add is the last reader of both operands; it may overwrite the first.
  // CHECK: dlc.add %{{.*}}, %{{.*}} {dlc.inplace = 0 : i64}
  %s = dlc.add %u, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHECK-LABEL: func.func @broadcast_and_outputs
func.func @broadcast_and_outputs(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<32xf32>) {
  %a = dlc.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // Only the operand with the result's type can be overwritten; %a is also a graph output.
  // CHECK: dlc.mul %{{.*}}, %{{.*}} :
  %m = dlc.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // A view of a graph input cannot become a graph output (it would live in the input).
  // CHECK: dlc.reshape %arg0 :
  %r = dlc.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
  return %a, %r : tensor<4x8xf32>, tensor<32xf32>
}

// CHECK-LABEL: func.func @channel_split
func.func @channel_split(%x: tensor<1x8x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x8x2x4xf32>) {
  %a = dlc.exp %x : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  // A split along channels: each half is one run of %a's bytes (the second at 256), a view.
  // CHECK: dlc.slice %{{.*}} {dlc.view, starts = array<i64: 0, 0, 0, 0>
  %lo = dlc.slice %a {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: dlc.slice %{{.*}} {dlc.view, starts = array<i64: 0, 4, 0, 0>
  %hi = dlc.slice %a {starts = array<i64: 0, 4, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32>
  // A view's reader may not write over it: the rest of its operand lives on.
  // CHECK: dlc.relu %{{.*}} :
  %r = dlc.relu %lo : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: dlc.add %{{.*}}, %{{.*}} :
  %s = dlc.add %r, %hi : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  // Rows of every channel are many runs, a strided slice is not one either, and a run that
  // starts off the planner's 64-byte alignment (at 16 bytes) would move its readers off it:
  // all three are copies.
  // CHECK: dlc.slice %{{.*}} {starts = array<i64: 0, 0, 2, 0>
  %rows = dlc.slice %a {starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x4xf32>
  // CHECK: dlc.slice %{{.*}} {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 2, 1, 1>}
  %even = dlc.slice %a {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 2, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: dlc.slice %{{.*}} {starts = array<i64: 0, 0, 1, 0>
  %off = dlc.slice %a {starts = array<i64: 0, 0, 1, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x1x2x4xf32>
  %t = dlc.add %s, %even : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %u = dlc.neg %off : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %t, %rows : tensor<1x4x4x4xf32>, tensor<1x8x2x4xf32>
}
