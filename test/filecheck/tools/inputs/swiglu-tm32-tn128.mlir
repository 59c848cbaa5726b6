builtin.module {
  step.graph @swiglu_tm32_tn128 {
    %0 = step.linear_offchip_load {name = "X", base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 1, 1>, stride = array<i64: 1, 0, 1>, tiled_out_shape = array<i64: 2, 4, 1>} : () -> !step.stream<[2, 4, 1], !step.tile<32x256xf32>>
    %1 = step.linear_offchip_load {name = "Wg", base_addr = 16777216 : i64, tiled_in_shape = array<i64: 1, 1, 4>, stride = array<i64: 0, 1, 4>, tiled_out_shape = array<i64: 2, 4, 1>} : () -> !step.stream<[2, 4, 1], !step.tile<256x128xf32>>
    %2 = step.zip %3, %1 : (!step.stream<[2, 4, 1], !step.tile<32x256xf32>>, !step.stream<[2, 4, 1], !step.tile<256x128xf32>>) -> !step.stream<[2, 4, 1], !step.tuple<!step.tile<32x256xf32>, !step.tile<256x128xf32>>>
    %4 = step.accum %2 {name = "gate", rank = 1 : i64} : !step.stream<[2, 4, 1], !step.tuple<!step.tile<32x256xf32>, !step.tile<256x128xf32>>> -> !step.stream<[2, 4], !step.tile<32x128xf32>> update {
    ^bb0(%5: !step.tile<32x256xf32>, %6: !step.tile<256x128xf32>, %7: !step.tile<32x128xf32>):
      %8 = step.apply "matmul"(%5, %6) : (!step.tile<32x256xf32>, !step.tile<256x128xf32>) -> !step.tile<32x128xf32>
      %9 = step.apply "add"(%7, %8) : (!step.tile<32x128xf32>, !step.tile<32x128xf32>) -> !step.tile<32x128xf32>
      step.yield %9 : !step.tile<32x128xf32>
    } init {
      %10 = step.apply "zero"() : () -> !step.tile<32x128xf32>
      step.yield %10 : !step.tile<32x128xf32>
    }
    %11 = step.linear_offchip_load {name = "Wu", base_addr = 33554432 : i64, tiled_in_shape = array<i64: 1, 1, 4>, stride = array<i64: 0, 1, 4>, tiled_out_shape = array<i64: 2, 4, 1>} : () -> !step.stream<[2, 4, 1], !step.tile<256x128xf32>>
    %12 = step.zip %13, %11 : (!step.stream<[2, 4, 1], !step.tile<32x256xf32>>, !step.stream<[2, 4, 1], !step.tile<256x128xf32>>) -> !step.stream<[2, 4, 1], !step.tuple<!step.tile<32x256xf32>, !step.tile<256x128xf32>>>
    %14 = step.accum %12 {name = "up", rank = 1 : i64} : !step.stream<[2, 4, 1], !step.tuple<!step.tile<32x256xf32>, !step.tile<256x128xf32>>> -> !step.stream<[2, 4], !step.tile<32x128xf32>> update {
    ^bb0(%15: !step.tile<32x256xf32>, %16: !step.tile<256x128xf32>, %17: !step.tile<32x128xf32>):
      %18 = step.apply "matmul"(%15, %16) : (!step.tile<32x256xf32>, !step.tile<256x128xf32>) -> !step.tile<32x128xf32>
      %19 = step.apply "add"(%17, %18) : (!step.tile<32x128xf32>, !step.tile<32x128xf32>) -> !step.tile<32x128xf32>
      step.yield %19 : !step.tile<32x128xf32>
    } init {
      %20 = step.apply "zero"() : () -> !step.tile<32x128xf32>
      step.yield %20 : !step.tile<32x128xf32>
    }
    %21 = step.map %4 {name = "silu"} : !step.stream<[2, 4], !step.tile<32x128xf32>> -> !step.stream<[2, 4], !step.tile<32x128xf32>> {
    ^bb0(%22: !step.tile<32x128xf32>):
      %23 = step.apply "silu"(%22) : (!step.tile<32x128xf32>) -> !step.tile<32x128xf32>
      step.yield %23 : !step.tile<32x128xf32>
    }
    %24 = step.zip %21, %14 : (!step.stream<[2, 4], !step.tile<32x128xf32>>, !step.stream<[2, 4], !step.tile<32x128xf32>>) -> !step.stream<[2, 4], !step.tuple<!step.tile<32x128xf32>, !step.tile<32x128xf32>>>
    %25 = step.map %24 {name = "mul"} : !step.stream<[2, 4], !step.tuple<!step.tile<32x128xf32>, !step.tile<32x128xf32>>> -> !step.stream<[2, 4], !step.tile<32x128xf32>> {
    ^bb0(%26: !step.tile<32x128xf32>, %27: !step.tile<32x128xf32>):
      %28 = step.apply "mul"(%26, %27) : (!step.tile<32x128xf32>, !step.tile<32x128xf32>) -> !step.tile<32x128xf32>
      step.yield %28 : !step.tile<32x128xf32>
    }
    %29, %30 = step.reshape %25 {name = "reshape", split_dim = 1 : i64, chunk_size = 1 : i64} : (!step.stream<[2, 4], !step.tile<32x128xf32>>) -> (!step.stream<[2, 1, 4], !step.tile<32x128xf32>>, !step.stream<[2, 1, 4], i1>)
    %31 = step.linear_offchip_load {name = "Wd", base_addr = 50331648 : i64, tiled_in_shape = array<i64: 4, 1, 1>, stride = array<i64: 0, 1, 1>, tiled_out_shape = array<i64: 2, 1, 4>} : () -> !step.stream<[2, 1, 4], !step.tile<128x256xf32>>
    %32 = step.zip %29, %31 : (!step.stream<[2, 1, 4], !step.tile<32x128xf32>>, !step.stream<[2, 1, 4], !step.tile<128x256xf32>>) -> !step.stream<[2, 1, 4], !step.tuple<!step.tile<32x128xf32>, !step.tile<128x256xf32>>>
    %33 = step.accum %32 {name = "down", write_back_mu, rank = 1 : i64} : !step.stream<[2, 1, 4], !step.tuple<!step.tile<32x128xf32>, !step.tile<128x256xf32>>> -> !step.stream<[2, 1], !step.tile<32x256xf32>> update {
    ^bb0(%34: !step.tile<32x128xf32>, %35: !step.tile<128x256xf32>, %36: !step.tile<32x256xf32>):
      %37 = step.apply "matmul"(%34, %35) : (!step.tile<32x128xf32>, !step.tile<128x256xf32>) -> !step.tile<32x256xf32>
      %38 = step.apply "add"(%36, %37) : (!step.tile<32x256xf32>, !step.tile<32x256xf32>) -> !step.tile<32x256xf32>
      step.yield %38 : !step.tile<32x256xf32>
    } init {
      %39 = step.apply "zero"() : () -> !step.tile<32x256xf32>
      step.yield %39 : !step.tile<32x256xf32>
    }
    step.linear_offchip_store %33 {name = "store", base_addr = 67108864 : i64} : !step.stream<[2, 1], !step.tile<32x256xf32>>
    %3, %13 = step.broadcast %0 : (!step.stream<[2, 4, 1], !step.tile<32x256xf32>>) -> (!step.stream<[2, 4, 1], !step.tile<32x256xf32>>, !step.stream<[2, 4, 1], !step.tile<32x256xf32>>)
  }
}
