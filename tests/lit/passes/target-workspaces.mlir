// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-size-workspaces-cpu))' %s | FileCheck %s --check-prefix=CPU
// RUN: dlc-opt --pass-pipeline='builtin.module(func.func(dlc-size-workspaces-cuda))' %s | FileCheck %s --check-prefix=CUDA

// Each target sizes the scratch memory of its own kernels: the CPU factors the matrices of a
// determinant one after another in one LU copy (4 x 4 doubles), the CUDA kernel all three at
// once; the CUDA batch statistics sum per [batch, channel] row (2 x 3 floats), the CPU's
// need nothing; the CPU convolution's im2col buffer (2 channels x 9 taps x 16 positions) is
// not the CUDA target's (cuDNN's workspace belongs to the model).
// CPU-LABEL: func.func @scratch
// CPU: dlc.det %{{.*}} {dlc.workspace_bytes = 128 : i64}
// CPU: dlc.batch_norm_stats
// CPU-NOT: dlc.workspace_bytes
// CPU-SAME: -> tensor<3x3xf32>
// CPU: dlc.conv {{.*}}dlc.workspace_bytes = 1152 : i64
// CUDA-LABEL: func.func @scratch
// CUDA: dlc.det %{{.*}} {dlc.workspace_bytes = 384 : i64}
// CUDA: dlc.batch_norm_stats {{.*}}dlc.workspace_bytes = 24 : i64
// CUDA: dlc.conv
// CUDA-NOT: dlc.workspace_bytes
// CUDA-SAME: -> tensor<1x1x4x4xf32>
func.func @scratch(%m: tensor<3x4x4xf32>, %x: tensor<2x3x5x5xf32>, %i: tensor<1x2x4x4xf32>, %w: tensor<1x2x3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<1x1x4x4xf32>) {
  %d = dlc.det %m : (tensor<3x4x4xf32>) -> tensor<3xf32>
  %s = dlc.batch_norm_stats %x {epsilon = 1.0e-05 : f32} : (tensor<2x3x5x5xf32>) -> tensor<3x3xf32>
  %c = dlc.conv %i, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32>
  return %d, %s, %c : tensor<3xf32>, tensor<3x3xf32>, tensor<1x1x4x4xf32>
}
