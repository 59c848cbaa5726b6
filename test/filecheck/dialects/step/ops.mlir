// RUN: step-opt %s | filecheck %s
// RUN: step-opt %s | step-opt | filecheck %s
// RUN: step-opt %s --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC
// RUN: step-opt %s --print-op-generic | step-opt | filecheck %s

// CHECK-LABEL: step.graph @memory {
// CHECK-GENERIC-LABEL: "step.graph"() <{sym_name = "memory"}> ({
step.graph @memory {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>, %addr: !step.stream<[N], !step.tile<1x1xi64>>, %waddr: !step.stream<[N], !step.tile<1x1xi64>>, %wdata: !step.stream<[N], !step.tile<8x64xbf16>>, %r: !step.stream<[4, 3], !step.tile<1x1xi64>>):
  // CHECK: %w = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 4, 2>} : () -> !step.stream<[4, 2], !step.tile<64x64xbf16>>
  // CHECK-GENERIC: %w = "step.linear_offchip_load"() <{base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 4, 2>}> : () -> !step.stream<[4, 2], !step.tile<64x64xbf16>>
  %w = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 4, 2>} : () -> !step.stream<[4, 2], !step.tile<64x64xbf16>>
  // CHECK-NEXT: %x = step.linear_offchip_load %ref {base_addr = 64 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  // CHECK-GENERIC: "step.linear_offchip_load"(%ref)
  %x = step.linear_offchip_load %ref {base_addr = 64 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  // CHECK-NEXT: step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[B, 2], !step.tile<16x64xf32>>
  // CHECK-GENERIC: "step.linear_offchip_store"(%x) <{base_addr = 4096 : i64}> : (!step.stream<[B, 2], !step.tile<16x64xf32>>) -> ()
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[B, 2], !step.tile<16x64xf32>>
  // CHECK-NEXT: %t = step.random_offchip_load %addr {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N], !step.tile<1x1xi64>>) -> !step.stream<[N], !step.tile<32x64xbf16>>
  // CHECK-GENERIC: "step.random_offchip_load"(%addr)
  %t = step.random_offchip_load %addr {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N], !step.tile<1x1xi64>>) -> !step.stream<[N], !step.tile<32x64xbf16>>
  // CHECK-NEXT: %ack = step.random_offchip_store %waddr, %wdata {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>, buffer_depth = 4 : i64} : (!step.stream<[N], !step.tile<1x1xi64>>, !step.stream<[N], !step.tile<8x64xbf16>>) -> !step.stream<[N], i1>
  // CHECK-GENERIC: "step.random_offchip_store"(%waddr, %wdata)
  %ack = step.random_offchip_store %waddr, %wdata {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>, buffer_depth = 4 : i64} : (!step.stream<[N], !step.tile<1x1xi64>>, !step.stream<[N], !step.tile<8x64xbf16>>) -> !step.stream<[N], i1>
  // CHECK-NEXT: %b = step.bufferize %w {rank = 1 : i64} : (!step.stream<[4, 2], !step.tile<64x64xbf16>>) -> !step.stream<[4], !step.buffer<[2], !step.tile<64x64xbf16>>>
  // CHECK-GENERIC: "step.bufferize"(%w) <{rank = 1 : i64}>
  %b = step.bufferize %w {rank = 1 : i64} : (!step.stream<[4, 2], !step.tile<64x64xbf16>>) -> !step.stream<[4], !step.buffer<[2], !step.tile<64x64xbf16>>>
  // CHECK-NEXT: %s = step.streamify %b, %r {stride = array<i64: 1>, out_shape = array<i64: 2>} : (!step.stream<[4], !step.buffer<[2], !step.tile<64x64xbf16>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>) -> !step.stream<[4, 3, 2], !step.tile<64x64xbf16>>
  // CHECK-GENERIC: "step.streamify"(%b, %r)
  %s = step.streamify %b, %r {stride = array<i64: 1>, out_shape = array<i64: 2>} : (!step.stream<[4], !step.buffer<[2], !step.tile<64x64xbf16>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>) -> !step.stream<[4, 3, 2], !step.tile<64x64xbf16>>
  // CHECK-NEXT: step.consume %t : !step.stream<[N], !step.tile<32x64xbf16>>
  step.consume %t : !step.stream<[N], !step.tile<32x64xbf16>>
  step.consume %ack : !step.stream<[N], i1>
  step.consume %s : !step.stream<[4, 3, 2], !step.tile<64x64xbf16>>
}

