// Small instances of the D2A mappings, for isel-verify.
func.func @pool(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %y : tensor<1x4x4x1xf32>
}
func.func @linear(%x: tensor<2x16xf32>, %w: tensor<64x16xf32>, %b: tensor<64xf32>) -> tensor<1x2x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x16xf32>) outs(%e : tensor<16x64xf32>) permutation = [1, 0]
  %z = arith.constant dense<0.0> : tensor<2x64xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<2x16xf32>, tensor<16x64xf32>) outs(%z : tensor<2x64xf32>) -> tensor<2x64xf32>
  %s3 = tosa.const_shape {values = dense<[1, 2, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %d, %s3 : (tensor<2x64xf32>, !tosa.shape<3>) -> tensor<1x2x64xf32>
  %sb = tosa.const_shape {values = dense<[1, 1, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b3 = tosa.reshape %b, %sb : (tensor<64xf32>, !tosa.shape<3>) -> tensor<1x1x64xf32>
  %y = tosa.add %r, %b3 : (tensor<1x2x64xf32>, tensor<1x1x64xf32>) -> tensor<1x2x64xf32>
  func.return %y : tensor<1x2x64xf32>
}
func.func @conv(%x: tensor<1x16x6x6xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %z = arith.constant dense<0.0> : tensor<1x16x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>) outs(%z : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
