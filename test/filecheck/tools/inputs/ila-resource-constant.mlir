// step-run --backend ila: a dense_resource constant (no blob) cannot be read.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense_resource<blob1> : tensor<2x3xf32>
  %y = tosa.add %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
