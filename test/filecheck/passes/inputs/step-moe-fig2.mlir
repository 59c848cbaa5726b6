// Seed Fig. 2: the Mixtral-8x7B MoE layer (8 experts, top-2), every derived dim
// written as `_` for step-infer-shapes. Tokens are packed into dynamic ?x4096 tiles
// (Accum with RetileRow) in chunks of 16; expert i computes (SiLU(x W1) * (x W3)) W2.
step.graph @moe {
^bb0(%tref: !step.stream<[B], !step.tile<1x1xi64>>, %sel: !step.stream<[B], !step.selector<8>>, %sel2: !step.stream<[B], !step.selector<8>>):
  %tok = step.linear_offchip_load %tref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[_, _], !step.tile<1x4096xbf16>>
  %tokf = step.flatten %tok {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _], !step.tile<1x4096xbf16>>) -> !step.stream<[_], !step.tile<1x4096xbf16>>
  %p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7 = step.partition %tokf, %sel : (!step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[B], !step.selector<8>>) -> (!step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>)
  %rs0, %pad0 = step.reshape %p0 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad0 : !step.stream<[_, _], i1>
  %acc0 = step.accum %rs0 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra0, %rb0, %rc0, %rx0 = step.broadcast %acc0 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l0 = step.linear_offchip_load %ra0 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f0 = step.flatten %w1l0 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l0 = step.linear_offchip_load %rb0 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f0 = step.flatten %w3l0 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l0 = step.linear_offchip_load %rc0 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f0 = step.flatten %w2l0 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x0 = step.repeat %rx0 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa0, %xb0 = step.broadcast %x0 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg0 = step.zip %xa0, %w1f0 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g0 = step.map %zg0 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu0 = step.zip %xb0, %w3f0 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u0 = step.map %zu0 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s0 = step.map %g0 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh0 = step.zip %s0, %u0 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h0 = step.map %zh0 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd0 = step.zip %h0, %w2f0 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d0 = step.accum %zd0 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o0 = step.flat_map %d0 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs1, %pad1 = step.reshape %p1 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad1 : !step.stream<[_, _], i1>
  %acc1 = step.accum %rs1 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra1, %rb1, %rc1, %rx1 = step.broadcast %acc1 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l1 = step.linear_offchip_load %ra1 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f1 = step.flatten %w1l1 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l1 = step.linear_offchip_load %rb1 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f1 = step.flatten %w3l1 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l1 = step.linear_offchip_load %rc1 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f1 = step.flatten %w2l1 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x1 = step.repeat %rx1 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa1, %xb1 = step.broadcast %x1 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg1 = step.zip %xa1, %w1f1 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g1 = step.map %zg1 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu1 = step.zip %xb1, %w3f1 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u1 = step.map %zu1 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s1 = step.map %g1 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh1 = step.zip %s1, %u1 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h1 = step.map %zh1 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd1 = step.zip %h1, %w2f1 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d1 = step.accum %zd1 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o1 = step.flat_map %d1 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs2, %pad2 = step.reshape %p2 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad2 : !step.stream<[_, _], i1>
  %acc2 = step.accum %rs2 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra2, %rb2, %rc2, %rx2 = step.broadcast %acc2 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l2 = step.linear_offchip_load %ra2 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f2 = step.flatten %w1l2 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l2 = step.linear_offchip_load %rb2 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f2 = step.flatten %w3l2 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l2 = step.linear_offchip_load %rc2 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f2 = step.flatten %w2l2 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x2 = step.repeat %rx2 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa2, %xb2 = step.broadcast %x2 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg2 = step.zip %xa2, %w1f2 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g2 = step.map %zg2 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu2 = step.zip %xb2, %w3f2 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u2 = step.map %zu2 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s2 = step.map %g2 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh2 = step.zip %s2, %u2 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h2 = step.map %zh2 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd2 = step.zip %h2, %w2f2 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d2 = step.accum %zd2 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o2 = step.flat_map %d2 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs3, %pad3 = step.reshape %p3 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad3 : !step.stream<[_, _], i1>
  %acc3 = step.accum %rs3 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra3, %rb3, %rc3, %rx3 = step.broadcast %acc3 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l3 = step.linear_offchip_load %ra3 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f3 = step.flatten %w1l3 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l3 = step.linear_offchip_load %rb3 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f3 = step.flatten %w3l3 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l3 = step.linear_offchip_load %rc3 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f3 = step.flatten %w2l3 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x3 = step.repeat %rx3 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa3, %xb3 = step.broadcast %x3 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg3 = step.zip %xa3, %w1f3 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g3 = step.map %zg3 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu3 = step.zip %xb3, %w3f3 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u3 = step.map %zu3 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s3 = step.map %g3 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh3 = step.zip %s3, %u3 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h3 = step.map %zh3 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd3 = step.zip %h3, %w2f3 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d3 = step.accum %zd3 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o3 = step.flat_map %d3 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs4, %pad4 = step.reshape %p4 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad4 : !step.stream<[_, _], i1>
  %acc4 = step.accum %rs4 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra4, %rb4, %rc4, %rx4 = step.broadcast %acc4 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l4 = step.linear_offchip_load %ra4 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f4 = step.flatten %w1l4 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l4 = step.linear_offchip_load %rb4 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f4 = step.flatten %w3l4 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l4 = step.linear_offchip_load %rc4 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f4 = step.flatten %w2l4 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x4 = step.repeat %rx4 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa4, %xb4 = step.broadcast %x4 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg4 = step.zip %xa4, %w1f4 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g4 = step.map %zg4 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu4 = step.zip %xb4, %w3f4 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u4 = step.map %zu4 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s4 = step.map %g4 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh4 = step.zip %s4, %u4 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h4 = step.map %zh4 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd4 = step.zip %h4, %w2f4 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d4 = step.accum %zd4 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o4 = step.flat_map %d4 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs5, %pad5 = step.reshape %p5 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad5 : !step.stream<[_, _], i1>
  %acc5 = step.accum %rs5 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra5, %rb5, %rc5, %rx5 = step.broadcast %acc5 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l5 = step.linear_offchip_load %ra5 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f5 = step.flatten %w1l5 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l5 = step.linear_offchip_load %rb5 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f5 = step.flatten %w3l5 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l5 = step.linear_offchip_load %rc5 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f5 = step.flatten %w2l5 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x5 = step.repeat %rx5 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa5, %xb5 = step.broadcast %x5 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg5 = step.zip %xa5, %w1f5 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g5 = step.map %zg5 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu5 = step.zip %xb5, %w3f5 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u5 = step.map %zu5 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s5 = step.map %g5 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh5 = step.zip %s5, %u5 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h5 = step.map %zh5 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd5 = step.zip %h5, %w2f5 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d5 = step.accum %zd5 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o5 = step.flat_map %d5 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs6, %pad6 = step.reshape %p6 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad6 : !step.stream<[_, _], i1>
  %acc6 = step.accum %rs6 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra6, %rb6, %rc6, %rx6 = step.broadcast %acc6 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l6 = step.linear_offchip_load %ra6 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f6 = step.flatten %w1l6 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l6 = step.linear_offchip_load %rb6 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f6 = step.flatten %w3l6 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l6 = step.linear_offchip_load %rc6 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f6 = step.flatten %w2l6 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x6 = step.repeat %rx6 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa6, %xb6 = step.broadcast %x6 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg6 = step.zip %xa6, %w1f6 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g6 = step.map %zg6 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu6 = step.zip %xb6, %w3f6 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u6 = step.map %zu6 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s6 = step.map %g6 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh6 = step.zip %s6, %u6 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h6 = step.map %zh6 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd6 = step.zip %h6, %w2f6 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d6 = step.accum %zd6 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o6 = step.flat_map %d6 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %rs7, %pad7 = step.reshape %p7 {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[_], !step.tile<1x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<1x4096xbf16>>, !step.stream<[_, _], i1>)
  step.consume %pad7 : !step.stream<[_, _], i1>
  %acc7 = step.accum %rs7 {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %n = step.apply "retile_row"(%a, %t) : (!step.tile<?x4096xbf16>, !step.tile<1x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %ra7, %rb7, %rc7, %rx7 = step.broadcast %acc7 : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> (!step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>, !step.stream<[_], !step.tile<?x4096xbf16>>)
  %w1l7 = step.linear_offchip_load %ra7 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w1f7 = step.flatten %w1l7 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w3l7 = step.linear_offchip_load %rb7 {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %w3f7 = step.flatten %w3l7 {min = 1 : i64, max = 2 : i64} : (!step.stream<[_, _, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tile<4096x64xbf16>>
  %w2l7 = step.linear_offchip_load %rc7 {base_addr = 0 : i64, tiled_in_shape = array<i64: 224, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 224, 1>} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _, _], !step.tile<64x4096xbf16>>
  %w2f7 = step.flatten %w2l7 {min = 0 : i64, max = 1 : i64} : (!step.stream<[_, _, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tile<64x4096xbf16>>
  %x7 = step.repeat %rx7 {count = 224 : i64} : (!step.stream<[_], !step.tile<?x4096xbf16>>) -> !step.stream<[_, _], !step.tile<?x4096xbf16>>
  %xa7, %xb7 = step.broadcast %x7 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>) -> (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<?x4096xbf16>>)
  %zg7 = step.zip %xa7, %w1f7 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %g7 = step.map %zg7 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zu7 = step.zip %xb7, %w3f7 : (!step.stream<[_, _], !step.tile<?x4096xbf16>>, !step.stream<[_, _], !step.tile<4096x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>>
  %u7 = step.map %zu7 : !step.stream<[_, _], !step.tuple<!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>, %r: !step.tile<4096x64xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x4096xbf16>, !step.tile<4096x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %s7 = step.map %g7 : !step.stream<[_, _], !step.tile<?x64xbf16>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>):
    %m = step.apply "silu"(%l) : (!step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zh7 = step.zip %s7, %u7 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<?x64xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>>
  %h7 = step.map %zh7 : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<?x64xbf16>>> -> !step.stream<[_, _], !step.tile<?x64xbf16>> {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<?x64xbf16>):
    %m = step.apply "mul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<?x64xbf16>) -> !step.tile<?x64xbf16>
    step.yield %m : !step.tile<?x64xbf16>
  }
  %zd7 = step.zip %h7, %w2f7 : (!step.stream<[_, _], !step.tile<?x64xbf16>>, !step.stream<[_, _], !step.tile<64x4096xbf16>>) -> !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>>
  %d7 = step.accum %zd7 {rank = 1 : i64} : !step.stream<[_, _], !step.tuple<!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>>> -> !step.stream<[_], !step.tile<?x4096xbf16>> update {
  ^bb0(%l: !step.tile<?x64xbf16>, %r: !step.tile<64x4096xbf16>, %a: !step.tile<?x4096xbf16>):
    %m = step.apply "matmul"(%l, %r) : (!step.tile<?x64xbf16>, !step.tile<64x4096xbf16>) -> !step.tile<?x4096xbf16>
    %n = step.apply "add"(%a, %m) : (!step.tile<?x4096xbf16>, !step.tile<?x4096xbf16>) -> !step.tile<?x4096xbf16>
    step.yield %n : !step.tile<?x4096xbf16>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<?x4096xbf16>
    step.yield %z : !step.tile<?x4096xbf16>
  }
  %o7 = step.flat_map %d7 {rank = 0 : i64} : !step.stream<[_], !step.tile<?x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xbf16>> {
  ^bb0(%l: !step.tile<?x4096xbf16>):
    %m = step.apply "retile_streamify"(%l) : (!step.tile<?x4096xbf16>) -> !step.tile<1x4096xbf16>
    step.yield %m : !step.tile<1x4096xbf16>
  }
  %re = step.reassemble %o0, %o1, %o2, %o3, %o4, %o5, %o6, %o7, %sel2 : (!step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[_], !step.tile<1x4096xbf16>>, !step.stream<[B], !step.selector<8>>) -> !step.stream<[_, _], !step.tile<1x4096xbf16>>
  %out = step.accum %re {rank = 1 : i64} : !step.stream<[_, _], !step.tile<1x4096xbf16>> -> !step.stream<[_], !step.tile<1x4096xf32>> update {
  ^bb0(%t: !step.tile<1x4096xbf16>, %a: !step.tile<1x4096xf32>):
    %n = step.apply "add"(%a, %t) : (!step.tile<1x4096xf32>, !step.tile<1x4096xbf16>) -> !step.tile<1x4096xf32>
    step.yield %n : !step.tile<1x4096xf32>
  } init {
    %z = step.apply "zero"() : () -> !step.tile<1x4096xf32>
    step.yield %z : !step.tile<1x4096xf32>
  }
  step.linear_offchip_store %out {base_addr = 0 : i64} : !step.stream<[_], !step.tile<1x4096xf32>>
}
