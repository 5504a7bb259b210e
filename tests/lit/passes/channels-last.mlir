// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-channels-last))' %s | FileCheck %s
// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-channels-last),canonicalize)' %s | FileCheck %s --check-prefix=FOLDED

// An inverted residual block (pointwise expand, depthwise, pointwise project with the input
// as residual): one transpose in, one out, none between the convolutions; the fused
// activations and the residual move along. (Border transposes move 3 x 288 elements; left
// channels-first, the block would forgo 864 + 1728 + 144 of savings.)
// CHECK-LABEL: func.func @inverted_residual
// CHECK: %[[IN:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[E:.*]] = dlc.conv %[[IN]], %{{.*}} {channels_last, {{.*}}dlc.activation = "clip"{{.*}} -> tensor<1x6x6x48xf32>
// CHECK: %[[D:.*]] = dlc.conv %[[E]], %{{.*}} {channels_last, {{.*}}group = 48 : i64{{.*}} -> tensor<1x6x6x48xf32>
// CHECK-NOT: dlc.transpose
// CHECK: %[[P:.*]] = dlc.conv %[[D]], %{{.*}} residual %[[S:.*]] {channels_last
// CHECK: %[[OUT:.*]] = dlc.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x8x6x6xf32>
// CHECK: return %[[OUT]]
func.func @inverted_residual(%x: tensor<1x8x6x6xf32>, %s: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %we = dlc.constant dense<0.5> : tensor<48x8x1x1xf32>
  %wd = dlc.constant dense<0.25> : tensor<48x1x3x3xf32>
  %wp = dlc.constant dense<0.125> : tensor<8x48x1x1xf32>
  %e = dlc.conv %x, %we {dilations = array<i64: 1, 1>, dlc.activation = "clip", dlc.activation_max = 6.0 : f32, dlc.activation_min = 0.0 : f32, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<48x8x1x1xf32>) -> tensor<1x48x6x6xf32>
  %d = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, group = 48 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x48x6x6xf32>, tensor<48x1x3x3xf32>) -> tensor<1x48x6x6xf32>
  %p = dlc.conv %d, %wp residual %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x48x6x6xf32>, tensor<8x48x1x1xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %p : tensor<1x8x6x6xf32>
}

