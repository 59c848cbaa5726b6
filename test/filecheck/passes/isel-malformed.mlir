// Ops whose geometry attributes xDSL's verifiers do not check: isel rejects them at the op
// (a zero stride used to reach the e-graph as a division by zero, a short kernel array an unpack crash).
// RUN: step-opt %s --split-input-file --verify-diagnostics -p 'isel{targets=flexasr}'
// RUN: step-opt %s --split-input-file --verify-diagnostics -p 'isel-verify{targets=flexasr}'
// RUN: sh -c 'step-opt %s --split-input-file -p isel; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT: isel-malformed.mlir:11:3: error: isel: 'tosa.max_pool2d': kernel and stride must be positive and pads non-negative
// EXIT: exit=1

func.func @zero_stride(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error @+1 {{'tosa.max_pool2d': kernel and stride must be positive and pads non-negative}}
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 0, 0>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %y : tensor<1x4x4x1xf32>
}
// -----
func.func @short_kernel(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error @+1 {{'tosa.max_pool2d': expects kernel and stride of 2 values and pad of 4 values}}
  %y = tosa.max_pool2d %x {kernel = array<i64: 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %y : tensor<1x4x4x1xf32>
}
// -----
func.func @big_kernel(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error @+1 {{'tosa.max_pool2d': kernel [40, 4] is larger than the padded input (10x10)}}
  %y = tosa.max_pool2d %x {kernel = array<i64: 40, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %y : tensor<1x4x4x1xf32>
}
// -----
func.func @wrong_result(%x: tensor<1x8x8x1xf32>) -> tensor<1x3x4x1xf32> {
  // expected-error @+1 {{'tosa.max_pool2d': result shape must be [1, 4, 4, 1]}}
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x3x4x1xf32>
  func.return %y : tensor<1x3x4x1xf32>
}
// -----
func.func @pad_only_window(%x: tensor<1x8x8x1xf32>) -> tensor<1x5x5x1xf32> {
  // expected-error @+1 {{'tosa.max_pool2d': each pad must be smaller than the kernel (a window would hold only padding)}}
  %y = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 2, 0, 2, 0>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x5x5x1xf32>
  func.return %y : tensor<1x5x5x1xf32>
}
// -----
func.func @conv_zero_stride(%x: tensor<1x16x6x6xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %z = arith.constant dense<0.0> : tensor<1x16x4x4xf32>
  // expected-error @+1 {{'linalg.conv_2d_nchw_fchw': strides and dilations must be positive}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<0> : tensor<2xi64>} ins(%x, %w : tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>) outs(%z : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
// -----
func.func @reduce_axis(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tosa.reduce_max': axis 5 is out of range for rank 2}}
  %y = "tosa.reduce_max"(%x) <{axis = 5 : i32}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
