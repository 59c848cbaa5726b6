// D2A §6.3: conv2d (padded input, stride 1) -> VTA GEMM via im2col.
func.func @conv(%x: tensor<1x16x10x10xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x32x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%z : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  func.return %y : tensor<1x32x8x8xf32>
}
