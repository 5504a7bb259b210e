// RUN: dlc-opt --split-input-file --verify-diagnostics %s

func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand shapes [2,3] and [4] do not broadcast}}
  %r = dlc.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @bad_matmul(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dims differ: 3 vs 4}}
  %r = dlc.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

func.func @bad_conv_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{result shape [1,4,8,8] should be [1,4,6,6]}}
  %r = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

func.func @bad_group(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{channels do not match}}
  %r = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

func.func @bad_residual(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{residual must have the result's type}}
  %y = dlc.conv %x, %w residual %r {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @unknown_activation(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{unknown fused activation "gelu"}}
  %g = dlc.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false, dlc.activation = "gelu"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

func.func @clip_without_bounds(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{unknown fused activation "clip" (or its float parameter is missing)}}
  %g = dlc.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false, dlc.activation = "clip"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

func.func @bad_reshape(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{element count changes from 6 to 7}}
  %r = dlc.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}

// -----

func.func @bad_concat(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{result shape [5,4] should be [5,3]}}
  %r = dlc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

func.func @bad_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{perm is not a permutation}}
  %r = dlc.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @bad_reduce(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result shape [2,3] should be [2,1] or [2]}}
  %r = dlc.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// 2^31 x 2^31 floats: 2^64 bytes, which wraps around int64 unless checked.
func.func @tensor_over_size_limit(%a: tensor<2147483648x2147483648xf32>) -> tensor<2147483648x2147483648xf32> {
  // expected-error @+1 {{is too large: above dlc's limit of 1 TiB (2^40 bytes)}}
  %r = dlc.relu %a : (tensor<2147483648x2147483648xf32>) -> tensor<2147483648x2147483648xf32>
  return %r : tensor<2147483648x2147483648xf32>
}

// -----

// 2^38 floats = 2^40 bytes: exactly at the limit, accepted.
func.func @tensor_at_size_limit(%a: tensor<262144x1048576xf32>) -> tensor<262144x1048576xf32> {
  %r = dlc.relu %a : (tensor<262144x1048576xf32>) -> tensor<262144x1048576xf32>
  return %r : tensor<262144x1048576xf32>
}

// -----

func.func @tensor_just_over_size_limit(%a: tensor<262145x1048576xf32>) -> tensor<262145x1048576xf32> {
  // expected-error @+1 {{is too large}}
  %r = dlc.relu %a : (tensor<262145x1048576xf32>) -> tensor<262145x1048576xf32>
  return %r : tensor<262145x1048576xf32>
}

// -----

