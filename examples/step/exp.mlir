// The README's example graph: exp of a 64x64 f32 tensor read as four 16x64 tiles
// (docs/guide/simulate.md runs it on data: step-run --input x=x.npy --output y.npz).
step.graph @exp {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<16x64xf32>>
  %y = step.map %x : !step.stream<[4, 1], !step.tile<16x64xf32>> -> !step.stream<[4, 1], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  step.linear_offchip_store %y {base_addr = 4096 : i64} : !step.stream<[4, 1], !step.tile<16x64xf32>>
}
