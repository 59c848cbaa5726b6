// RUN: step-opt %s -p step-infer-shapes | filecheck %s
// RUN: step-opt %s -p step-infer-shapes | step-opt -p step-infer-shapes | filecheck %s
// RUN: step-opt %S/inputs/step-moe-fig2.mlir -p step-infer-shapes | filecheck %s --check-prefix=MOE
// One graph per shape rule (seed appendix tables 2-6); `_` dims are filled in,
// written dims are checked (and kept where the table introduces a fresh dim).

// Table 2. The seed's example: a ref of [?C] tokens-tiles reads the [4096, 14336]
// weight as 1 x 224 tiles of 4096x64 -> [?C, 1, 224].
// CHECK-LABEL: step.graph @offchip
// CHECK: %w = step.linear_offchip_load %ref {{.*}} -> !step.stream<[?C, 1, 224], !step.tile<4096x64xbf16>>
// CHECK: %c = step.linear_offchip_load {{.*}} : () -> !step.stream<[4, 2], !step.tile<64x64xbf16>>
// CHECK: %t = step.random_offchip_load %addr {{.*}} -> !step.stream<[N, ?L], !step.tile<32x64xbf16>>
// CHECK: %ack = step.random_offchip_store %waddr, %wdata {{.*}} -> !step.stream<[N], i1>
step.graph @offchip {
^bb0(%ref: !step.stream<[?C], !step.tile<1x1xi64>>, %addr: !step.stream<[N, ?L], !step.tile<1x1xi64>>, %waddr: !step.stream<[N], !step.tile<1x1xi64>>, %wdata: !step.stream<[N], !step.tile<8x64xbf16>>):
  %w = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1, 224>, stride = array<i64: 224, 1>, tiled_out_shape = array<i64: 1, 224>} : (!step.stream<[?C], !step.tile<1x1xi64>>) -> !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  %c = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 4, 2>} : () -> !step.stream<[4, _], !step.tile<64x64xbf16>>
  %t = step.random_offchip_load %addr {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N, ?L], !step.tile<1x1xi64>>) -> !step.stream<[_, _], !step.tile<32x64xbf16>>
  %ack = step.random_offchip_store %waddr, %wdata {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[N], !step.tile<1x1xi64>>, !step.stream<[N], !step.tile<8x64xbf16>>) -> !step.stream<[_], i1>
  step.consume %w : !step.stream<[_, _, _], !step.tile<4096x64xbf16>>
  step.consume %c : !step.stream<[4, _], !step.tile<64x64xbf16>>
  step.consume %t : !step.stream<[_, _], !step.tile<32x64xbf16>>
  step.consume %ack : !step.stream<[_], i1>
}

// Table 3. Bufferize keeps the outer dims and buffers the inner ones; Streamify
// reads a static buffer with out_shape and a dynamic one linearly (its dims).
// CHECK-LABEL: step.graph @onchip
// CHECK: %b = step.bufferize %x {rank = 2 : i64} : {{.*}} -> !step.stream<[4], !step.buffer<[B, 8], !step.tile<16x16xf32>>>
// CHECK: %s = step.streamify %b, %r {{.*}} -> !step.stream<[4, 3, B, 8], !step.tile<16x16xf32>>
// CHECK: %sb = step.bufferize %y {rank = 1 : i64} : {{.*}} -> !step.stream<[4], !step.buffer<[8], !step.tile<16x16xf32>>>
// CHECK: %ss = step.streamify %sb, %r2 {{.*}} -> !step.stream<[4, 3, 2, 4], !step.tile<16x16xf32>>
step.graph @onchip {
^bb0(%x: !step.stream<[4, B, 8], !step.tile<16x16xf32>>, %r: !step.stream<[4, 3], !step.tile<1x1xi64>>, %y: !step.stream<[4, 8], !step.tile<16x16xf32>>, %r2: !step.stream<[4, 3], !step.tile<1x1xi64>>):
  %b = step.bufferize %x {rank = 2 : i64} : (!step.stream<[4, B, 8], !step.tile<16x16xf32>>) -> !step.stream<[_], !step.buffer<[_, _], !step.tile<16x16xf32>>>
  %s = step.streamify %b, %r {stride = array<i64: 8, 1>, out_shape = array<i64: 2, 8>} : (!step.stream<[_], !step.buffer<[_, _], !step.tile<16x16xf32>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>) -> !step.stream<[_, _, _, _], !step.tile<16x16xf32>>
  %sb = step.bufferize %y {rank = 1 : i64} : (!step.stream<[4, 8], !step.tile<16x16xf32>>) -> !step.stream<[_], !step.buffer<[_], !step.tile<16x16xf32>>>
  %ss = step.streamify %sb, %r2 {stride = array<i64: 4, 1>, out_shape = array<i64: 2, 4>} : (!step.stream<[_], !step.buffer<[_], !step.tile<16x16xf32>>>, !step.stream<[4, 3], !step.tile<1x1xi64>>) -> !step.stream<[_, _, _, _], !step.tile<16x16xf32>>
  step.consume %s : !step.stream<[_, _, _, _], !step.tile<16x16xf32>>
  step.consume %ss : !step.stream<[_, _, _, _], !step.tile<16x16xf32>>
}

