builtin.module {
  step.graph @g {
    %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %w = step.linear_offchip_load {base_addr = 1048576 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %0 = step.zip %x, %w : (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
    %y = step.map %0 : !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%1: !step.tile<16x16xf32>, %2: !step.tile<16x16xf32>):
      %3 = step.apply "matmul"(%1, %2) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %3 : !step.tile<16x16xf32>
    }
    %e = step.map %y : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%4: !step.tile<16x16xf32>):
      %5 = step.apply "exp"(%4) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %5 : !step.tile<16x16xf32>
    }
    %e1, %e2 = step.broadcast %e : (!step.stream<[4], !step.tile<16x16xf32>>) -> (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>)
    %s = step.accum %e1 {rank = 1 : i64} : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[], !step.tile<16x16xf32>> update {
    ^bb0(%6: !step.tile<16x16xf32>, %7: !step.tile<16x16xf32>):
      %8 = step.apply "add"(%7, %6) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %8 : !step.tile<16x16xf32>
    } init {
      %9 = step.apply "zero"() : () -> !step.tile<16x16xf32>
      step.yield %9 : !step.tile<16x16xf32>
    }
    step.linear_offchip_store %s {base_addr = 4096 : i64} : !step.stream<[], !step.tile<16x16xf32>>
    %v = step.linear_offchip_load {base_addr = 2097152 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %10 = step.zip %e2, %v : (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
    %m = step.map %10 : !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%11: !step.tile<16x16xf32>, %12: !step.tile<16x16xf32>):
      %13 = step.apply "mul"(%11, %12) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %13 : !step.tile<16x16xf32>
    }
    step.linear_offchip_store %m {base_addr = 8192 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
  }
}
