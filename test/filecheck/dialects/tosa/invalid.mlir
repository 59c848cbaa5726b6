// RUN: step-opt %s --split-input-file --verify-diagnostics

// The generic TOSA ops of dialects/tosa_ext.py need the attributes their
// semantics and isel read (a missing pad used to end isel in an internal error).
func.func @conv_without_pad(%x: tensor<1x8x8x8xf32>, %w: tensor<16x1x1x8xf32>, %b: tensor<16xf32>, %z: tensor<1xf32>) -> tensor<1x8x8x16xf32> {
  // expected-error @+1 {{tosa.conv2d needs the attribute(s) pad}}
  %y = tosa.conv2d %x, %w, %b, %z, %z {acc_type = f32, dilation = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<16x1x1x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x16xf32>
  return %y : tensor<1x8x8x16xf32>
}

// -----

func.func @transpose_without_perms(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{tosa.transpose needs the attribute(s) perms}}
  %t = tosa.transpose %x : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  return %t : tensor<1x2x4x4xf32>
}
