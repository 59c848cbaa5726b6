builtin.module {
  step.graph @loop {
    %x = step.linear_offchip_load {name = "x", base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %z = step.zip %x, %y : (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
    %y = step.map %z {name = "acc"} : !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%a: !step.tile<16x16xf32>, %b: !step.tile<16x16xf32>):
      %s = step.apply "add"(%a, %b) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %s : !step.tile<16x16xf32>
    }
  }
}