// Table 4. Map and Scan keep the shape, Accum drops `rank` inner dims,
// FlatMap replaces the innermost dim by `rank + 1` fresh (ragged) dims.
// CHECK-LABEL: step.graph @higher_order
// CHECK: %m = step.map %x : !step.stream<[N, 8], !step.tile<16x64xf32>> -> !step.stream<[N, 8], !step.tile<16x64xf32>>
// CHECK: %a = step.accum %m {rank = 1 : i64} : !step.stream<[N, 8], !step.tile<16x64xf32>> -> !step.stream<[N], !step.tile<16x64xf32>>
// CHECK: %s = step.scan %y {rank = 1 : i64} : !step.stream<[N, ?K], !step.tile<16x64xf32>> -> !step.stream<[N, ?K], !step.tile<16x64xf32>>
// CHECK: %f = step.flat_map %a {rank = 1 : i64} : !step.stream<[N], !step.tile<16x64xf32>> -> !step.stream<[?F, ?F_1], !step.tile<1x64xf32>>
// CHECK: %g = step.flat_map %z {rank = 1 : i64} : !step.stream<[M], !step.tile<16x64xf32>> -> !step.stream<[M, 16], !step.tile<1x64xf32>>
step.graph @higher_order {
^bb0(%x: !step.stream<[N, 8], !step.tile<16x64xf32>>, %y: !step.stream<[N, ?K], !step.tile<16x64xf32>>, %z: !step.stream<[M], !step.tile<16x64xf32>>):
  %m = step.map %x : !step.stream<[N, 8], !step.tile<16x64xf32>> -> !step.stream<[_, _], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  %a = step.accum %m {rank = 1 : i64} : !step.stream<[_, _], !step.tile<16x64xf32>> -> !step.stream<[_], !step.tile<16x64xf32>> update {
  ^bb0(%t: !step.tile<16x64xf32>, %acc: !step.tile<16x64xf32>):
    %n = step.apply "add"(%acc, %t) : (!step.tile<16x64xf32>, !step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %n : !step.tile<16x64xf32>
  } init {
    %zero = step.apply "zero"() : () -> !step.tile<16x64xf32>
    step.yield %zero : !step.tile<16x64xf32>
  }
  %s = step.scan %y {rank = 1 : i64} : !step.stream<[N, ?K], !step.tile<16x64xf32>> -> !step.stream<[_, _], !step.tile<16x64xf32>> update {
  ^bb0(%t: !step.tile<16x64xf32>, %acc: !step.tile<16x64xf32>):
    %n = step.apply "add"(%acc, %t) : (!step.tile<16x64xf32>, !step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %n : !step.tile<16x64xf32>
  } init {
    %zero = step.apply "zero"() : () -> !step.tile<16x64xf32>
    step.yield %zero : !step.tile<16x64xf32>
  }
  %f = step.flat_map %a {rank = 1 : i64} : !step.stream<[_], !step.tile<16x64xf32>> -> !step.stream<[_, _], !step.tile<1x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %rows = step.apply "retile_streamify"(%t) : (!step.tile<16x64xf32>) -> !step.tile<1x64xf32>
    step.yield %rows : !step.tile<1x64xf32>
  }
  %g = step.flat_map %z {rank = 1 : i64} : !step.stream<[M], !step.tile<16x64xf32>> -> !step.stream<[M, 16], !step.tile<1x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %rows = step.apply "retile_streamify"(%t) : (!step.tile<16x64xf32>) -> !step.tile<1x64xf32>
    step.yield %rows : !step.tile<1x64xf32>
  }
  step.consume %s : !step.stream<[_, _], !step.tile<16x64xf32>>
  step.consume %f : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %g : !step.stream<[M, 16], !step.tile<1x64xf32>>
}

