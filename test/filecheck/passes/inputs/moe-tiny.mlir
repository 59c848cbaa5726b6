// A 2-expert MoE layer (examples/workloads/graphs.py moe(MoEModel("tiny", 2, 1, 8, 16), tile_n=4, tile_f=8)).
builtin.module {
  step.graph @moe_tiny_tn4 {
  ^bb0(%in_load_ref: !step.stream<[B], !step.tile<1x1xi64>>, %w_load_ref: !step.stream<[B], !step.tile<1x1xi64>>):
    %in_load = step.linear_offchip_load %in_load_ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x8xbf16>>
    %flat_in = step.flatten %in_load {min = 0 : i64, max = 1 : i64} : (!step.stream<[B, 1], !step.tile<1x8xbf16>>) -> !step.stream<[B], !step.tile<1x8xbf16>>
    %feat_sel = step.select_gen {choices = 2 : i64} : !step.stream<[B], !step.selector<2>>
    %w_sel = step.select_gen {choices = 2 : i64} : !step.stream<[B, 1], !step.selector<2>>
    %part, %part_1 = step.partition %flat_in, %feat_sel : (!step.stream<[B], !step.tile<1x8xbf16>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0], !step.tile<1x8xbf16>>, !step.stream<[B_1], !step.tile<1x8xbf16>>)
    %rs0, %0 = step.reshape %part {split_dim = 0 : i64, chunk_size = 4 : i64} : (!step.stream<[B_0], !step.tile<1x8xbf16>>) -> (!step.stream<["ceiling(B_0/4)", 4], !step.tile<1x8xbf16>>, !step.stream<["ceiling(B_0/4)", 4], i1>)
    step.consume %0 : !step.stream<["ceiling(B_0/4)", 4], i1>
    %acc0 = step.accum %rs0 {rank = 1 : i64} : !step.stream<["ceiling(B_0/4)", 4], !step.tile<1x8xbf16>> -> !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>> update {
    ^bb0(%1: !step.tile<1x8xbf16>, %2: !step.tile<4x8xf32>):
      %3 = step.apply "retile_row"(%2, %1) : (!step.tile<4x8xf32>, !step.tile<1x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %3 : !step.tile<4x8xf32>
    } init {
      %4 = step.apply "zero"() : () -> !step.tile<4x8xf32>
      step.yield %4 : !step.tile<4x8xf32>
    }
    %rs1, %5 = step.reshape %part_1 {split_dim = 0 : i64, chunk_size = 4 : i64} : (!step.stream<[B_1], !step.tile<1x8xbf16>>) -> (!step.stream<["ceiling(B_1/4)", 4], !step.tile<1x8xbf16>>, !step.stream<["ceiling(B_1/4)", 4], i1>)
    step.consume %5 : !step.stream<["ceiling(B_1/4)", 4], i1>
    %acc1 = step.accum %rs1 {rank = 1 : i64} : !step.stream<["ceiling(B_1/4)", 4], !step.tile<1x8xbf16>> -> !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>> update {
    ^bb0(%6: !step.tile<1x8xbf16>, %7: !step.tile<4x8xf32>):
      %8 = step.apply "retile_row"(%7, %6) : (!step.tile<4x8xf32>, !step.tile<1x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %8 : !step.tile<4x8xf32>
    } init {
      %9 = step.apply "zero"() : () -> !step.tile<4x8xf32>
      step.yield %9 : !step.tile<4x8xf32>
    }
    %acc0_rep, %acc0_up, %acc0_gate, %acc0_down = step.broadcast %acc0 : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>) -> (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>)
    %acc1_rep, %acc1_up, %acc1_gate, %acc1_down = step.broadcast %acc1 : (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>)
    %rep0 = step.repeat %acc0_rep {count = 2 : i64} : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>
    %rep0_up, %rep0_gate = step.broadcast %rep0 : (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>) -> (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>)
    %rep1 = step.repeat %acc1_rep {count = 2 : i64} : (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>
    %rep1_up, %rep1_gate = step.broadcast %rep1 : (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>) -> (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>)
    %up_ld0 = step.linear_offchip_load %acc0_up {base_addr = 4294967296 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>
    %10 = step.flatten %up_ld0 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>
    %11 = step.zip %rep0_up, %10 : (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %up0 = step.map %11 : !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%12: !step.tile<4x8xf32>, %13: !step.tile<8x8xbf16>):
      %14 = step.apply "matmul"(%12, %13) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %14 : !step.tile<4x8xf32>
    }
    %up_ld1 = step.linear_offchip_load %acc1_up {base_addr = 4294967552 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>
    %15 = step.flatten %up_ld1 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>
    %16 = step.zip %rep1_up, %15 : (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %up1 = step.map %16 : !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%17: !step.tile<4x8xf32>, %18: !step.tile<8x8xbf16>):
      %19 = step.apply "matmul"(%17, %18) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %19 : !step.tile<4x8xf32>
    }
    %gate_ld0 = step.linear_offchip_load %acc0_gate {base_addr = 4294967808 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>
    %20 = step.flatten %gate_ld0 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>
    %21 = step.zip %rep0_gate, %20 : (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %gate0 = step.map %21 : !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%22: !step.tile<4x8xf32>, %23: !step.tile<8x8xbf16>):
      %24 = step.apply "matmul"(%22, %23) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %24 : !step.tile<4x8xf32>
    }
    %gate_ld1 = step.linear_offchip_load %acc1_gate {base_addr = 4294968064 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>
    %25 = step.flatten %gate_ld1 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>
    %26 = step.zip %rep1_gate, %25 : (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %gate1 = step.map %26 : !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%27: !step.tile<4x8xf32>, %28: !step.tile<8x8xbf16>):
      %29 = step.apply "matmul"(%27, %28) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %29 : !step.tile<4x8xf32>
    }
    %act0 = step.map %gate0 : !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>> -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%30: !step.tile<4x8xf32>):
      %31 = step.apply "silu"(%30) : (!step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %31 : !step.tile<4x8xf32>
    }
    %32 = step.zip %up0, %act0 : (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<4x8xf32>>>
    %proj0 = step.map %32 : !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<4x8xf32>>> -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%33: !step.tile<4x8xf32>, %34: !step.tile<4x8xf32>):
      %35 = step.apply "mul"(%33, %34) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %35 : !step.tile<4x8xf32>
    }
    %act1 = step.map %gate1 : !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>> -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%36: !step.tile<4x8xf32>):
      %37 = step.apply "silu"(%36) : (!step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %37 : !step.tile<4x8xf32>
    }
    %38 = step.zip %up1, %act1 : (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<4x8xf32>>>
    %proj1 = step.map %38 : !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<4x8xf32>>> -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>> {
    ^bb0(%39: !step.tile<4x8xf32>, %40: !step.tile<4x8xf32>):
      %41 = step.apply "mul"(%39, %40) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %41 : !step.tile<4x8xf32>
    }
    %down_ld0 = step.linear_offchip_load %acc0_down {base_addr = 4294968320 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>
    %42 = step.flatten %down_ld0 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_0/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>
    %43 = step.zip %proj0, %42 : (!step.stream<["ceiling(B_0/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %down0 = step.accum %43 {rank = 1 : i64} : !step.stream<["ceiling(B_0/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>> update {
    ^bb0(%44: !step.tile<4x8xf32>, %45: !step.tile<8x8xbf16>, %46: !step.tile<4x8xf32>):
      %47 = step.apply "matmul"(%44, %45) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      %48 = step.apply "add"(%46, %47) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %48 : !step.tile<4x8xf32>
    } init {
      %49 = step.apply "zero"() : () -> !step.tile<4x8xf32>
      step.yield %49 : !step.tile<4x8xf32>
    }
    %rt0 = step.flat_map %down0 {rank = 0 : i64} : !step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>> -> !step.stream<[?F], !step.tile<1x8xf32>> {
    ^bb0(%50: !step.tile<4x8xf32>):
      %51 = step.apply "retile_streamify"(%50) : (!step.tile<4x8xf32>) -> !step.tile<1x8xf32>
      step.yield %51 : !step.tile<1x8xf32>
    }
    %down_ld1 = step.linear_offchip_load %acc1_down {base_addr = 4294968576 : i64, tiled_in_shape = array<i64: 2, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 2, 1>} : (!step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> !step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>
    %52 = step.flatten %down_ld1 {min = 0 : i64, max = 1 : i64} : (!step.stream<["ceiling(B_1/4)", 2, 1], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>
    %53 = step.zip %proj1, %52 : (!step.stream<["ceiling(B_1/4)", 2], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>) -> !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>>
    %down1 = step.accum %53 {rank = 1 : i64} : !step.stream<["ceiling(B_1/4)", 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x8xbf16>>> -> !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>> update {
    ^bb0(%54: !step.tile<4x8xf32>, %55: !step.tile<8x8xbf16>, %56: !step.tile<4x8xf32>):
      %57 = step.apply "matmul"(%54, %55) : (!step.tile<4x8xf32>, !step.tile<8x8xbf16>) -> !step.tile<4x8xf32>
      %58 = step.apply "add"(%56, %57) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %58 : !step.tile<4x8xf32>
    } init {
      %59 = step.apply "zero"() : () -> !step.tile<4x8xf32>
      step.yield %59 : !step.tile<4x8xf32>
    }
    %rt1 = step.flat_map %down1 {rank = 0 : i64} : !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>> -> !step.stream<[?F_1], !step.tile<1x8xf32>> {
    ^bb0(%60: !step.tile<4x8xf32>):
      %61 = step.apply "retile_streamify"(%60) : (!step.tile<4x8xf32>) -> !step.tile<1x8xf32>
      step.yield %61 : !step.tile<1x8xf32>
    }
    %w_load = step.linear_offchip_load %w_load_ref {base_addr = 2147483648 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x1xbf16>>
    %w_part, %w_part_1 = step.partition %w_load, %w_sel : (!step.stream<[B, 1], !step.tile<1x1xbf16>>, !step.stream<[B, 1], !step.selector<2>>) -> (!step.stream<[P_0], !step.tile<1x1xbf16>>, !step.stream<[P_1], !step.tile<1x1xbf16>>)
    %62 = step.zip %rt0, %w_part : (!step.stream<[?F], !step.tile<1x8xf32>>, !step.stream<[P_0], !step.tile<1x1xbf16>>) -> !step.stream<[P_0], !step.tuple<!step.tile<1x8xf32>, !step.tile<1x1xbf16>>>
    %wmul0 = step.map %62 : !step.stream<[P_0], !step.tuple<!step.tile<1x8xf32>, !step.tile<1x1xbf16>>> -> !step.stream<[P_0], !step.tile<1x8xf32>> {
    ^bb0(%63: !step.tile<1x8xf32>, %64: !step.tile<1x1xbf16>):
      %65 = step.apply "mul"(%63, %64) : (!step.tile<1x8xf32>, !step.tile<1x1xbf16>) -> !step.tile<1x8xf32>
      step.yield %65 : !step.tile<1x8xf32>
    }
    %66 = step.zip %rt1, %w_part_1 : (!step.stream<[?F_1], !step.tile<1x8xf32>>, !step.stream<[P_1], !step.tile<1x1xbf16>>) -> !step.stream<[P_1], !step.tuple<!step.tile<1x8xf32>, !step.tile<1x1xbf16>>>
    %wmul1 = step.map %66 : !step.stream<[P_1], !step.tuple<!step.tile<1x8xf32>, !step.tile<1x1xbf16>>> -> !step.stream<[P_1], !step.tile<1x8xf32>> {
    ^bb0(%67: !step.tile<1x8xf32>, %68: !step.tile<1x1xbf16>):
      %69 = step.apply "mul"(%67, %68) : (!step.tile<1x8xf32>, !step.tile<1x1xbf16>) -> !step.tile<1x8xf32>
      step.yield %69 : !step.tile<1x8xf32>
    }
    %re_sel = step.select_gen {choices = 2 : i64} : !step.stream<[B], !step.selector<2>>
    %reasm = step.reassemble %wmul0, %wmul1, %re_sel : (!step.stream<[P_0], !step.tile<1x8xf32>>, !step.stream<[P_1], !step.tile<1x8xf32>>, !step.stream<[B], !step.selector<2>>) -> !step.stream<[B, ?B_sel], !step.tile<1x8xf32>>
    %acc_out = step.accum %reasm {rank = 1 : i64} : !step.stream<[B, ?B_sel], !step.tile<1x8xf32>> -> !step.stream<[B], !step.tile<1x8xf32>> update {
    ^bb0(%70: !step.tile<1x8xf32>, %71: !step.tile<1x8xf32>):
      %72 = step.apply "add"(%71, %70) : (!step.tile<1x8xf32>, !step.tile<1x8xf32>) -> !step.tile<1x8xf32>
      step.yield %72 : !step.tile<1x8xf32>
    } init {
      %73 = step.apply "zero"() : () -> !step.tile<1x8xf32>
      step.yield %73 : !step.tile<1x8xf32>
    }
    %rs_out, %74 = step.reshape %acc_out {split_dim = 0 : i64, chunk_size = 1 : i64} : (!step.stream<[B], !step.tile<1x8xf32>>) -> (!step.stream<[B, 1], !step.tile<1x8xf32>>, !step.stream<[B, 1], i1>)
    step.consume %74 : !step.stream<[B, 1], i1>
    step.linear_offchip_store %rs_out {base_addr = 17179869184 : i64} : !step.stream<[B, 1], !step.tile<1x8xf32>>
  }
}
