// RUN: dlc-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dlc-autodiff))' %s | FileCheck %s

// Each differentiable op builds its own gradient; the gradient of each trainable argument
// the loss depends on is appended as a result, marked with the argument's number.

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<f32> {dlc.loss}, tensor<3x4xf32> {dlc.gradient_of = 1 : i64}, tensor<4xf32> {dlc.gradient_of = 2 : i64})
// CHECK: %[[SEED:.*]] = dlc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGP:.*]] = dlc.nll_loss_grad %[[SEED]], %arg3
// CHECK: %[[DY:.*]] = dlc.softmax_grad %[[DLOGP]], %[[LOGP:.*]] {axis = 1 : i64, log = true}
// The gradient of relu reads relu's output (so relu may still run in place).
// CHECK: %[[DH:.*]] = dlc.unary_grad %[[DY]], %[[RELU:.*]] {kind = "Relu"}
// A broadcast operand's gradient is summed over the broadcast dims.
// CHECK: %[[DB:.*]] = dlc.reduce_sum %[[DH]] {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
// CHECK: %[[XT:.*]] = dlc.transpose %arg0 {perm = array<i64: 1, 0>}
// CHECK: %[[DW:.*]] = dlc.matmul %[[XT]], %[[DH]]
// CHECK: return %{{.*}}, %[[DW]], %[[DB]]
func.func @mlp(%x: tensor<2x3xf32>, %w: tensor<3x4xf32> {dlc.trainable}, %b: tensor<4xf32> {dlc.trainable}, %labels: tensor<2xi64>) -> (tensor<f32> {dlc.loss}) {
  %0 = dlc.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = dlc.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = dlc.relu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = dlc.softmax %2 {axis = 1 : i64, log = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = dlc.nll_loss %3, %labels : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// A weight used twice: both contributions are summed.
// CHECK-LABEL: func.func @shared
// CHECK: %[[DY:.*]] = dlc.broadcast
// CHECK: %[[A:.*]] = dlc.mul %[[DY]], %arg0
// CHECK: %[[B:.*]] = dlc.mul %[[DY]], %arg0
// CHECK: %[[SUM:.*]] = dlc.add %[[A]], %[[B]]
// CHECK: return %{{.*}}, %[[SUM]]
func.func @shared(%w: tensor<4xf32> {dlc.trainable}) -> (tensor<f32> {dlc.loss}) {
  %0 = dlc.mul %w, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = dlc.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Concat's gradient gives each input its own slice, in its own shape.
// CHECK-LABEL: func.func @concat
// CHECK-DAG: dlc.slice %{{.*}} {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
// CHECK-DAG: dlc.slice %{{.*}} {starts = array<i64: 0, 2>, steps = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x3xf32>
func.func @concat(%a: tensor<2x2xf32> {dlc.trainable}, %b: tensor<2x3xf32> {dlc.trainable}) -> (tensor<f32> {dlc.loss}) {
  %0 = dlc.concat %a, %b {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = dlc.tanh %0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = dlc.reduce_mean %1 {axes = array<i64: 0, 1>} : (tensor<2x5xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// An op without a gradient on the path from a trainable weight to the loss is an error.
func.func @no_gradient(%w: tensor<4xf32> {dlc.name = "w", dlc.trainable}, %x: tensor<4xf32>) -> (tensor<f32> {dlc.loss}) {
  // expected-error @+1 {{has no gradient, but lies on the path from trainable weight 'w' to the loss}}
  %0 = dlc.floor %w : (tensor<4xf32>) -> tensor<4xf32>
  %1 = dlc.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @loss_not_scalar(%w: tensor<4xf32> {dlc.trainable}) -> (tensor<4xf32> {dlc.loss}) {
  // expected-error @-1 {{the loss must be a scalar f32 tensor}}
  return %w : tensor<4xf32>
}