// Table 5, seed Fig. 3: Partition of [B, 4] by a [B] selector gives each output
// a fresh regular outer dim B_i; a rank-2 selector flattens [B, K] into it.
// CHECK-LABEL: step.graph @partition
// CHECK: %a, %b = step.partition %x, %s : {{.*}} -> (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>)
// CHECK: %c, %d = step.partition %y, %s2 : {{.*}} -> (!step.stream<[P_0, 64], !step.tile<1x1xf32>>, !step.stream<[P_1, 64], !step.tile<1x1xf32>>)
step.graph @partition {
^bb0(%x: !step.stream<[B, 4], !step.tile<1x64xf32>>, %s: !step.stream<[B], !step.selector<2>>, %y: !step.stream<[B, K, 64], !step.tile<1x1xf32>>, %s2: !step.stream<[B, K], !step.selector<2>>):
  %a, %b = step.partition %x, %s : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[_, _], !step.tile<1x64xf32>>, !step.stream<[_, 4], !step.tile<1x64xf32>>)
  %c, %d = step.partition %y, %s2 : (!step.stream<[B, K, 64], !step.tile<1x1xf32>>, !step.stream<[B, K], !step.selector<2>>) -> (!step.stream<[_, _], !step.tile<1x1xf32>>, !step.stream<[_, _], !step.tile<1x1xf32>>)
  step.consume %a : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %b : !step.stream<[_, 4], !step.tile<1x64xf32>>
  step.consume %c : !step.stream<[_, _], !step.tile<1x1xf32>>
  step.consume %d : !step.stream<[_, _], !step.tile<1x1xf32>>
}

// Table 5, seed Fig. 4: Reassemble adds the selector's dims and a fresh ragged
// dim (B_sel: a multi-hot selector picks a varying number of inputs);
// EagerMerge sums the inputs' outer dims, also for its selector result.
// CHECK-LABEL: step.graph @merge
// CHECK: %r = step.reassemble %a, %b, %s : {{.*}} -> !step.stream<[B, ?B_sel, 4], !step.tile<1x64xf32>>
// CHECK: %d, %ds = step.eager_merge %c, %e : {{.*}} -> (!step.stream<["C_0 + C_1", 4], !step.tile<1x64xf32>>, !step.stream<["C_0 + C_1"], !step.selector<2>>)
step.graph @merge {
^bb0(%a: !step.stream<[B_0, 4], !step.tile<1x64xf32>>, %b: !step.stream<[B_1, 4], !step.tile<1x64xf32>>, %s: !step.stream<[B], !step.selector<2>>, %c: !step.stream<[C_0, 4], !step.tile<1x64xf32>>, %e: !step.stream<[C_1, 4], !step.tile<1x64xf32>>):
  %r = step.reassemble %a, %b, %s : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>) -> !step.stream<[_, _, _], !step.tile<1x64xf32>>
  %d, %ds = step.eager_merge %c, %e : (!step.stream<[C_0, 4], !step.tile<1x64xf32>>, !step.stream<[C_1, 4], !step.tile<1x64xf32>>) -> (!step.stream<[_, _], !step.tile<1x64xf32>>, !step.stream<[_], !step.selector<2>>)
  step.consume %r : !step.stream<[_, _, _], !step.tile<1x64xf32>>
  step.consume %d : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %ds : !step.stream<[_], !step.selector<2>>
}

