// A graph with two loads and two stores (step-run --input/--output tests):
// %x (f32, 4x2 tensor: 2 tiles of 2x2) -> exp -> %y; %n (i32, 2x2) stored as is.
step.graph @io {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : () -> !step.stream<[2, 1], !step.tile<2x2xf32>>
  %y = step.map %x : !step.stream<[2, 1], !step.tile<2x2xf32>> -> !step.stream<[2, 1], !step.tile<2x2xf32>> {
  ^bb0(%t: !step.tile<2x2xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<2x2xf32>) -> !step.tile<2x2xf32>
    step.yield %e : !step.tile<2x2xf32>
  }
  step.linear_offchip_store %y {base_addr = 4096 : i64} : !step.stream<[2, 1], !step.tile<2x2xf32>>
  %n = step.linear_offchip_load {base_addr = 8192 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : () -> !step.stream<[1], !step.tile<2x2xi32>>
  step.linear_offchip_store %n {base_addr = 12288 : i64} : !step.stream<[1], !step.tile<2x2xi32>>
}
