// RUN: dlc-opt --split-input-file --pass-pipeline='builtin.module(func.func(dlc-lower-optimizer{optimizer=sgd momentum=0.9 weight-decay=0.01}))' %s | FileCheck %s --check-prefix=SGD
// RUN: dlc-opt --split-input-file --pass-pipeline='builtin.module(func.func(dlc-lower-optimizer{optimizer=adamw beta1=0.8}))' %s | FileCheck %s --check-prefix=ADAMW

// Gradients become in-place updates placed right after the weight's last reader; moments
// and the run-time hyperparameters become arguments; the gradient results disappear.

// SGD-LABEL: func.func @step
// SGD-SAME: %arg2: tensor<4xf32> {dlc.hyper, dlc.name = "hyper"}
// SGD-SAME: %arg3: tensor<4xf32> {dlc.name = "w.momentum_buffer", dlc.state}
// SGD-SAME: -> (tensor<f32> {dlc.loss})
// SGD: %[[Y:.*]] = dlc.mul %arg1, %arg0
// SGD-NEXT: %[[G:.*]] = dlc.neg %arg1
// SGD-NEXT: dlc.sgd_update %arg0, %[[G]], %arg2, %arg3 {momentum = 0.899999976 : f32, nesterov = false, weight_decay = 0.00999999977 : f32}
// SGD-NEXT: %[[L:.*]] = dlc.reduce_sum %[[Y]]
// SGD-NEXT: return %[[L]] : tensor<f32>

// ADAMW-LABEL: func.func @step
// ADAMW-SAME: %arg3: tensor<4xf32> {dlc.name = "w.exp_avg", dlc.state}
// ADAMW-SAME: %arg4: tensor<4xf32> {dlc.name = "w.exp_avg_sq", dlc.state}
// ADAMW: dlc.adam_update %arg0, %{{.*}}, %arg3, %arg4, %arg2 {beta1 = 8.000000e-01 : f32, beta2 = 9.990000e-01 : f32, decoupled = true
func.func @step(%w: tensor<4xf32> {dlc.name = "w", dlc.state, dlc.trainable}, %x: tensor<4xf32>) -> (tensor<f32> {dlc.loss}, tensor<4xf32> {dlc.gradient_of = 0 : i64}) {
  %0 = dlc.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = dlc.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = dlc.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %1, %g : tensor<f32>, tensor<4xf32>
}
