// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-inplace-legalization,dlc-buffer-planning,dlc-verify-plan))' %s | FileCheck %s
// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-buffer-planning{reuse=false},dlc-verify-plan))' %s | FileCheck %s --check-prefix=NOREUSE

// Four 1 KiB values: exp -> add -> sigmoid form one in-place chain ending in the graph
// output, so they all live in the caller's output buffer; only tanh needs the arena. Without
// reuse every value but the output gets its own range.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: dlc.arena_bytes = 1024 : i64, dlc.arena_lower_bound = 1024 : i64, dlc.no_reuse_bytes = 3072 : i64
// NOREUSE-LABEL: func.func @chain
// NOREUSE-SAME: dlc.arena_bytes = 3072 : i64
func.func @chain(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: dlc.exp %arg0 {dlc.output = 0 : i64, dlc.output_offset = 0 : i64}
  // NOREUSE: dlc.exp %arg0 {dlc.arena_offset = 0 : i64}
  %a = dlc.exp %x : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: dlc.tanh %{{.*}} {dlc.arena_offset = 0 : i64}
  // NOREUSE: dlc.tanh %{{.*}} {dlc.arena_offset = 1024 : i64}
  %b = dlc.tanh %a : (tensor<256xf32>) -> tensor<256xf32>
  // %a dies at the add, so the add may write over it; %b's memory is free afterwards.
  // CHECK: dlc.add {{.*}}{dlc.inplace = 0 : i64, dlc.output = 0 : i64, dlc.output_offset = 0 : i64, dlc.release = array<i64: 0, 1024>}
  // NOREUSE: dlc.add {{.*}}{dlc.arena_offset = 2048 : i64
  %c = dlc.add %a, %b : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  // CHECK: dlc.sigmoid {{.*}}{dlc.inplace = 0 : i64, dlc.output = 0 : i64, dlc.output_offset = 0 : i64}
  %d = dlc.sigmoid %c : (tensor<256xf32>) -> tensor<256xf32>
  return %d : tensor<256xf32>
}

// Two branches merged by a concat on the channel axis: the branches write straight into
// their slices of the concat's buffer, and the concat itself emits no copy.
// CHECK-LABEL: func.func @merge
func.func @merge(%x: tensor<1x4x8xf32>) -> tensor<1x12x8xf32> {
  // CHECK: dlc.relu %arg0 {dlc.output = 0 : i64, dlc.output_offset = 0 : i64}
  %a = dlc.relu %x : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK: dlc.exp %arg0 {dlc.arena_offset = 0 : i64}
  %e = dlc.exp %x : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK: dlc.reshape {{.*}}{dlc.view}
  %v = dlc.reshape %e : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  // CHECK: dlc.transpose {{.*}}dlc.output = 0 : i64, dlc.output_offset = 128 : i64
  %t = dlc.transpose %v {perm = array<i64: 0, 2, 1>} : (tensor<1x8x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: dlc.sigmoid {{.*}}dlc.output = 0 : i64, dlc.output_offset = 256 : i64
  %s = dlc.sigmoid %x : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK: dlc.concat {{.*}}dlc.elided, dlc.output = 0 : i64, dlc.output_offset = 0 : i64
  %c = dlc.concat %a, %t, %s {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x12x8xf32>
  return %c : tensor<1x12x8xf32>
}

// A split's halves (views of %e) concatenated in order with what was computed from one:
// %e is computed in its place in the result, and the halves read it there. Out of order they
// are not %e whole: a copy.
// CHECK-LABEL: func.func @split_then_concat
func.func @split_then_concat(%x: tensor<1x8x16xf32>) -> (tensor<1x8x16xf32>, tensor<1x12x16xf32>) {
  // CHECK: dlc.exp %arg0 {dlc.output = 1 : i64, dlc.output_offset = 0 : i64}
  %e = dlc.exp %x : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  // CHECK: dlc.slice {{.*}}{dlc.view
  %lo = dlc.slice %e {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : (tensor<1x8x16xf32>) -> tensor<1x4x16xf32>
  // CHECK: dlc.slice {{.*}}{dlc.view
  %hi = dlc.slice %e {starts = array<i64: 0, 4, 0>, steps = array<i64: 1, 1, 1>} : (tensor<1x8x16xf32>) -> tensor<1x4x16xf32>
  // CHECK: dlc.concat
  // CHECK-NOT: dlc.elided
  // CHECK-SAME: -> tensor<1x8x16xf32>
  %d = dlc.concat %hi, %lo {axis = 1 : i64} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  // CHECK: dlc.tanh {{.*}}dlc.output = 1 : i64, dlc.output_offset = 512 : i64
  %t = dlc.tanh %hi : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  // CHECK: dlc.concat {{.*}}dlc.elided, dlc.output = 1 : i64, dlc.output_offset = 0 : i64
  %c = dlc.concat %lo, %hi, %t {axis = 1 : i64} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x12x16xf32>
  return %d, %c : tensor<1x8x16xf32>, tensor<1x12x16xf32>
}

// A concat whose input is read again later is not elided (its slice would be overwritten).
// CHECK-LABEL: func.func @reused_branch
func.func @reused_branch(%x: tensor<1x4xf32>) -> (tensor<1x8xf32>, tensor<1x4xf32>) {
  %a = dlc.relu %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = dlc.exp %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
  // CHECK: dlc.concat
  // CHECK-NOT: dlc.elided
  // CHECK-SAME: -> tensor<1x8xf32>
  %c = dlc.concat %a, %b {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32>
  %d = dlc.neg %a : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %c, %d : tensor<1x8xf32>, tensor<1x4xf32>
}
