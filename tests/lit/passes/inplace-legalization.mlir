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