// CHECK-LABEL: step.graph @higher_order {
// CHECK-GENERIC-LABEL: "step.graph"() <{sym_name = "higher_order"}> ({
step.graph @higher_order {
^bb0(%x: !step.stream<[N, 8], !step.tile<16x64xf32>>, %w: !step.stream<[N, 8], !step.tile<64x32xf32>>, %y: !step.stream<[4, 8], !step.tile<16x16xf32>>, %r: !step.stream<[N], !step.tile<16x64xf32>>):
  // CHECK: %z = step.zip %x, %w : (!step.stream<[N, 8], !step.tile<16x64xf32>>, !step.stream<[N, 8], !step.tile<64x32xf32>>) -> !step.stream<[N, 8], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>>
  // CHECK-GENERIC: "step.zip"(%x, %w)
  %z = step.zip %x, %w : (!step.stream<[N, 8], !step.tile<16x64xf32>>, !step.stream<[N, 8], !step.tile<64x32xf32>>) -> !step.stream<[N, 8], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>>
  // CHECK: %m = step.map %z : !step.stream<[N, 8], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>> -> !step.stream<[N, 8], !step.tile<16x32xf32>> {
  // CHECK-NEXT: ^bb0(%a: !step.tile<16x64xf32>, %bb: !step.tile<64x32xf32>):
  // CHECK-NEXT:   %c = step.apply "matmul"(%a, %bb) : (!step.tile<16x64xf32>, !step.tile<64x32xf32>) -> !step.tile<16x32xf32>
  // CHECK-NEXT:   step.yield %c : !step.tile<16x32xf32>
  // CHECK-NEXT: }
  // CHECK-GENERIC: "step.map"(%z) ({
  // CHECK-GENERIC: "step.apply"(%a, %bb) <{fn = "matmul"}> : (!step.tile<16x64xf32>, !step.tile<64x32xf32>) -> !step.tile<16x32xf32>
  // CHECK-GENERIC: "step.yield"(%c) : (!step.tile<16x32xf32>) -> ()
  %m = step.map %z : !step.stream<[N, 8], !step.tuple<!step.tile<16x64xf32>, !step.tile<64x32xf32>>> -> !step.stream<[N, 8], !step.tile<16x32xf32>> {
  ^bb0(%a: !step.tile<16x64xf32>, %bb: !step.tile<64x32xf32>):
    %c = step.apply "matmul"(%a, %bb) : (!step.tile<16x64xf32>, !step.tile<64x32xf32>) -> !step.tile<16x32xf32>
    step.yield %c : !step.tile<16x32xf32>
  }
  // CHECK: %acc = step.accum %m {rank = 1 : i64} : !step.stream<[N, 8], !step.tile<16x32xf32>> -> !step.stream<[N], !step.tile<16x32xf32>> update {
  // CHECK: } init {
  // CHECK-GENERIC: "step.accum"(%m) <{rank = 1 : i64}> ({
  %acc = step.accum %m {rank = 1 : i64} : !step.stream<[N, 8], !step.tile<16x32xf32>> -> !step.stream<[N], !step.tile<16x32xf32>> update {
  ^bb0(%t: !step.tile<16x32xf32>, %s: !step.tile<16x32xf32>):
    %n = step.apply "add"(%s, %t) : (!step.tile<16x32xf32>, !step.tile<16x32xf32>) -> !step.tile<16x32xf32>
    step.yield %n : !step.tile<16x32xf32>
  } init {
    %zero = step.apply "zero"() : () -> !step.tile<16x32xf32>
    step.yield %zero : !step.tile<16x32xf32>
  }
  // CHECK: %sc = step.scan %y {rank = 1 : i64} : !step.stream<[4, 8], !step.tile<16x16xf32>> -> !step.stream<[4, 8], !step.tile<16x16xf32>> update {
  // CHECK-GENERIC: "step.scan"(%y) <{rank = 1 : i64}> ({
  %sc = step.scan %y {rank = 1 : i64} : !step.stream<[4, 8], !step.tile<16x16xf32>> -> !step.stream<[4, 8], !step.tile<16x16xf32>> update {
  ^bb0(%t: !step.tile<16x16xf32>, %s: !step.tile<16x16xf32>):
    %n = step.apply "add"(%s, %t) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %n : !step.tile<16x16xf32>
  } init {
    %zero = step.apply "zero"() : () -> !step.tile<16x16xf32>
    step.yield %zero : !step.tile<16x16xf32>
  }
  // CHECK: %fm = step.flat_map %r {rank = 1 : i64} : !step.stream<[N], !step.tile<16x64xf32>> -> !step.stream<[N, 16], !step.tile<1x64xf32>> {
  // CHECK-GENERIC: "step.flat_map"(%r) <{rank = 1 : i64}> ({
  %fm = step.flat_map %r {rank = 1 : i64} : !step.stream<[N], !step.tile<16x64xf32>> -> !step.stream<[N, 16], !step.tile<1x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %rows = step.apply "retile_streamify"(%t) : (!step.tile<16x64xf32>) -> !step.tile<1x64xf32>
    step.yield %rows : !step.tile<1x64xf32>
  }
  step.consume %acc : !step.stream<[N], !step.tile<16x32xf32>>
  step.consume %sc : !step.stream<[4, 8], !step.tile<16x16xf32>>
  step.consume %fm : !step.stream<[N, 16], !step.tile<1x64xf32>>
}