// Table 6.
// CHECK-LABEL: step.graph @shape
// CHECK: %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : {{.*}} -> !step.stream<[4, 16], !step.tile<1x64xf32>>
// CHECK: %g = step.flatten %y {min = 1 : i64, max = 2 : i64} : {{.*}} -> !step.stream<["?L*B", 8], !step.tile<1x64xf32>>
// CHECK: %d, %p = step.reshape %t {split_dim = 0 : i64, chunk_size = 16 : i64} : {{.*}} -> (!step.stream<["ceiling(B/16)", 16], !step.tile<1x64xf32>>, !step.stream<["ceiling(B/16)", 16], i1>)
// CHECK: %d2, %p2 = step.reshape %u {split_dim = 1 : i64, chunk_size = 4 : i64} : {{.*}} -> (!step.stream<[N, 2, 4, 3], !step.tile<1x64xf32>>, !step.stream<[N, 2, 4, 3], i1>)
// CHECK: %pr = step.promote %n : {{.*}} -> !step.stream<["Min(1, N)", N], !step.tile<1x64xf32>>
// CHECK: %ps = step.promote %st : {{.*}} -> !step.stream<[1, 4], !step.tile<1x64xf32>>
// CHECK: %e = step.expand %q, %k {rank = 1 : i64} : {{.*}} -> !step.stream<[B, ?L], !step.tile<8x64xf32>>
// CHECK: %z = step.zip %za, %zb : {{.*}} -> !step.stream<[N, 2], !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>>
// CHECK: %rep = step.repeat %w {count = 224 : i64} : {{.*}} -> !step.stream<[4, 224], !step.tile<64x64xf32>>
step.graph @shape {
^bb0(%x: !step.stream<[4, 2, 8], !step.tile<1x64xf32>>, %y: !step.stream<[B, ?L, 8], !step.tile<1x64xf32>>, %t: !step.stream<[B], !step.tile<1x64xf32>>, %u: !step.stream<[N, 8, 3], !step.tile<1x64xf32>>, %n: !step.stream<[N], !step.tile<1x64xf32>>, %st: !step.stream<[4], !step.tile<1x64xf32>>, %q: !step.stream<[B, 1], !step.tile<8x64xf32>>, %k: !step.stream<[B, ?L], !step.tile<32x64xf32>>, %za: !step.stream<[N, 2], !step.tile<1x64xf32>>, %zb: !step.stream<[N, 2], !step.tile<8x64xf32>>, %w: !step.stream<[4], !step.tile<64x64xf32>>):
  %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 2, 8], !step.tile<1x64xf32>>) -> !step.stream<[_, _], !step.tile<1x64xf32>>
  %g = step.flatten %y {min = 1 : i64, max = 2 : i64} : (!step.stream<[B, ?L, 8], !step.tile<1x64xf32>>) -> !step.stream<[_, _], !step.tile<1x64xf32>>
  %d, %p = step.reshape %t {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[B], !step.tile<1x64xf32>>) -> (!step.stream<[_, _], !step.tile<1x64xf32>>, !step.stream<[_, 16], i1>)
  %d2, %p2 = step.reshape %u {split_dim = 1 : i64, chunk_size = 4 : i64} : (!step.stream<[N, 8, 3], !step.tile<1x64xf32>>) -> (!step.stream<[_, _, _, _], !step.tile<1x64xf32>>, !step.stream<[_, _, _, _], i1>)
  %pr = step.promote %n : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[_, _], !step.tile<1x64xf32>>
  %ps = step.promote %st : (!step.stream<[4], !step.tile<1x64xf32>>) -> !step.stream<[_, _], !step.tile<1x64xf32>>
  %e = step.expand %q, %k {rank = 1 : i64} : (!step.stream<[B, 1], !step.tile<8x64xf32>>, !step.stream<[B, ?L], !step.tile<32x64xf32>>) -> !step.stream<[_, _], !step.tile<8x64xf32>>
  %z = step.zip %za, %zb : (!step.stream<[N, 2], !step.tile<1x64xf32>>, !step.stream<[N, 2], !step.tile<8x64xf32>>) -> !step.stream<[_, _], !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>>
  %rep = step.repeat %w {count = 224 : i64} : (!step.stream<[4], !step.tile<64x64xf32>>) -> !step.stream<[_, _], !step.tile<64x64xf32>>
  step.consume %f : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %g : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %d : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %p : !step.stream<[_, 16], i1>
  step.consume %d2 : !step.stream<[_, _, _, _], !step.tile<1x64xf32>>
  step.consume %p2 : !step.stream<[_, _, _, _], i1>
  step.consume %pr : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %ps : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %e : !step.stream<[_, _], !step.tile<8x64xf32>>
  step.consume %z : !step.stream<[_, _], !step.tuple<!step.tile<1x64xf32>, !step.tile<8x64xf32>>>
  step.consume %rep : !step.stream<[_, _], !step.tile<64x64xf32>>
}

