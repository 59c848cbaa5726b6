// A load of [B, 2] tiles, repeated 3 times, stored: 8B stream elements.
step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  %r = step.repeat %x {count = 3 : i64} : (!step.stream<[B, 2], !step.tile<16x64xf32>>) -> !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
  step.linear_offchip_store %r {base_addr = 4096 : i64} : !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
}
