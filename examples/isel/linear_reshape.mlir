// D2A §6.2: a linear layer written as add(reshape(dense(x, w)), b).
func.func @linear(%x: tensor<10x256xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>) -> tensor<1x10x64xf32> {
  %e = tensor.empty() : tensor<256x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x256xf32>) outs(%e : tensor<256x64xf32>) permutation = [1, 0]
  %z = arith.constant dense<0.0> : tensor<10x64xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<10x256xf32>, tensor<256x64xf32>) outs(%z : tensor<10x64xf32>) -> tensor<10x64xf32>
  %s3 = tosa.const_shape {values = dense<[1, 10, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %d, %s3 : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
  %sb = tosa.const_shape {values = dense<[1, 1, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b3 = tosa.reshape %b, %sb : (tensor<64xf32>, !tosa.shape<3>) -> tensor<1x1x64xf32>
  %y = tosa.add %r, %b3 : (tensor<1x10x64xf32>, tensor<1x1x64xf32>) -> tensor<1x10x64xf32>
  func.return %y : tensor<1x10x64xf32>
}
