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

// ResNet's block end: conv + residual add + relu become one conv. The residual (computed
// after the conv here) is the conv's last operand and the conv moves to the add's place.
// CHECK-LABEL: func.func @conv_add_relu
func.func @conv_add_relu(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %w2: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[R:.*]] = dlc.relu %arg0
  // CHECK-NEXT: %[[C:.*]] = dlc.conv %arg0, %arg1 residual %[[R]] {dilations = {{.*}}, dlc.activation = "relu"
  // CHECK-NOT: dlc.add
  // CHECK: return %[[C]]
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = dlc.relu %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = dlc.add %r, %c : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = dlc.relu %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// A broadcast add (a per-channel bias) is not a residual.
// CHECK-LABEL: func.func @conv_add_broadcast
func.func @conv_add_broadcast(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %b: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: dlc.conv %arg0, %arg1 {
  // CHECK: dlc.add
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = dlc.add %c, %b : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %s : tensor<1x2x4x4xf32>
}

// Two convs added: one takes the other as its residual.
// CHECK-LABEL: func.func @conv_plus_conv
func.func @conv_plus_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[A:.*]] = dlc.conv %arg0, %arg1 {
  // CHECK-NEXT: %[[B:.*]] = dlc.conv %arg0, %arg1 residual %[[A]] {
  // CHECK-NEXT: return %[[B]]
  %a = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = dlc.add %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %s : tensor<1x2x4x4xf32>
}

