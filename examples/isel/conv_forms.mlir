// im2col forms (issue 29): a strided 3x3 convolution (16 -> 64 filters, 9x9 -> 4x4) and a 1x1 one
// (64 -> 64 on 4x4, a plain GEMM). isel{targets=vta}: ila.im2col + vta.dense, and one vta.dense;
// isel{targets=flexasr}: the position-major forms, two flexasr.linear with zero biases.
func.func @convs(%x: tensor<1x16x9x9xf32>, %w: tensor<64x16x3x3xf32>, %p: tensor<64x64x1x1xf32>) -> tensor<1x64x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x64x4x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x16x9x9xf32>, tensor<64x16x3x3xf32>) outs(%z : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%y, %p : tensor<1x64x4x4xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  func.return %r : tensor<1x64x4x4xf32>
}
