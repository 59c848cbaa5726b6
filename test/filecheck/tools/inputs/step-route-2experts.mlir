builtin.module {
  step.graph @route {
    %x = step.linear_offchip_load {name = "tokens", base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<1x16xf32>>
    %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 1], !step.tile<1x16xf32>>) -> !step.stream<[4], !step.tile<1x16xf32>>
    %s = step.select_gen {name = "sel", choices = 2 : i64, values = array<i64: 1, 0, 0, 1, 1, 1, 0, 1>} : !step.stream<[4], !step.selector<2>>
    %a, %b = step.partition %f, %s {name = "part"} : (!step.stream<[4], !step.tile<1x16xf32>>, !step.stream<[4], !step.selector<2>>) -> (!step.stream<[B_0], !step.tile<1x16xf32>>, !step.stream<[B_1], !step.tile<1x16xf32>>)
    %ea = step.map %a {name = "e0", compute_bw = 16 : i64} : !step.stream<[B_0], !step.tile<1x16xf32>> -> !step.stream<[B_0], !step.tile<1x16xf32>> {
    ^bb0(%t: !step.tile<1x16xf32>):
      %e = step.apply "exp"(%t) : (!step.tile<1x16xf32>) -> !step.tile<1x16xf32>
      step.yield %e : !step.tile<1x16xf32>
    }
    %eb = step.map %b {name = "e1", compute_bw = 4 : i64} : !step.stream<[B_1], !step.tile<1x16xf32>> -> !step.stream<[B_1], !step.tile<1x16xf32>> {
    ^bb0(%t: !step.tile<1x16xf32>):
      %e = step.apply "exp"(%t) : (!step.tile<1x16xf32>) -> !step.tile<1x16xf32>
      step.yield %e : !step.tile<1x16xf32>
    }
    %s2 = step.select_gen {name = "sel2", choices = 2 : i64, values = array<i64: 1, 0, 0, 1, 1, 1, 0, 1>} : !step.stream<[4], !step.selector<2>>
    %r = step.reassemble %ea, %eb, %s2 {name = "reasm"} : (!step.stream<[B_0], !step.tile<1x16xf32>>, !step.stream<[B_1], !step.tile<1x16xf32>>, !step.stream<[4], !step.selector<2>>) -> !step.stream<[4, K], !step.tile<1x16xf32>>
    step.linear_offchip_store %r {name = "out", base_addr = 4096 : i64} : !step.stream<[4, K], !step.tile<1x16xf32>>
  }
}
