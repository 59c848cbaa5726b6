builtin.module {
  step.graph @g {
    %x = step.linear_offchip_load {name = "x", base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %a, %b = step.broadcast %x : (!step.stream<[4], !step.tile<16x16xf32>>) -> (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>)
    %z = step.zip %a, %b : (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
    %y = step.map %z {name = "mm", compute_bw = 64 : i64} : !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%p: !step.tile<16x16xf32>, %q: !step.tile<16x16xf32>):
      %s = step.apply "matmul"(%p, %q) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %s : !step.tile<16x16xf32>
    }
    step.linear_offchip_store %y {name = "st", base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
  }
}
