// RUN: dlc-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dlc-verify-plan))' %s

// Hand-written bad plans: the verifier must refuse each, naming both values (unnamed here;
// imported ops carry their ONNX node names).

func.func @clobber(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 128 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{unsafe memory plan: '<unnamed>' (dlc.tanh) overwrites '<unnamed>' (dlc.exp), which is read later}}
  %b = dlc.tanh %x {dlc.arena_offset = 32 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %c = dlc.add %a, %b {dlc.output = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @undeclared_inplace(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.relu) overwrites its operand '<unnamed>' (dlc.exp) without being declared in place}}
  %b = dlc.relu %a {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %c = dlc.neg %b {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @inplace_before_reader(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 128 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %v = dlc.reshape %a {dlc.view} : (tensor<16xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.relu) overwrites '<unnamed>' (dlc.reshape), which is read later}}
  %b = dlc.relu %a {dlc.arena_offset = 0 : i64, dlc.inplace = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %w = dlc.reshape %v {dlc.arena_offset = 64 : i64} : (tensor<4x4xf32>) -> tensor<16xf32>
  %c = dlc.add %b, %w {dlc.output = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @writes_input(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 0 : i64} {
  %v = dlc.reshape %x {dlc.view} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{in-place result '<unnamed>' (dlc.relu) is not in the memory of the operand it overwrites}}
  %b = dlc.relu %v {dlc.output = 0 : i64, dlc.inplace = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----

func.func @live_overlap(%x: tensor<16xf32>, %y: tensor<8xf32>) -> (tensor<16xf32>, tensor<8xf32>) attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.tanh) overwrites '<unnamed>' (dlc.exp), which is read later}}
  %b = dlc.tanh %y {dlc.output = 0 : i64, dlc.output_offset = 32 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  return %a, %b : tensor<16xf32>, tensor<8xf32>
}

// -----

func.func @outside(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 32 : i64} {
  // expected-error @+1 {{'<unnamed>' (dlc.exp) lies outside the arena}}
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %b = dlc.neg %a {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----

func.func @bad_concat(%x: tensor<1x4xf32>) -> tensor<1x8xf32> attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.output = 0 : i64, dlc.output_offset = 16 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = dlc.neg %x {dlc.output = 0 : i64, dlc.output_offset = 0 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  // expected-error @+1 {{elided concat input '<unnamed>' (dlc.exp) is not in its slice}}
  %c = dlc.concat %a, %b {axis = 1 : i64, dlc.elided, dlc.output = 0 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32>
  return %c : tensor<1x8xf32>
}

// -----

func.func @fake_view(%x: tensor<2x3xf32>) -> tensor<3x2xf32> attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.transpose) is marked as a view but its op copies data}}
  %t = dlc.transpose %a {dlc.view, perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = dlc.neg %t {dlc.output = 0 : i64} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %b : tensor<3x2xf32>
}

// -----

func.func @fake_slice_view(%x: tensor<2x4xf32>) -> tensor<2x2xf32> attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // Two runs of %a's bytes (a column slice): not a view.
  // expected-error @+1 {{'<unnamed>' (dlc.slice) is marked as a view but its op copies data}}
  %s = dlc.slice %a {dlc.view, starts = array<i64: 0, 2>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %b = dlc.neg %s {dlc.output = 0 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %b : tensor<2x2xf32>
}

// -----

func.func @fake_inplace(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dlc.arena_bytes = 64 : i64} {
  %a = dlc.exp %x {dlc.arena_offset = 0 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.transpose) is marked in place but its kernel cannot overwrite operand #0}}
  %t = dlc.transpose %a {dlc.arena_offset = 0 : i64, dlc.inplace = 0 : i64, perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = dlc.neg %t {dlc.output = 0 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

func.func @strided_concat(%x: tensor<2x4xf32>) -> tensor<2x8xf32> attributes {dlc.arena_bytes = 0 : i64} {
  %a = dlc.exp %x {dlc.output = 0 : i64, dlc.output_offset = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = dlc.neg %x {dlc.output = 0 : i64, dlc.output_offset = 32 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-error @+1 {{elided concat '<unnamed>' (dlc.concat) has non-contiguous slices}}
  %c = dlc.concat %a, %b {axis = 1 : i64, dlc.elided, dlc.output = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// The target asked for scratch memory (dlc.workspace_bytes) that the plan did not give.
func.func @no_workspace(%x: tensor<1x2x4x4xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32> attributes {dlc.arena_bytes = 0 : i64} {
  // expected-error @+1 {{needs a workspace but has none}}
  %c = dlc.conv %x, %w {dilations = array<i64: 1, 1>, dlc.output = 0 : i64, dlc.workspace_bytes = 1152 : i64, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32>
  return %c : tensor<1x1x4x4xf32>
}

// -----

// A workspace the target did not ask for.
func.func @unasked_workspace(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{has a workspace its op does not use}}
  %a = dlc.exp %x {dlc.output = 0 : i64, dlc.workspace_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

// An offset whose end wraps around int64 must not pass as "inside the arena".
func.func @offset_overflow(%x: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'<unnamed>' (dlc.exp) lies outside the arena}}
  %a = dlc.exp %x {dlc.arena_offset = 9223372036854775807 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %b = dlc.neg %a {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----

// Training: a value saved for the backward pass (tanh's output, read by its gradient) must
// not be overwritten in place by the next forward op.
func.func @inplace_over_saved(%x: tensor<16xf32>, %dy: tensor<16xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 128 : i64} {
  %t = dlc.tanh %x {dlc.arena_offset = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'<unnamed>' (dlc.relu) overwrites '<unnamed>' (dlc.tanh), which is read later}}
  %r = dlc.relu %t {dlc.arena_offset = 0 : i64, dlc.inplace = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %g = dlc.unary_grad %dy, %t {dlc.arena_offset = 64 : i64, kind = "Tanh"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s = dlc.add %r, %g {dlc.output = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

// An optimizer update must come after every reader of the weight it overwrites.
func.func @update_before_reader(%w: tensor<16xf32> {dlc.name = "w", dlc.state}, %g: tensor<16xf32>, %h: tensor<4xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 0 : i64} {
  // expected-error @+1 {{state update overwrites graph input 'w', which is read later}}
  dlc.sgd_update %w, %g, %h {momentum = 0.0 : f32, nesterov = false, weight_decay = 0.0 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<4xf32>
  %y = dlc.exp %w {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// Only model state may be written by an update: never a graph input.
func.func @update_of_input(%w: tensor<16xf32> {dlc.name = "x"}, %g: tensor<16xf32>, %h: tensor<4xf32>) -> tensor<16xf32> attributes {dlc.arena_bytes = 0 : i64} {
  %y = dlc.exp %g {dlc.output = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{state update writes graph input 'x', which is not model state}}
  dlc.sgd_update %w, %g, %h {momentum = 0.0 : f32, nesterov = false, weight_decay = 0.0 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<4xf32>
  return %y : tensor<16xf32>
}
