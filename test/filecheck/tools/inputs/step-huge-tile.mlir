// A 99999999999x99999999999 tile: far past what the timing model can count in 64 bits.
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<99999999999x99999999999xf32>>
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4, 1], !step.tile<99999999999x99999999999xf32>>
}
