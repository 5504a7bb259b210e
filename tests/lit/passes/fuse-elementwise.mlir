// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-fuse-elementwise))' %s | FileCheck %s

// GELU as the importer spells it: five ops, one input, two scalar constants read by broadcast.
// CHECK-LABEL: func.func @gelu
func.func @gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[F:.*]] = dlc.fused_elementwise %arg0, %{{.*}}, %{{.*}}, %{{.*}} {steps = ["Mul 0 1", "Erf 4", "Mul 2 0", "Add 3 5", "Mul 6 7"]} : (tensor<2x8xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK-NOT: dlc.mul
  // CHECK-NOT: dlc.erf
  // CHECK: return %[[F]]
  %r = dlc.constant dense<0.707106769> : tensor<f32>
  %h = dlc.constant dense<0.5> : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %s = dlc.mul %x, %r : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = dlc.erf %s : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %half = dlc.mul %h, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = dlc.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = dlc.mul %half, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// Swish reads its input twice; one input slot serves both reads.
// CHECK-LABEL: func.func @swish
func.func @swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: dlc.fused_elementwise %arg0 {steps = ["Sigmoid 0", "Mul 0 1"]}
  %s = dlc.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %m = dlc.mul %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// Clip and leaky relu carry their parameters; a per-channel [C, 1, 1] operand is an input.
// CHECK-LABEL: func.func @params_and_channels
func.func @params_and_channels(%x: tensor<1x3x2x2xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  // CHECK: dlc.fused_elementwise %arg0, %arg1 {steps = ["Add 0 1", "Clip 2 0 6", "LeakyRelu 3 0.00999999978"]}
  %a = dlc.add %x, %b : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %c = dlc.clip %a {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %l = dlc.leaky_relu %c {alpha = 0.01 : f32} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  return %l : tensor<1x3x2x2xf32>
}

// A value returned as well as used stays outside: the chain starts after it.
// CHECK-LABEL: func.func @shared_value
func.func @shared_value(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[E:.*]] = dlc.exp %arg0
  // CHECK: %[[F:.*]] = dlc.fused_elementwise %[[E]] {steps = ["Neg 0", "Abs 1"]}
  // CHECK: return %[[E]], %[[F]]
  %e = dlc.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = dlc.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  %a = dlc.abs %n : (tensor<4xf32>) -> tensor<4xf32>
  return %e, %a : tensor<4xf32>, tensor<4xf32>
}

// Both branches of a diamond join once the add that reads them both has.
// CHECK-LABEL: func.func @diamond
func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: dlc.fused_elementwise %arg0 {steps = ["Exp 0", "Sin 1", "Cos 1", "Add 2 3"]}
  %e = dlc.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = dlc.sin %e : (tensor<4xf32>) -> tensor<4xf32>
  %c = dlc.cos %e : (tensor<4xf32>) -> tensor<4xf32>
  %a = dlc.add %s, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// [2, 1, 3] onto [2, 4, 3] needs a strided walk: that add stays out, the neg after it is alone.
// Integer ops, single ops and float64 ops are left alone.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<2x4x3xf32>, %y: tensor<2x1x3xf32>, %i: tensor<4xi32>, %d: tensor<4xf64>) -> (tensor<2x4x3xf32>, tensor<4xi32>, tensor<4xf64>) {
  // CHECK-NOT: dlc.fused_elementwise
  // CHECK: dlc.add %arg0, %arg1
  // CHECK: dlc.neg
  // CHECK: dlc.add %arg2, %arg2
  // CHECK: dlc.mul
  // CHECK: dlc.exp %arg3
  // CHECK: dlc.neg
  %a = dlc.add %x, %y : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  %n = dlc.neg %a : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %s = dlc.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %m = dlc.mul %s, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %e = dlc.exp %d : (tensor<4xf64>) -> tensor<4xf64>
  %f = dlc.neg %e : (tensor<4xf64>) -> tensor<4xf64>
  return %n, %m, %f : tensor<2x4x3xf32>, tensor<4xi32>, tensor<4xf64>
}

// Operands broadcast onto a bigger shape break the chain: the sub's operands have the
// result's type only after broadcasting, so the exp of the small value stays its own op.
// CHECK-LABEL: func.func @shape_change
func.func @shape_change(%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[E:.*]] = dlc.exp %arg0
  // CHECK: dlc.fused_elementwise %arg1, %[[E]] {steps = ["Sub 0 1", "Relu 2"]}
  %e = dlc.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %s = dlc.sub %y, %e : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = dlc.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// A training step updates the weight in place after its last reader, the mul: fused, the mul
// would read the weight at the exp's place, after the update. The chain starts after it.
// CHECK-LABEL: func.func @state_update_between
func.func @state_update_between(%x: tensor<16xf32>, %w: tensor<16xf32> {dlc.state}, %g: tensor<16xf32>, %h: tensor<4xf32>) -> tensor<16xf32> {
  // CHECK: %[[M:.*]] = dlc.mul %arg0, %arg1
  // CHECK: dlc.sgd_update
  // CHECK: dlc.fused_elementwise %[[M]] {steps = ["Exp 0", "Neg 1"]}
  %m = dlc.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  dlc.sgd_update %w, %g, %h {momentum = 0.0 : f32, nesterov = false, weight_decay = 0.0 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<4xf32>
  %e = dlc.exp %m : (tensor<16xf32>) -> tensor<16xf32>
  %n = dlc.neg %e : (tensor<16xf32>) -> tensor<16xf32>
  return %n : tensor<16xf32>
}