// Leaky relu keeps its slope; sigmoid and tanh need no parameter.
// CHECK-LABEL: func.func @other_activations
func.func @other_activations(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: dlc.gemm {{.*}}dlc.activation = "leaky_relu", dlc.activation_alpha = 1.000000e-01 : f32
  // CHECK: dlc.gemm {{.*}}dlc.activation = "sigmoid"
  // CHECK: dlc.conv {{.*}}dlc.activation = "tanh"
  // CHECK-NOT: dlc.leaky_relu
  // CHECK-NOT: dlc.sigmoid
  // CHECK-NOT: dlc.tanh
  %g = dlc.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %l = dlc.leaky_relu %g {alpha = 0.1 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = dlc.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %s = dlc.sigmoid %h : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %t = dlc.tanh %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %l, %s, %t : tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x3x4x4xf32>
}

// The weight's update comes between the conv and the add: moving the conv to the add would
// read the updated weight, so the add stays.
// CHECK-LABEL: func.func @state_update_between
func.func @state_update_between(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32> {dlc.state}, %g: tensor<2x2x1x1xf32>, %h: tensor<4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: dlc.conv %arg0, %arg1 {
  // CHECK: dlc.sgd_update
  // CHECK: dlc.add
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  dlc.sgd_update %w, %g, %h {momentum = 0.0 : f32, nesterov = false, weight_decay = 0.0 : f32} : tensor<2x2x1x1xf32>, tensor<2x2x1x1xf32>, tensor<4xf32>
  %a = dlc.add %c, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %a : tensor<1x2x4x4xf32>
}

// SiLU as exporters write it: the conv feeds its sigmoid and the product, in either order.
// CHECK-LABEL: func.func @conv_silu
func.func @conv_silu(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: %[[A:.*]] = dlc.conv %arg0, %arg1 {dilations = {{.*}}, dlc.activation = "silu"
  // CHECK: %[[B:.*]] = dlc.conv %arg0, %arg1 {dilations = {{.*}}, dlc.activation = "silu"
  // CHECK-NOT: dlc.sigmoid
  // CHECK-NOT: dlc.mul
  // CHECK: return %[[A]], %[[B]]
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %s = dlc.sigmoid %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %m = dlc.mul %c, %s : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %d = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %t = dlc.sigmoid %d : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %n = dlc.mul %t, %d : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %m, %n : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// The conv's own value is returned too, or the sigmoid's: neither can disappear.
// CHECK-LABEL: func.func @silu_values_read_elsewhere
func.func @silu_values_read_elsewhere(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK-NOT: dlc.activation
  // CHECK: dlc.sigmoid
  // CHECK: dlc.mul
  // CHECK: dlc.sigmoid
  // CHECK: dlc.mul
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %s = dlc.sigmoid %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %m = dlc.mul %c, %s : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %d = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %t = dlc.sigmoid %d : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %n = dlc.mul %d, %t : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %c, %m, %t : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// A Linear layer as PyTorch exports it for 3-d input (MatMul, then Add of the bias): the
// bias becomes the product's C, added as the product finishes.
// CHECK-LABEL: func.func @linear_bias
// CHECK: %[[G:.*]] = dlc.gemm %arg0, %{{.*}}, %arg1 {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK: %[[R:.*]] = dlc.reshape %[[G]]
// CHECK-NOT: dlc.add
// CHECK: return %[[R]]
func.func @linear_bias(%x: tensor<3x2xf32>, %bias: tensor<4xf32>) -> tensor<1x3x4xf32> {
  %w = dlc.constant dense<1.0> : tensor<2x4xf32>
  %g = dlc.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %r = dlc.reshape %g : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %y = dlc.add %bias, %r : (tensor<4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// Left alone: an addend with a value per element (not a bias), weights that are not
// constant (the kernel would accumulate onto C, other bits), a product read twice, and a
// bias of zeros (canonicalization folds the Add away).
// CHECK-LABEL: func.func @not_a_bias
// CHECK-COUNT-4: dlc.add
func.func @not_a_bias(%x: tensor<3x2xf32>, %w: tensor<2x4xf32>, %bias: tensor<4xf32>, %full: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %c = dlc.constant dense<1.0> : tensor<2x4xf32>
  %g = dlc.gemm %x, %c {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %a = dlc.add %g, %full : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %h = dlc.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %b = dlc.add %h, %bias : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %k = dlc.gemm %x, %c {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %d = dlc.add %k, %bias : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %zeros = dlc.constant dense<0.0> : tensor<4xf32>
  %l = dlc.gemm %x, %c {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %e = dlc.add %l, %zeros : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %a, %b, %d, %k, %e : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// HardSwish as PyTorch exports it (HardSigmoid with alpha 1/6, beta 0.5, then a Mul), the
// HardSigmoid as imported: clip(1/6 * x + 0.5, 0, 1), its operands in either order.
// CHECK-LABEL: func.func @conv_hard_swish
func.func @conv_hard_swish(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: %[[A:.*]] = dlc.conv %arg0, %arg1 {dilations = {{.*}}, dlc.activation = "hard_swish"
  // CHECK: %[[B:.*]] = dlc.conv %arg0, %arg1 {dilations = {{.*}}, dlc.activation = "hard_swish"
  // CHECK-NOT: dlc.clip
  // CHECK-NOT: dlc.mul
  // CHECK: return %[[A]], %[[B]]
  %sixth = dlc.constant dense<0.166666672> : tensor<f32>
  %half = dlc.constant dense<0.5> : tensor<f32>
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %s = dlc.mul %sixth, %c : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %l = dlc.add %s, %half : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %g = dlc.clip %l {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %m = dlc.mul %c, %g : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %d = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %t = dlc.mul %d, %sixth : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %k = dlc.add %half, %t : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %h = dlc.clip %k {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %n = dlc.mul %h, %d : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %m, %n : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

// Another slope (Keras's hard_sigmoid, 0.2) is not HardSwish; a gate read elsewhere stays.
// CHECK-LABEL: func.func @not_hard_swish
func.func @not_hard_swish(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  // CHECK-NOT: dlc.activation
  // CHECK: dlc.clip
  // CHECK: dlc.clip
  // CHECK: return
  %slope = dlc.constant dense<0.2> : tensor<f32>
  %sixth = dlc.constant dense<0.166666672> : tensor<f32>
  %half = dlc.constant dense<0.5> : tensor<f32>
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %s = dlc.mul %slope, %c : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %l = dlc.add %s, %half : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %g = dlc.clip %l {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %m = dlc.mul %c, %g : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %d = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %t = dlc.mul %d, %sixth : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %k = dlc.add %half, %t : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %h = dlc.clip %k {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %n = dlc.mul %h, %d : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %m, %n, %h : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
