// D2A §5.1: a (4,4)/(2,2) 2-D max-pool with padding 1 on a 128x128 image.
func.func @maxpool(%x: tensor<1x128x128x1xf32>) -> tensor<1x64x64x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x128x128x1xf32>) -> tensor<1x64x64x1xf32>
  func.return %y : tensor<1x64x64x1xf32>
}
