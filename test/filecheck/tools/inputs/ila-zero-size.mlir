// step-run --backend ila: zero-size tensors run (empty outputs, error 0).
func.func @f(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %y = tosa.add %x, %x : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  func.return %y : tensor<0x3xf32>
}
