// step-run --backend ila: a NaN constant propagates as in numpy (the relative error is then nan).
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %n = arith.constant 0x7FC00000 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %c = linalg.fill ins(%n : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = tosa.add %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