// Fan-out, parallelize and the generators.
// CHECK-LABEL: step.graph @extras
// CHECK: %b1, %b2 = step.broadcast %x : {{.*}} -> (!step.stream<[N, 2], !step.tile<1x64xf32>>, !step.stream<[N, 2], !step.tile<1x64xf32>>)
// CHECK: %p1, %p2 = step.parallelize %b1 {rank = 1 : i64} : {{.*}} -> (!step.stream<[N_0, 2], !step.tile<1x64xf32>>, !step.stream<[N_1, 2], !step.tile<1x64xf32>>)
// CHECK: %sg = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1, 1, 1>} : !step.stream<[3], !step.selector<2>>
// CHECK: %md = step.metadata_gen {values = array<i64: 3, 7, 5>} : !step.stream<[3], !step.tile<1x1xi64>>
// CHECK: %ea = step.expert_addr_gen %sg {tiles_per_expert = 4 : i64} : {{.*}} -> !step.stream<[3, 4], !step.tile<1x1xi64>>
// CHECK: %ca = step.cache_read_addr_gen %i, %l : {{.*}} -> !step.stream<[B, ?L], !step.tile<1x1xi64>>
// CHECK: %fl = step.filter_last_tile %l2 : {{.*}} -> !step.stream<[B, ?L_1], !step.selector<2>>
step.graph @extras {
^bb0(%x: !step.stream<[N, 2], !step.tile<1x64xf32>>, %i: !step.stream<[B], !step.tile<1x1xi64>>, %l: !step.stream<[B], !step.tile<1x1xi64>>, %l2: !step.stream<[B], !step.tile<1x1xi64>>):
  %b1, %b2 = step.broadcast %x : (!step.stream<[N, 2], !step.tile<1x64xf32>>) -> (!step.stream<[N, 2], !step.tile<1x64xf32>>, !step.stream<[N, 2], !step.tile<1x64xf32>>)
  %p1, %p2 = step.parallelize %b1 {rank = 1 : i64} : (!step.stream<[N, 2], !step.tile<1x64xf32>>) -> (!step.stream<[_, _], !step.tile<1x64xf32>>, !step.stream<[_, _], !step.tile<1x64xf32>>)
  %sg = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1, 1, 1>} : !step.stream<[_], !step.selector<2>>
  %md = step.metadata_gen {values = array<i64: 3, 7, 5>} : !step.stream<[_], !step.tile<1x1xi64>>
  %ea = step.expert_addr_gen %sg {tiles_per_expert = 4 : i64} : (!step.stream<[_], !step.selector<2>>) -> !step.stream<[_, _], !step.tile<1x1xi64>>
  %ca = step.cache_read_addr_gen %i, %l : (!step.stream<[B], !step.tile<1x1xi64>>, !step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[_, _], !step.tile<1x1xi64>>
  %fl = step.filter_last_tile %l2 : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[_, _], !step.selector<2>>
  step.consume %b2 : !step.stream<[N, 2], !step.tile<1x64xf32>>
  step.consume %p1 : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %p2 : !step.stream<[_, _], !step.tile<1x64xf32>>
  step.consume %md : !step.stream<[_], !step.tile<1x1xi64>>
  step.consume %ea : !step.stream<[_, _], !step.tile<1x1xi64>>
  step.consume %ca : !step.stream<[_, _], !step.tile<1x1xi64>>
  step.consume %fl : !step.stream<[_, _], !step.selector<2>>
}