// CHECK-LABEL: step.graph @routing {
// CHECK-GENERIC-LABEL: "step.graph"() <{sym_name = "routing"}> ({
step.graph @routing {
^bb0(%x: !step.stream<[B, 4], !step.tile<1x64xf32>>, %sel: !step.stream<[B], !step.selector<2>>, %sel2: !step.stream<[B], !step.selector<2>>, %q: !step.stream<[B, 1], !step.tile<8x64xf32>>):
  // CHECK: %p0, %p1 = step.partition %x, %sel : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>)
  // CHECK-GENERIC: "step.partition"(%x, %sel)
  %p0, %p1 = step.partition %x, %sel : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>)
  // CHECK-NEXT: %a0, %a1 = step.broadcast %p0 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>) -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_0, 4], !step.tile<1x64xf32>>)
  // CHECK-GENERIC: "step.broadcast"(%p0)
  %a0, %a1 = step.broadcast %p0 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>) -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_0, 4], !step.tile<1x64xf32>>)
  // CHECK-NEXT: %d, %s = step.eager_merge %a0, %p1 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>) -> (!step.stream<["B_0 + B_1", 4], !step.tile<1x64xf32>>, !step.stream<["B_0 + B_1"], !step.selector<2>>)
  // CHECK-GENERIC: "step.eager_merge"(%a0, %p1)
  %d, %s = step.eager_merge %a0, %p1 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>) -> (!step.stream<["B_0 + B_1", 4], !step.tile<1x64xf32>>, !step.stream<["B_0 + B_1"], !step.selector<2>>)
  // CHECK-NEXT: %re = step.reassemble %a1, %d, %sel2 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<["B_0 + B_1", 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> !step.stream<[B, ?C, 4], !step.tile<1x64xf32>>
  // CHECK-GENERIC: "step.reassemble"(%a1, %d, %sel2)
  %re = step.reassemble %a1, %d, %sel2 : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<["B_0 + B_1", 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> !step.stream<[B, ?C, 4], !step.tile<1x64xf32>>
  // CHECK-NEXT: %q0, %q1 = step.parallelize %q {rank = 1 : i64, switch_cycles = array<i64: 1, 1>} : (!step.stream<[B, 1], !step.tile<8x64xf32>>) -> (!step.stream<[B_0, 1], !step.tile<8x64xf32>>, !step.stream<[B_1, 1], !step.tile<8x64xf32>>)
  // CHECK-GENERIC: "step.parallelize"(%q)
  %q0, %q1 = step.parallelize %q {rank = 1 : i64, switch_cycles = array<i64: 1, 1>} : (!step.stream<[B, 1], !step.tile<8x64xf32>>) -> (!step.stream<[B_0, 1], !step.tile<8x64xf32>>, !step.stream<[B_1, 1], !step.tile<8x64xf32>>)
  step.consume %re : !step.stream<[B, ?C, 4], !step.tile<1x64xf32>>
  step.consume %s : !step.stream<["B_0 + B_1"], !step.selector<2>>
  step.consume %q0 : !step.stream<[B_0, 1], !step.tile<8x64xf32>>
  step.consume %q1 : !step.stream<[B_1, 1], !step.tile<8x64xf32>>
}

