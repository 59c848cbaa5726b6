// Input of step-run-stream-types.mlir: one input of each kind (i64, f32, i1, a tensor of i8).
lus.node @mix(%a: i64, %b: f32, %c: i1, %d: tensor<2xi8>) -> (i64, f32, i1, tensor<2xi8>) {
  lus.yield (%a : i64, %b : f32, %c : i1, %d : tensor<2xi8>)
}