// A feedback edge (dynamic parallelization, seed Fig. 10): EagerMerge's input
// comes from the Partition after it; the fixed point fills both in.
// CHECK-LABEL: step.graph @feedback
// CHECK: %m, %ms = step.eager_merge %x, %back : {{.*}} -> (!step.stream<["B + P_1", 4], !step.tile<1x64xf32>>, !step.stream<["B + P_1"], !step.selector<2>>)
// CHECK: %out, %back = step.partition %m, %ms : {{.*}} -> (!step.stream<[P_0, 4], !step.tile<1x64xf32>>, !step.stream<[P_1, 4], !step.tile<1x64xf32>>)
step.graph @feedback {
^bb0(%x: !step.stream<[B, 4], !step.tile<1x64xf32>>):
  %m, %ms = step.eager_merge %x, %back : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[_, 4], !step.tile<1x64xf32>>) -> (!step.stream<[_, 4], !step.tile<1x64xf32>>, !step.stream<[_], !step.selector<2>>)
  %out, %back = step.partition %m, %ms : (!step.stream<[_, 4], !step.tile<1x64xf32>>, !step.stream<[_], !step.selector<2>>) -> (!step.stream<[_, 4], !step.tile<1x64xf32>>, !step.stream<[_, 4], !step.tile<1x64xf32>>)
  step.consume %out : !step.stream<[_, 4], !step.tile<1x64xf32>>
}

// The MoE layer of seed Fig. 2 (inputs/step-moe-fig2.mlir, all derived dims `_`):
// Partition gives expert i its B_i tokens, packed into ceiling(B_i/16) tiles whose
// loads read the weights as [.., 1, 224] tiles of 4096x64 (W1, W3) and
// [.., 224, 1] tiles of 64x4096 (W2); RetileStreamify gives a fresh ragged row
// count per expert, Reassemble the ragged B_sel (2 experts per token).
// MOE: %tok = step.linear_offchip_load %tref {{.*}} -> !step.stream<[B, 1], !step.tile<1x4096xbf16>>
// MOE: %tokf = step.flatten %tok {{.*}} -> !step.stream<[B], !step.tile<1x4096xbf16>>
// MOE: %p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7 = step.partition %tokf, %sel : {{.*}} -> (!step.stream<[B_0], !step.tile<1x4096xbf16>>, !step.stream<[B_1], {{.*}}, !step.stream<[B_7], !step.tile<1x4096xbf16>>)
// MOE: %rs0, %pad0 = step.reshape %p0 {{.*}} -> (!step.stream<["ceiling(B_0/16)", 16], !step.tile<1x4096xbf16>>, !step.stream<["ceiling(B_0/16)", 16], i1>)
// MOE: %acc0 = step.accum %rs0 {{.*}} -> !step.stream<["ceiling(B_0/16)"], !step.tile<?x4096xbf16>> update
// MOE: %w1l0 = step.linear_offchip_load %ra0 {{.*}} -> !step.stream<["ceiling(B_0/16)", 1, 224], !step.tile<4096x64xbf16>>
// MOE: %w1f0 = step.flatten %w1l0 {{.*}} -> !step.stream<["ceiling(B_0/16)", 224], !step.tile<4096x64xbf16>>
// MOE: %w2l0 = step.linear_offchip_load %rc0 {{.*}} -> !step.stream<["ceiling(B_0/16)", 224, 1], !step.tile<64x4096xbf16>>
// MOE: %x0 = step.repeat %rx0 {{.*}} -> !step.stream<["ceiling(B_0/16)", 224], !step.tile<?x4096xbf16>>
// MOE: %g0 = step.map %zg0 : {{.*}} -> !step.stream<["ceiling(B_0/16)", 224], !step.tile<?x64xbf16>>
// MOE: %d0 = step.accum %zd0 {{.*}} -> !step.stream<["ceiling(B_0/16)"], !step.tile<?x4096xbf16>> update
// MOE: %o0 = step.flat_map %d0 {{.*}} -> !step.stream<[?F], !step.tile<1x4096xbf16>>
// MOE: %acc7 = step.accum %rs7 {{.*}} -> !step.stream<["ceiling(B_7/16)"], !step.tile<?x4096xbf16>> update
// MOE: %o7 = step.flat_map %d7 {{.*}} -> !step.stream<[?F_7], !step.tile<1x4096xbf16>>
// MOE: %re = step.reassemble {{.*}} -> !step.stream<[B, ?B_sel], !step.tile<1x4096xbf16>>
// MOE: %out = step.accum %re {{.*}} -> !step.stream<[B], !step.tile<1x4096xf32>> update
// MOE: step.linear_offchip_store %out {base_addr = 0 : i64} : !step.stream<[B], !step.tile<1x4096xf32>>