// The same block on a 2x2 map: its border transposes move 3 x 32 elements against 96 + 192
// + 16 of savings: still switched. Not expanding, on a 3x3 map, the border moves 3 x 72
// against 36 + 72 + 36, and every partial switch cuts at least as much: it stays
// channels-first.
// CHECK-LABEL: func.func @border_cost
// CHECK: channels_last
// CHECK-LABEL: func.func @border_too_costly
// CHECK-NOT: channels_last
// CHECK: return
func.func @border_cost(%x: tensor<1x8x2x2xf32>, %s: tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32> {
  %we = dlc.constant dense<0.5> : tensor<48x8x1x1xf32>
  %wd = dlc.constant dense<0.25> : tensor<48x1x3x3xf32>
  %wp = dlc.constant dense<0.125> : tensor<8x48x1x1xf32>
  %e = dlc.conv %x, %we {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x2x2xf32>, tensor<48x8x1x1xf32>) -> tensor<1x48x2x2xf32>
  %d = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, group = 48 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x48x2x2xf32>, tensor<48x1x3x3xf32>) -> tensor<1x48x2x2xf32>
  %p = dlc.conv %d, %wp residual %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x48x2x2xf32>, tensor<8x48x1x1xf32>, tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  return %p : tensor<1x8x2x2xf32>
}
func.func @border_too_costly(%x: tensor<1x8x3x3xf32>, %s: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %we = dlc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %wd = dlc.constant dense<0.25> : tensor<8x1x3x3xf32>
  %e = dlc.conv %x, %we {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x3x3xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x3x3xf32>
  %d = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x3x3xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x3x3xf32>
  %p = dlc.conv %d, %we residual %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x3x3xf32>, tensor<8x8x1x1xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %p : tensor<1x8x3x3xf32>
}

// A depthwise conv between two transposes that undo its layout change (ConvNeXt's around
// LayerNorm): the pass adds one paid transpose and one free one; folded, one transpose
// is left where there were two.
// CHECK-LABEL: func.func @between_transposes
// CHECK: dlc.conv {{.*}}channels_last
// FOLDED-LABEL: func.func @between_transposes
// FOLDED: %[[IN:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// FOLDED-NEXT: %[[D:.*]] = dlc.conv %[[IN]], %{{.*}} {channels_last
// FOLDED-NEXT: return %[[D]]
func.func @between_transposes(%x: tensor<1x4x5x5xf32>) -> tensor<1x5x5x4xf32> {
  %w = dlc.constant dense<0.5> : tensor<4x1x3x3xf32>
  %d = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %t = dlc.transpose %d {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x5x5xf32>) -> tensor<1x5x5x4xf32>
  return %t : tensor<1x5x5x4xf32>
}

// Left alone: a lone depthwise conv (its border moves twice its output), pointwise convs
// without a depthwise one, a 3x3 conv over several channels, a conv whose weight is an
// argument, a channel multiplier of 2.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: channels_last
// CHECK-NOT: dlc.transpose
// CHECK: return
func.func @left_alone(%x: tensor<1x4x5x5xf32>, %wArg: tensor<4x1x3x3xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x4x5x5xf32>, tensor<1x8x5x5xf32>) {
  %wd = dlc.constant dense<0.5> : tensor<4x1x3x3xf32>
  %wp = dlc.constant dense<0.5> : tensor<4x4x1x1xf32>
  %w3 = dlc.constant dense<0.5> : tensor<4x4x3x3xf32>
  %w2 = dlc.constant dense<0.5> : tensor<8x1x3x3xf32>
  %d = dlc.conv %x, %wd {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %p1 = dlc.conv %x, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %p2 = dlc.conv %p1, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %c3 = dlc.conv %x, %w3 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %da = dlc.conv %x, %wArg {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %m2 = dlc.conv %x, %w2 {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32>
  return %d, %p2, %c3, %da, %m2 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x4x5x5xf32>, tensor<1x8x5x5xf32>
}

// A group result also used outside it: the group keeps it channels-last and transposes it
// back once for the outside use (border 100 + 400 + 100 elements, depthwise outputs 800).
// CHECK-LABEL: func.func @used_outside
// CHECK: %[[IN:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[E:.*]] = dlc.conv %[[IN]], %{{.*}} {channels_last
// CHECK-NEXT: %[[D1:.*]] = dlc.conv %[[E]], %{{.*}} {channels_last
// CHECK-NEXT: %[[BACK:.*]] = dlc.transpose %[[D1]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT: %[[D2:.*]] = dlc.conv %[[D1]], %{{.*}} {channels_last
// CHECK-NEXT: %[[Q:.*]] = dlc.conv %[[D2]], %{{.*}} {channels_last
// CHECK-NEXT: %[[QOUT:.*]] = dlc.transpose %[[Q]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT: return %[[BACK]], %[[QOUT]]
func.func @used_outside(%x: tensor<1x4x5x5xf32>) -> (tensor<1x16x5x5xf32>, tensor<1x4x5x5xf32>) {
  %we = dlc.constant dense<0.5> : tensor<16x4x1x1xf32>
  %wd = dlc.constant dense<0.5> : tensor<16x1x3x3xf32>
  %wp = dlc.constant dense<0.5> : tensor<4x16x1x1xf32>
  %e = dlc.conv %x, %we {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x5x5xf32>
  %d1 = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x5x5xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x5x5xf32>
  %d2 = dlc.conv %d1, %wd {dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x5x5xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x5x5xf32>
  %q = dlc.conv %d2, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x5x5xf32>, tensor<4x16x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %d1, %q : tensor<1x16x5x5xf32>, tensor<1x4x5x5xf32>
}

// A block with squeeze-and-excitation (EfficientNet's, MobileNetV3's): the pool, the gate's
// convolutions and activation and the Mul switch with the convolutions, so the block has no
// transpose inside. The pool becomes a mean over the middle axes; the gate's [1, 1, 1, C]
// vectors have a channels-first value's bytes.
// CHECK-LABEL: func.func @squeeze_excitation
// CHECK: %[[IN:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[E:.*]] = dlc.conv %[[IN]], {{.*}}channels_last{{.*}} -> tensor<1x6x6x32xf32>
// CHECK-NEXT: %[[D:.*]] = dlc.conv %[[E]], {{.*}}channels_last{{.*}} -> tensor<1x6x6x32xf32>
// CHECK-NEXT: %[[G:.*]] = dlc.reduce_mean %[[D]] {axes = array<i64: 1, 2>} : (tensor<1x6x6x32xf32>) -> tensor<1x1x1x32xf32>
// CHECK-NEXT: %[[S1:.*]] = dlc.conv %[[G]], {{.*}}channels_last{{.*}} -> tensor<1x1x1x4xf32>
// CHECK-NEXT: %[[S2:.*]] = dlc.conv %[[S1]], {{.*}}channels_last{{.*}} -> tensor<1x1x1x32xf32>
// CHECK-NEXT: %[[GATE:.*]] = dlc.sigmoid %[[S2]] : (tensor<1x1x1x32xf32>) -> tensor<1x1x1x32xf32>
// CHECK-NEXT: %[[M:.*]] = dlc.mul %[[D]], %[[GATE]] : (tensor<1x6x6x32xf32>, tensor<1x1x1x32xf32>) -> tensor<1x6x6x32xf32>
// CHECK-NEXT: %[[P:.*]] = dlc.conv %[[M]], {{.*}}channels_last{{.*}} -> tensor<1x6x6x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = dlc.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT: return %[[OUT]]
func.func @squeeze_excitation(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %we = dlc.constant dense<0.5> : tensor<32x8x1x1xf32>
  %wd = dlc.constant dense<0.25> : tensor<32x1x3x3xf32>
  %w1 = dlc.constant dense<0.125> : tensor<4x32x1x1xf32>
  %w2 = dlc.constant dense<0.125> : tensor<32x4x1x1xf32>
  %wp = dlc.constant dense<0.125> : tensor<8x32x1x1xf32>
  %e = dlc.conv %x, %we {dilations = array<i64: 1, 1>, dlc.activation = "silu", group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<32x8x1x1xf32>) -> tensor<1x32x6x6xf32>
  %d = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, dlc.activation = "silu", group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x6x6xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x6x6xf32>
  %g = dlc.global_avg_pool %d : (tensor<1x32x6x6xf32>) -> tensor<1x32x1x1xf32>
  %s1 = dlc.conv %g, %w1 {dilations = array<i64: 1, 1>, dlc.activation = "relu", group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x1x1xf32>, tensor<4x32x1x1xf32>) -> tensor<1x4x1x1xf32>
  %s2 = dlc.conv %s1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x1xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x1x1xf32>
  %gate = dlc.sigmoid %s2 : (tensor<1x32x1x1xf32>) -> tensor<1x32x1x1xf32>
  %m = dlc.mul %d, %gate : (tensor<1x32x6x6xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x6x6xf32>
  %p = dlc.conv %m, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x6x6xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x6x6xf32>
  return %p : tensor<1x8x6x6xf32>
}

// Around a convolution that stays channels-first (RegNetY's grouped 3x3), the gate's
// pointwise convolutions over one position still switch: reshapes, no transposes, change
// their layout; the Mul of the full map stays channels-first.
// CHECK-LABEL: func.func @gate_of_channels_first_block
// CHECK: %[[G:.*]] = dlc.global_avg_pool
// CHECK-NEXT: %[[GL:.*]] = dlc.reshape %[[G]] : (tensor<1x16x1x1xf32>) -> tensor<1x1x1x16xf32>
// CHECK-NEXT: %[[S1:.*]] = dlc.conv %[[GL]], {{.*}}channels_last{{.*}} -> tensor<1x1x1x4xf32>
// CHECK-NEXT: %[[S2:.*]] = dlc.conv %[[S1]], {{.*}}channels_last{{.*}} -> tensor<1x1x1x16xf32>
// CHECK-NEXT: %[[GATE:.*]] = dlc.sigmoid %[[S2]] : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
// CHECK-NEXT: %[[GF:.*]] = dlc.reshape %[[GATE]] : (tensor<1x1x1x16xf32>) -> tensor<1x16x1x1xf32>
// CHECK-NEXT: dlc.mul %{{.*}}, %[[GF]] : (tensor<1x16x6x6xf32>, tensor<1x16x1x1xf32>)
// CHECK-NOT: dlc.transpose
// CHECK: return
func.func @gate_of_channels_first_block(%x: tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %wg = dlc.constant dense<0.5> : tensor<16x4x3x3xf32>
  %w1 = dlc.constant dense<0.125> : tensor<4x16x1x1xf32>
  %w2 = dlc.constant dense<0.125> : tensor<16x4x1x1xf32>
  %c = dlc.conv %x, %wg {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x6x6xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x6x6xf32>
  %g = dlc.global_avg_pool %c : (tensor<1x16x6x6xf32>) -> tensor<1x16x1x1xf32>
  %s1 = dlc.conv %g, %w1 {dilations = array<i64: 1, 1>, dlc.activation = "relu", group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x1x1xf32>, tensor<4x16x1x1xf32>) -> tensor<1x4x1x1xf32>
  %s2 = dlc.conv %s1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x1xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x1x1xf32>
  %gate = dlc.sigmoid %s2 : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  %m = dlc.mul %c, %gate : (tensor<1x16x6x6xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x6x6xf32>
  return %m : tensor<1x16x6x6xf32>
}

// Nearest upsampling before depthwise convolutions (the importer's gathers of columns and
// of rows, as in FPN necks): the gathers switch with the convs, their axes becoming 2 and 1,
// so the transpose moves the small input. A gather across channels stays channels-first.
// CHECK-LABEL: func.func @upsample_then_depthwise
// CHECK: dlc.transpose %arg0 {{.*}} -> tensor<1x4x4x16xf32>
// CHECK: dlc.gather {{.*}}axis = 2 : i64{{.*}} -> tensor<1x4x8x16xf32>
// CHECK-NEXT: dlc.gather {{.*}}axis = 1 : i64{{.*}} -> tensor<1x8x8x16xf32>
// CHECK-NEXT: dlc.conv {{.*}}channels_last{{.*}} -> tensor<1x8x8x16xf32>
// CHECK-NEXT: dlc.conv {{.*}}channels_last{{.*}} -> tensor<1x8x8x16xf32>
// CHECK-NEXT: dlc.transpose
// CHECK-NEXT: dlc.gather {{.*}}axis = 1 : i64{{.*}} -> tensor<1x2x8x8xf32>
func.func @upsample_then_depthwise(%x: tensor<1x16x4x4xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x2x8x8xf32>) {
  %wd = dlc.constant dense<0.25> : tensor<16x1x3x3xf32>
  %taps = dlc.constant dense<[0, 0, 1, 1, 2, 2, 3, 3]> : tensor<8xi64>
  %channels = dlc.constant dense<[0, 5]> : tensor<2xi64>
  %w = dlc.gather %x, %taps {axis = 3 : i64} : (tensor<1x16x4x4xf32>, tensor<8xi64>) -> tensor<1x16x4x8xf32>
  %h = dlc.gather %w, %taps {axis = 2 : i64} : (tensor<1x16x4x8xf32>, tensor<8xi64>) -> tensor<1x16x8x8xf32>
  %d = dlc.conv %h, %wd {dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  %e = dlc.conv %d, %wd {dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  %c = dlc.gather %e, %channels {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<2xi64>) -> tensor<1x2x8x8xf32>
  return %e, %c : tensor<1x16x8x8xf32>, tensor<1x2x8x8xf32>
}

// A part of a group switches where the whole would not pay (ConvNeXt's blocks): the
// residual Add's two channels-first inputs and its use outside would move 3 x 100 elements
// for the depthwise conv's 100; the conv alone moves its input (100) and its output's
// transpose to channels-last cancels: it switches, the Add stays channels-first.
// CHECK-LABEL: func.func @part_of_group
// CHECK: %[[A:.*]] = dlc.add %arg0, %arg1 : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: %[[IN:.*]] = dlc.transpose %[[A]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT: dlc.conv %[[IN]], %{{.*}} {channels_last
// FOLDED-LABEL: func.func @part_of_group
// FOLDED: dlc.add
// FOLDED-NEXT: dlc.transpose
// FOLDED-NEXT: dlc.conv {{.*}}channels_last
// FOLDED-NEXT: return
func.func @part_of_group(%p: tensor<1x4x5x5xf32>, %q: tensor<1x4x5x5xf32>) -> (tensor<1x5x5x4xf32>, tensor<1x4x5x5xf32>) {
  %w = dlc.constant dense<0.5> : tensor<4x1x3x3xf32>
  %a = dlc.add %p, %q : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %d = dlc.conv %a, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %t = dlc.transpose %d {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x5x5xf32>) -> tensor<1x5x5x4xf32>
  return %t, %a : tensor<1x5x5x4xf32>, tensor<1x4x5x5xf32>
}

// A first layer over an image's three channels before a switched group: it reads the image's
// planes as they are and writes its result channels-last (planar_input), so neither its
// input nor its result is transposed; its activation stays fused.
// CHECK-LABEL: func.func @first_layer
// CHECK-NOT: dlc.transpose
// CHECK: %[[S:.*]] = dlc.conv %arg0, %{{.*}} {channels_last, {{.*}}dlc.activation = "hard_swish"{{.*}}planar_input{{.*}} : (tensor<1x3x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NOT: dlc.transpose
// CHECK: %[[D:.*]] = dlc.conv %[[S]], %{{.*}} {channels_last
// CHECK: dlc.conv %[[D]], %{{.*}} residual %[[S]] {channels_last
// CHECK: dlc.transpose
// CHECK-NEXT: return
func.func @first_layer(%x: tensor<1x3x16x16xf32>) -> tensor<1x16x8x8xf32> {
  %ws = dlc.constant dense<0.5> : tensor<16x3x3x3xf32>
  %wd = dlc.constant dense<0.25> : tensor<16x1x3x3xf32>
  %wp = dlc.constant dense<0.125> : tensor<16x16x1x1xf32>
  %s = dlc.conv %x, %ws {dilations = array<i64: 1, 1>, dlc.activation = "hard_swish", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  %d = dlc.conv %s, %wd {dilations = array<i64: 1, 1>, group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  %p = dlc.conv %d, %wp residual %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %p : tensor<1x16x8x8xf32>
}

// The group's cut counts a first layer's result as free: one depthwise conv (saving its 64
// outputs) whose result is transposed back (64) switches, a tie, where transposing its input
// too would not pay. Read channels-first as well (returned), the first layer keeps its
// layout and the group its transpose in. Over eight channels it is no first layer.
// CHECK-LABEL: func.func @first_layer_border_free
// CHECK: dlc.conv %arg0, {{.*}}planar_input
// CHECK-LABEL: func.func @first_layer_read_channels_first
// CHECK-NOT: planar_input
// CHECK: %[[S:.*]] = dlc.conv %arg0
// CHECK: dlc.transpose %[[S]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK-LABEL: func.func @eight_channels
// CHECK-NOT: planar_input
// CHECK: return
func.func @first_layer_border_free(%x: tensor<1x3x16x16xf32>) -> tensor<1x4x4x4xf32> {
  %ws = dlc.constant dense<0.5> : tensor<4x3x3x3xf32>
  %wd = dlc.constant dense<0.25> : tensor<4x1x3x3xf32>
  %s = dlc.conv %x, %ws {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 4, 4>} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %d = dlc.conv %s, %wd {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %d : tensor<1x4x4x4xf32>
}
func.func @first_layer_read_channels_first(%x: tensor<1x3x16x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %ws = dlc.constant dense<0.5> : tensor<16x3x3x3xf32>
  %wd = dlc.constant dense<0.25> : tensor<64x1x3x3xf32>
  %wp = dlc.constant dense<0.125> : tensor<64x16x1x1xf32>
  %wq = dlc.constant dense<0.125> : tensor<16x64x1x1xf32>
  %s = dlc.conv %x, %ws {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  %e = dlc.conv %s, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<64x16x1x1xf32>) -> tensor<1x64x8x8xf32>
  %d = dlc.conv %e, %wd {dilations = array<i64: 1, 1>, group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x8x8xf32>
  %p = dlc.conv %d, %wq {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x8x8xf32>
  return %p, %s : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}
func.func @eight_channels(%x: tensor<1x8x16x16xf32>) -> tensor<1x4x4x4xf32> {
  %ws = dlc.constant dense<0.5> : tensor<4x8x3x3xf32>
  %wd = dlc.constant dense<0.25> : tensor<4x1x3x3xf32>
  %s = dlc.conv %x, %ws {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 4, 4>} : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32>
  %d = dlc.conv %s, %wd {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %d : tensor<1x4x4x4xf32>
}

// A first layer read by two groups is free to neither (each would leave the other's reads
// channels-first): the depthwise conv alone saves its 64 outputs against 64 + 64 for its
// input and output transposes, the pointwise one 32 against 128, so both stay.
// CHECK-LABEL: func.func @first_layer_readers_together
// CHECK-NOT: channels_last
// CHECK-NOT: dlc.transpose
// CHECK: return
func.func @first_layer_readers_together(%x: tensor<1x3x16x16xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %ws = dlc.constant dense<0.5> : tensor<4x3x3x3xf32>
  %wd = dlc.constant dense<0.25> : tensor<4x1x3x3xf32>
  %wp = dlc.constant dense<0.125> : tensor<4x4x1x1xf32>
  %s = dlc.conv %x, %ws {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 4, 4>} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %d = dlc.conv %s, %wd {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %p = dlc.conv %s, %wp {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %d, %p : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
