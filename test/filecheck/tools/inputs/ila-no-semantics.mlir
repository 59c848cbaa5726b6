// step-run --backend ila: tosa.sin has no numpy semantics in step-run.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = tosa.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
