// Streams of B^3 and B^60 elements (step-metrics.mlir binds B = 10^18).
step.graph @small {
^bb0(%ref: !step.stream<[B, B, B], !step.tile<1x1xi64>>):
  %x = step.random_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[B, B, B], !step.tile<1x1xi64>>) -> !step.stream<[B, B, B], !step.tile<2x2xf32>>
  step.consume %x : !step.stream<[B, B, B], !step.tile<2x2xf32>>
}
step.graph @huge {
^bb0(%ref: !step.stream<[B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B], !step.tile<1x1xi64>>):
  %x = step.random_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B], !step.tile<1x1xi64>>) -> !step.stream<[B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B], !step.tile<2x2xf32>>
  step.consume %x : !step.stream<[B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B], !step.tile<2x2xf32>>
}