// CHECK-LABEL: step.graph @shape {
step.graph @shape {
^bb0(%x: !step.stream<[4, 2, 8], !step.tile<1x64xf32>>, %t: !step.stream<[B], !step.tile<1x64xf32>>, %n: !step.stream<[N], !step.tile<1x64xf32>>, %q: !step.stream<[B, 1], !step.tile<8x64xf32>>, %k: !step.stream<[B, ?L], !step.tile<32x64xf32>>, %w: !step.stream<[4], !step.tile<64x64xf32>>, %v: !step.stream<[4, 2, 8], !step.tile<1x64xf32>>):
  // CHECK: %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[4, 16], !step.tile<1x64xf32>>
  // CHECK-GENERIC: "step.flatten"(%x) <{min = 0 : i64, max = 1 : i64}>
  %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[4, 16], !step.tile<1x64xf32>>
  // CHECK-NEXT: %d, %p = step.reshape %t {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[B], !step.tile<1x64xf32>>) -> (!step.stream<["ceil(B/16)", 16], !step.tile<1x64xf32>>, !step.stream<["ceil(B/16)", 16], i1>)
  // CHECK-GENERIC: "step.reshape"(%t) <{split_dim = 0 : i64, chunk_size = 16 : i64}>
  %d, %p = step.reshape %t {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[B], !step.tile<1x64xf32>>) -> (!step.stream<["ceil(B/16)", 16], !step.tile<1x64xf32>>, !step.stream<["ceil(B/16)", 16], i1>)
  // CHECK-NEXT: %pr = step.promote %n : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[1, N], !step.tile<1x64xf32>>
  // CHECK-GENERIC: "step.promote"(%n)
  %pr = step.promote %n : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[1, N], !step.tile<1x64xf32>>
  // CHECK-NEXT: %e = step.expand %q, %k {rank = 1 : i64} : (!step.stream<[B, 1], !step.tile<8x64xf32>>, !step.stream<[B, ?L], !step.tile<32x64xf32>>) -> !step.stream<[B, ?L], !step.tile<8x64xf32>>
  // CHECK-GENERIC: "step.expand"(%q, %k)
  %e = step.expand %q, %k {rank = 1 : i64} : (!step.stream<[B, 1], !step.tile<8x64xf32>>, !step.stream<[B, ?L], !step.tile<32x64xf32>>) -> !step.stream<[B, ?L], !step.tile<8x64xf32>>
  // CHECK-NEXT: %r = step.repeat %w {count = 224 : i64} : (!step.stream<[4], !step.tile<64x64xf32>>) -> !step.stream<[4, 224], !step.tile<64x64xf32>>
  // CHECK-GENERIC: "step.repeat"(%w) <{count = 224 : i64}>
  %r = step.repeat %w {count = 224 : i64} : (!step.stream<[4], !step.tile<64x64xf32>>) -> !step.stream<[4, 224], !step.tile<64x64xf32>>
  // CHECK-NEXT: %g = step.regroup %v {dim = 1 : i64, axis = 0 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[4, 1, 8], !step.tile<2x64xf32>>
  // CHECK-GENERIC: "step.regroup"(%v) <{dim = 1 : i64, axis = 0 : i64}>
  %g = step.regroup %v {dim = 1 : i64, axis = 0 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[4, 1, 8], !step.tile<2x64xf32>>
  step.consume %f : !step.stream<[4, 16], !step.tile<1x64xf32>>
  step.consume %d : !step.stream<["ceil(B/16)", 16], !step.tile<1x64xf32>>
  step.consume %p : !step.stream<["ceil(B/16)", 16], i1>
  step.consume %pr : !step.stream<[1, N], !step.tile<1x64xf32>>
  step.consume %e : !step.stream<[B, ?L], !step.tile<8x64xf32>>
  step.consume %r : !step.stream<[4, 224], !step.tile<64x64xf32>>
  step.consume %g : !step.stream<[4, 1, 8], !step.tile<2x64xf32>>
}

// CHECK-LABEL: step.graph @generators {
step.graph @generators {
^bb0(%sel: !step.stream<[N], !step.selector<8>>):
  // CHECK: %s = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1>} : !step.stream<[2], !step.selector<2>>
  // CHECK-GENERIC: "step.select_gen"() <{choices = 2 : i64, values = array<i64: 1, 0, 0, 1>}> : () -> !step.stream<[2], !step.selector<2>>
  %s = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1>} : !step.stream<[2], !step.selector<2>>
  // CHECK-NEXT: %i = step.metadata_gen {values = array<i64: 0, 1, 2>} : !step.stream<[3], !step.tile<1x1xi64>>
  // CHECK-GENERIC: "step.metadata_gen"()
  %i = step.metadata_gen {values = array<i64: 0, 1, 2>} : !step.stream<[3], !step.tile<1x1xi64>>
  // CHECK-NEXT: %l = step.metadata_gen {values = array<i64: 3, 7, 5>} : !step.stream<[3], !step.tile<1x1xi64>>
  %l = step.metadata_gen {values = array<i64: 3, 7, 5>} : !step.stream<[3], !step.tile<1x1xi64>>
  // CHECK-NEXT: %l0, %l1 = step.broadcast %l
  %l0, %l1 = step.broadcast %l : (!step.stream<[3], !step.tile<1x1xi64>>) -> (!step.stream<[3], !step.tile<1x1xi64>>, !step.stream<[3], !step.tile<1x1xi64>>)
  // CHECK-NEXT: %a = step.cache_read_addr_gen %i, %l0 : (!step.stream<[3], !step.tile<1x1xi64>>, !step.stream<[3], !step.tile<1x1xi64>>) -> !step.stream<[3, ?L], !step.tile<1x1xi64>>
  // CHECK-GENERIC: "step.cache_read_addr_gen"(%i, %l0)
  %a = step.cache_read_addr_gen %i, %l0 : (!step.stream<[3], !step.tile<1x1xi64>>, !step.stream<[3], !step.tile<1x1xi64>>) -> !step.stream<[3, ?L], !step.tile<1x1xi64>>
  // CHECK-NEXT: %c = step.filter_last_tile %l1 : (!step.stream<[3], !step.tile<1x1xi64>>) -> !step.stream<[3, ?L], !step.selector<2>>
  // CHECK-GENERIC: "step.filter_last_tile"(%l1)
  %c = step.filter_last_tile %l1 : (!step.stream<[3], !step.tile<1x1xi64>>) -> !step.stream<[3, ?L], !step.selector<2>>
  // CHECK-NEXT: %ea = step.expert_addr_gen %sel {tiles_per_expert = 4 : i64} : (!step.stream<[N], !step.selector<8>>) -> !step.stream<[N, 4], !step.tile<1x1xi64>>
  // CHECK-GENERIC: "step.expert_addr_gen"(%sel) <{tiles_per_expert = 4 : i64}>
  %ea = step.expert_addr_gen %sel {tiles_per_expert = 4 : i64} : (!step.stream<[N], !step.selector<8>>) -> !step.stream<[N, 4], !step.tile<1x1xi64>>
  step.consume %s : !step.stream<[2], !step.selector<2>>
  step.consume %a : !step.stream<[3, ?L], !step.tile<1x1xi64>>
  step.consume %c : !step.stream<[3, ?L], !step.selector<2>>
  step.consume %ea : !step.stream<[N, 4], !step.tile<1x1xi64>>
}
