// A lus node with a scalar, a boolean and a tensor input (step-run input checks).
lus.node @typed(%i: i32, %b: i1, %v: tensor<2xf32>) -> (i32, tensor<2xf32>) {
  %c0 = arith.constant 0 : i32
  %j = arith.select %b, %i, %c0 : i32
  %w = arith.addf %v, %v : tensor<2xf32>
  lus.yield (%j : i32, %w : tensor<2xf32>)
}