// Negative steps walk backwards from the start and stay valid.
func.func @slice_backwards(%x: tensor<10xf32>) -> tensor<5xf32> {
  %0 = dlc.slice %x {starts = array<i64: 9>, steps = array<i64: -2>} : (tensor<10xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @slice_backwards_too_far(%x: tensor<10xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{slice leaves dim 0 bounds}}
  %0 = dlc.slice %x {starts = array<i64: 9>, steps = array<i64: -2>} : (tensor<10xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// A bit cast (a reshape to another element type) keeps the element width.
func.func @bad_bit_cast(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{element width changes}}
  %r = dlc.reshape %x : (tensor<4xf32>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

// float8 only travels: casts take it, arithmetic does not.
func.func @float8_add(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %r = dlc.add %x, %x : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %r : tensor<4xf8E4M3FN>
}

// -----

// Integer products (MatMulInteger) take int32 on both sides.
func.func @mixed_matmul(%a: tensor<2x3xi32>, %b: tensor<3x4xf32>) -> tensor<2x4xi32> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %r = dlc.matmul %a, %b : (tensor<2x3xi32>, tensor<3x4xf32>) -> tensor<2x4xi32>
  return %r : tensor<2x4xi32>
}

// -----

// Unary ops, softmax, reductions and arg-reductions run on float32 and float64; not on integers.
func.func @float64_kernels(%x: tensor<2x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2xf64>, tensor<2xi64>) {
  %0 = dlc.exp %x : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = dlc.softmax %0 {axis = 1 : i64, log = false} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %2 = dlc.reduce_sum %1 {axes = array<i64: 1>} : (tensor<2x3xf64>) -> tensor<2xf64>
  %3 = dlc.arg_max %1 {axis = 1 : i64, select_last_index = false} : (tensor<2x3xf64>) -> tensor<2xi64>
  return %0, %1, %2, %3 : tensor<2x3xf64>, tensor<2x3xf64>, tensor<2xf64>, tensor<2xi64>
}

// -----

func.func @unary_on_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float values}}
  %0 = dlc.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @fused_unknown_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{step 1 ('Gelu 1'): 'Gelu' is not a float32 unary or binary kind, Clip or LeakyRelu}}
  %r = dlc.fused_elementwise %x {steps = ["Exp 0", "Gelu 1"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_integer_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{step 0 ('Xor 0 0'): 'Xor' is not a float32 unary or binary kind}}
  %r = dlc.fused_elementwise %x {steps = ["Xor 0 0"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_reads_later_slot(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{step 0 ('Add 0 1'): reads '1', not an input or an earlier step}}
  %r = dlc.fused_elementwise %x {steps = ["Add 0 1", "Exp 1"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_missing_parameter(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{step 0 ('Clip 0 1'): takes 1 slot(s) and 2 parameter(s)}}
  %r = dlc.fused_elementwise %x {steps = ["Clip 0 1"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_bad_parameter(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{step 0 ('LeakyRelu 0 x'): parameter 'x' is not a number}}
  %r = dlc.fused_elementwise %x {steps = ["LeakyRelu 0 x"]} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_no_steps(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no steps}}
  %r = dlc.fused_elementwise %x {steps = []} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fused_strided_input(%x: tensor<2x4x3xf32>, %y: tensor<2x1x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{input 1 does not broadcast onto the result with its non-1 dims adjacent}}
  %r = dlc.fused_elementwise %x, %y {steps = ["Add 0 1"]} : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// -----

func.func @channels_last_argument_weight(%x: tensor<1x5x5x4xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x3x3x4xf32> {
  // expected-error @+1 {{channels_last needs a constant weight (laid out at compile time)}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x3x3x4xf32>
  return %r : tensor<1x3x3x4xf32>
}

// -----

func.func @channels_last_full_conv(%x: tensor<1x5x5x4xf32>) -> tensor<1x3x3x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x4x3x3xf32>
  // expected-error @+1 {{channels_last applies only to depthwise and pointwise convolutions}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x3x3x8xf32>
  return %r : tensor<1x3x3x8xf32>
}

// -----

func.func @channels_last_result_shape(%x: tensor<1x5x5x4xf32>) -> tensor<1x4x3x3xf32> {
  %w = dlc.constant dense<0.5> : tensor<4x1x3x3xf32>
  // expected-error @+1 {{result shape [1,4,3,3] should be [1,3,3,4]}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %r : tensor<1x4x3x3xf32>
}

// -----

func.func @planar_input_channels_first(%x: tensor<1x3x6x6xf32>) -> tensor<1x8x3x3xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x3x3x3xf32>
  // expected-error @+1 {{planar_input needs channels_last (it keeps only the input planar)}}
  %r = dlc.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, planar_input, strides = array<i64: 2, 2>} : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %r : tensor<1x8x3x3xf32>
}

// -----

func.func @planar_input_many_channels(%x: tensor<1x5x6x6xf32>) -> tensor<1x3x3x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x5x3x3xf32>
  // expected-error @+1 {{planar_input applies only to 2-d convolutions of one group over at most 4 input channels}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, planar_input, strides = array<i64: 2, 2>} : (tensor<1x5x6x6xf32>, tensor<8x5x3x3xf32>) -> tensor<1x3x3x8xf32>
  return %r : tensor<1x3x3x8xf32>
}

// -----

func.func @planar_input_result_shape(%x: tensor<1x3x6x6xf32>) -> tensor<1x8x3x3xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x3x3x3xf32>
  // expected-error @+1 {{result shape [1,8,3,3] should be [1,3,3,8]}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, planar_input, strides = array<i64: 2, 2>} : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %r : tensor<1x8x3x3xf32>
}

// -----

func.func @planar_input_scale(%x: tensor<1x3x6x6xf32>, %s: tensor<1x3x1x1xf32>) -> tensor<1x6x6x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x3x1x1xf32>
  // expected-error @+1 {{input_scale does not apply with planar_input (its kernel takes none)}}
  %r = dlc.conv %x, %w input_scale %s {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, planar_input, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<8x3x1x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

func.func @input_scale_channels_first(%x: tensor<1x4x5x5xf32>, %s: tensor<1x1x1x4xf32>) -> tensor<1x8x5x5xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x4x1x1xf32>
  // expected-error @+1 {{input_scale needs a pointwise convolution of one group over channels, and shape [1,4,1,1]}}
  %r = dlc.conv %x, %w input_scale %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>, tensor<1x1x1x4xf32>) -> tensor<1x8x5x5xf32>
  return %r : tensor<1x8x5x5xf32>
}

// -----

func.func @input_scale_strided(%x: tensor<1x4x5x5xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<1x8x3x3xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x4x1x1xf32>
  // expected-error @+1 {{input_scale needs a pointwise convolution of one group over channels, and shape [1,4,1,1]}}
  %r = dlc.conv %x, %w input_scale %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  return %r : tensor<1x8x3x3xf32>
}

// -----

func.func @input_scale_one_channel(%x: tensor<1x1x5x5xf32>, %s: tensor<1x1x1x1xf32>) -> tensor<1x8x5x5xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x1x1x1xf32>
  // expected-error @+1 {{input_scale needs a pointwise convolution of one group over channels, and shape [1,1,1,1]}}
  %r = dlc.conv %x, %w input_scale %s {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<8x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x8x5x5xf32>
  return %r : tensor<1x8x5x5xf32>
}

// -----

func.func @input_scale_depthwise(%x: tensor<1x5x5x4xf32>, %s: tensor<1x1x1x4xf32>) -> tensor<1x3x3x4xf32> {
  %w = dlc.constant dense<0.5> : tensor<4x1x3x3xf32>
  // expected-error @+1 {{input_scale needs a pointwise convolution of one group over channels, and shape [1,1,1,4]}}
  %r = dlc.conv %x, %w input_scale %s {channels_last, dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<4x1x3x3xf32>, tensor<1x1x1x4xf32>) -> tensor<1x3x3x4xf32>
  return %r : tensor<1x3x3x4xf32>
}

// -----

func.func @input_scale_shape(%x: tensor<1x5x5x4xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<1x5x5x8xf32> {
  %w = dlc.constant dense<0.5> : tensor<8x4x1x1xf32>
  // expected-error @+1 {{input_scale needs a pointwise convolution of one group over channels, and shape [1,1,1,4]}}
  %r = dlc.conv %x, %w input_scale %s {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<8x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x5x5x8xf32>
  return %r : tensor<1x5x5x8xf32>
}

// -----

func.func @channels_last_volume(%x: tensor<1x2x5x5x4xf32>) -> tensor<1x2x3x3x4xf32> {
  %w = dlc.constant dense<0.5> : tensor<4x1x1x3x3xf32>
  // expected-error @+1 {{channels_last needs 2 spatial dims, got rank 5}}
  %r = dlc.conv %x, %w {channels_last, dilations = array<i64: 1, 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x2x5x5x4xf32>, tensor<4x1x1x3x3xf32>) -> tensor<1x2x3x3x4xf32>
  return %r : tensor<1x2x3x3x4xf32>
}

// -----

func.func @roi_align_empty_map(%x: tensor<1x2x0x4xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x2x2xf32> {
  // expected-error @+1 {{input [1,2,0,4] has no pixels to sample}}
  %r = dlc.roi_align %x, %rois, %b {half_pixel = true, max = false, sampling_ratio = 0 : i64, spatial_scale = 1.0 : f32} : (tensor<1x2x0x4xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x2x2xf32>
  return %r : tensor<3x2x2x2xf32>
}

// -----

func.func @attention_depths(%q: tensor<2x10x8xf32>, %k: tensor<2x6x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{query and keys' depths differ: 8 vs 6}}
  %r = dlc.attention %q, %k, %v {divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x6x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_heads(%q: tensor<2x10x8xf32>, %k: tensor<1x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{query, keys and values must have the same leading dims}}
  %r = dlc.attention %q, %k, %v {divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<1x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_bias(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>, %b: tensor<2x10x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{bias [2,10,4] does not broadcast to the scores [2,10,12]}}
  %r = dlc.attention %q, %k, %v, %b {divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>, tensor<2x10x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_result(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x12xf32> {
  // expected-error @+1 {{result shape [2,10,12] should be [2,10,4]}}
  %r = dlc.attention %q, %k, %v {divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x12xf32>
  return %r : tensor<2x10x12xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<5x8xf32>, %g: tensor<5x1xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{scale [5,1] must hold the last dim's 8 elements}}
  %r = dlc.layer_norm %x, %g {epsilon = 1.0e-5 : f32, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<5x8xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<5x8xf32>, %b: tensor<2x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{bias [2,8] must hold the last dim's 8 elements}}
  %r = dlc.layer_norm %x, %b {epsilon = 1.0e-5 : f32, operandSegmentSizes = array<i32: 1, 0, 1>} : (tensor<5x8xf32>, tensor<2x8xf32>) -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<5x8xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{result shape [5,4] should be [5,8]}}
  %r = dlc.layer_norm %x {epsilon = 1.0e-5 : f32, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<5x8xf32>) -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

func.func @global_pool_keeps_spatial_dims(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x2x1xf32> {
  // expected-error @+1 {{result shape [1,3,2,1] should be [1,3,1,1]}}
  %g = dlc.global_avg_pool %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x1xf32>
  return %g : tensor<1x3x2x1xf32>
}

// -----

func.func @global_pool_grad_of_unpooled(%g: tensor<1x3x2x1xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{gradient shape should be [1,3,1,1]}}
  %x = dlc.global_avg_pool_grad %g : (tensor<1x3x2x1xf32>) -> tensor<1x3x4x4xf32>
  return %x : tensor<1x3x4x4xf32>
}

// -----

func.func @attention_view_missing(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{views need `sizes` [S, D, T, E], a view of batch rank + 3 entries for query, keys, values and output, and one for the bias exactly when there is a bias}}
  %r = dlc.attention %q, %k, %v {batch = array<i64: 2>, sizes = array<i64: 10, 8, 12, 4>, query_view = array<i64: 0, 80, 8, 1>, keys_view = array<i64: 0, 96, 12, 1>, values_view = array<i64: 0, 48, 4, 1>, divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_view_bounds(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{keys view reaches past its 192 elements}}
  %r = dlc.attention %q, %k, %v {batch = array<i64: 2>, sizes = array<i64: 10, 8, 12, 4>, query_view = array<i64: 0, 80, 8, 1>, keys_view = array<i64: 1, 96, 12, 1>, values_view = array<i64: 0, 48, 4, 1>, output_view = array<i64: 0, 40, 4, 1>, divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_view_rows(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{the query's, values' and result's rows must be contiguous}}
  %r = dlc.attention %q, %k, %v {batch = array<i64: 2>, sizes = array<i64: 10, 8, 12, 4>, query_view = array<i64: 0, 80, 1, 10>, keys_view = array<i64: 0, 96, 12, 1>, values_view = array<i64: 0, 48, 4, 1>, output_view = array<i64: 0, 40, 4, 1>, divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @attention_view_output(%q: tensor<2x10x8xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xf32> {
  // expected-error @+1 {{the result's view must cover each of its elements once}}
  %r = dlc.attention %q, %k, %v {batch = array<i64: 2>, sizes = array<i64: 10, 8, 12, 4>, query_view = array<i64: 0, 80, 8, 1>, keys_view = array<i64: 0, 96, 12, 1>, values_view = array<i64: 0, 48, 4, 1>, output_view = array<i64: 0, 0, 4, 1>, divide = false, scale = 1.0 : f32} : (tensor<2x10x8xf32>, tensor<2x8x12xf32>, tensor<2x12x4xf32>) -> tensor<2x10x4xf32>
  return %r : tensor<2x10x4xf32>
}

// -----

func.func @rotary_odd(%x: tensor<2x7xf32>, %c: tensor<7xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{the last dim must be even, to rotate its halves}}
  %r = dlc.rotary %x, %c, %c : (tensor<2x7xf32>, tensor<7xf32>, tensor<7xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}

// -----

func.func @rotary_perm(%x: tensor<2x3x8xf32>, %c: tensor<8xf32>) -> tensor<2x8x3xf32> {
  // expected-error @+1 {{perm must be a permutation of the input's dims keeping the last last}}
  %r = dlc.rotary %x, %c, %c {perm = array<i64: 0, 2, 1>} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x3xf32>
  return %r : tensor<2x8x3xf32>
}

// -----

func.func @rotary_cos(%x: tensor<2x8xf32>, %c: tensor<3x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{cos [3,8] does not broadcast to [2,8]}}
  %r = dlc.rotary %x, %c, %c : (tensor<2x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
