// RUN: step-opt %s -p 'step-dynamic-parallelize{factor=2}' --split-input-file --verify-diagnostics | filecheck %s
// RUN: sh -c 'step-opt %s -p "step-dynamic-parallelize{factor=0}" --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO:      step-opt: error: invalid options for pass 'step-dynamic-parallelize': factor must be a positive integer, got 0
// ZERO-NEXT: exit=2

// Four requests (an index and a length in KV tiles each) dealt round-robin to
// two identical regions by step.parallelize; each region reads the request's
// tiles, sums them and stores the sum at the request's index. The pass
// dispatches them on demand: requests 0, 1 go to regions 0, 1, every later
// one to the region whose "all tiles read" signal (an accum over its first
// random load, fed back to the eager_merge) arrives first.
// CHECK-LABEL: step.graph @kv {
// CHECK-NEXT:    %idx = step.metadata_gen {values = array<i64: 0, 1, 2, 3>} : !step.stream<[4], !step.tile<1x1xi64>>
// CHECK-NEXT:    %len = step.metadata_gen {values = array<i64: 2, 1, 3, 1>} : !step.stream<[4], !step.tile<1x1xi64>>
// CHECK-NEXT:    %em_data, %em_sel = step.eager_merge %sig0, %sig1 : (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<["4 - N0"], !step.tile<1x1xi64>>) -> (!step.stream<[4], !step.tile<1x1xi64>>, !step.stream<[4], !step.selector<2>>)
// CHECK-NEXT:    step.consume %em_data : !step.stream<[4], !step.tile<1x1xi64>>
// CHECK-NEXT:    %ctl_a_gen = step.select_gen {choices = 2 : i64, values = array<i64: 0, 1, 0, 1, 1, 0, 1, 0>} : !step.stream<[4], !step.selector<2>>
// CHECK-NEXT:    %ctl_a = step.flatten %ctl_a_gen {min = 0 : i64, max = 0 : i64} : (!step.stream<[4], !step.selector<2>>) -> !step.stream<[4], !step.selector<2>>
// CHECK-NEXT:    %pem_last, %pem_steal = step.partition %em_sel, %ctl_a : (!step.stream<[4], !step.selector<2>>, !step.stream<[4], !step.selector<2>>) -> (!step.stream<[2], !step.selector<2>>, !step.stream<[2], !step.selector<2>>)
// CHECK-NEXT:    step.consume %pem_last : !step.stream<[2], !step.selector<2>>
// CHECK-NEXT:    %rr_gen = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 0, 1>} : !step.stream<[2], !step.selector<2>>
// CHECK-NEXT:    %rr = step.flatten %rr_gen {min = 0 : i64, max = 0 : i64} : (!step.stream<[2], !step.selector<2>>) -> !step.stream<[2], !step.selector<2>>
// CHECK-NEXT:    %ctl_b = step.select_gen {choices = 2 : i64, values = array<i64: 1, 0, 1, 0, 0, 1, 0, 1>} : !step.stream<[4], !step.selector<2>>
// CHECK-NEXT:    %asg_reasm = step.reassemble %rr, %pem_steal, %ctl_b : (!step.stream<[2], !step.selector<2>>, !step.stream<[2], !step.selector<2>>, !step.stream<[4], !step.selector<2>>) -> !step.stream<[4, 1], !step.selector<2>>
// CHECK-NEXT:    %asg = step.flatten %asg_reasm {min = 0 : i64, max = 1 : i64} : (!step.stream<[4, 1], !step.selector<2>>) -> !step.stream<[4], !step.selector<2>>
// CHECK-NEXT:    %asg_idx, %asg_len = step.broadcast %asg : (!step.stream<[4], !step.selector<2>>) -> (!step.stream<[4], !step.selector<2>>, !step.stream<[4], !step.selector<2>>)
// CHECK-NEXT:    %idx0, %idx1 = step.partition %idx, %asg_idx : (!step.stream<[4], !step.tile<1x1xi64>>, !step.stream<[4], !step.selector<2>>) -> (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<["4 - N0"], !step.tile<1x1xi64>>)
// CHECK-NEXT:    %len0, %len1 = step.partition %len, %asg_len : (!step.stream<[4], !step.tile<1x1xi64>>, !step.stream<[4], !step.selector<2>>) -> (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<["4 - N0"], !step.tile<1x1xi64>>)
// CHECK-NEXT:    %idx0_rd, %idx0_wr = step.broadcast %idx0 : (!step.stream<[N0], !step.tile<1x1xi64>>) -> (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<[N0], !step.tile<1x1xi64>>)
// CHECK-NEXT:    %idx1_rd, %idx1_wr = step.broadcast %idx1 : (!step.stream<["4 - N0"], !step.tile<1x1xi64>>) -> (!step.stream<["4 - N0"], !step.tile<1x1xi64>>, !step.stream<["4 - N0"], !step.tile<1x1xi64>>)
// CHECK-NEXT:    %addr0 = step.cache_read_addr_gen %idx0_rd, %len0 : (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<[N0], !step.tile<1x1xi64>>) -> !step.stream<[N0, ?L0], !step.tile<1x1xi64>>
// CHECK-NEXT:    %kv0 = step.random_offchip_load %addr0 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[N0, ?L0], !step.tile<1x1xi64>>) -> !step.stream<[N0, ?L0], !step.tile<4x8xf32>>
// CHECK-NEXT:    %kv0_part, %kv0_sig = step.broadcast %kv0 : (!step.stream<[N0, ?L0], !step.tile<4x8xf32>>) -> (!step.stream<[N0, ?L0], !step.tile<4x8xf32>>, !step.stream<[N0, ?L0], !step.tile<4x8xf32>>)
// CHECK-NEXT:    %sum0 = step.accum %kv0_part {rank = 1 : i64} : !step.stream<[N0, ?L0], !step.tile<4x8xf32>> -> !step.stream<[N0], !step.tile<4x8xf32>> update {
// CHECK:         %st0 = step.random_offchip_store %idx0_wr, %sum0 {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>} : (!step.stream<[N0], !step.tile<1x1xi64>>, !step.stream<[N0], !step.tile<4x8xf32>>) -> !step.stream<[N0], i1>
// CHECK-NEXT:    step.consume %st0 : !step.stream<[N0], i1>
// CHECK-NEXT:    %addr1 = step.cache_read_addr_gen %idx1_rd, %len1 : (!step.stream<["4 - N0"], !step.tile<1x1xi64>>, !step.stream<["4 - N0"], !step.tile<1x1xi64>>) -> !step.stream<["4 - N0", ?L1], !step.tile<1x1xi64>>
// CHECK-NEXT:    %kv1 = step.random_offchip_load %addr1 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<["4 - N0", ?L1], !step.tile<1x1xi64>>) -> !step.stream<["4 - N0", ?L1], !step.tile<4x8xf32>>
// CHECK-NEXT:    %kv1_part, %kv1_sig = step.broadcast %kv1 : (!step.stream<["4 - N0", ?L1], !step.tile<4x8xf32>>) -> (!step.stream<["4 - N0", ?L1], !step.tile<4x8xf32>>, !step.stream<["4 - N0", ?L1], !step.tile<4x8xf32>>)
// CHECK:         step.consume %st1 : !step.stream<["4 - N0"], i1>
// CHECK-NEXT:    %sig0 = step.accum %kv0_sig {rank = 1 : i64} : !step.stream<[N0, ?L0], !step.tile<4x8xf32>> -> !step.stream<[N0], !step.tile<1x1xi64>> update {
// CHECK-NEXT:    ^bb0(%{{.*}}: !step.tile<4x8xf32>, %{{.*}}: !step.tile<1x1xi64>):
// CHECK-NEXT:      %{{.*}} = step.apply "signal_all_read"(%{{.*}}, %{{.*}}) : (!step.tile<1x1xi64>, !step.tile<4x8xf32>) -> !step.tile<1x1xi64>
// CHECK:         %sig1 = step.accum %kv1_sig {rank = 1 : i64} : !step.stream<["4 - N0", ?L1], !step.tile<4x8xf32>> -> !step.stream<["4 - N0"], !step.tile<1x1xi64>> update {
// CHECK-NOT:     step.parallelize
step.graph @kv {
  %idx = step.metadata_gen {values = array<i64: 0, 1, 2, 3>} : !step.stream<[4], !step.tile<1x1xi64>>
  %len = step.metadata_gen {values = array<i64: 2, 1, 3, 1>} : !step.stream<[4], !step.tile<1x1xi64>>
  %idx0, %idx1 = step.parallelize %idx {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %len0, %len1 = step.parallelize %len {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %idx0_rd, %idx0_wr = step.broadcast %idx0 : (!step.stream<[2], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %addr0 = step.cache_read_addr_gen %idx0_rd, %len0 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<1x1xi64>>
  %kv0 = step.random_offchip_load %addr0 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L0], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<4x8xf32>>
  %sum0 = step.accum %kv0 {rank = 1 : i64} : !step.stream<[2, ?L0], !step.tile<4x8xf32>> -> !step.stream<[2], !step.tile<4x8xf32>> update {
  ^bb0(%0: !step.tile<4x8xf32>, %1: !step.tile<4x8xf32>):
    %2 = step.apply "add"(%1, %0) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
    step.yield %2 : !step.tile<4x8xf32>
  } init {
    %3 = step.apply "zero"() : () -> !step.tile<4x8xf32>
    step.yield %3 : !step.tile<4x8xf32>
  }
  %st0 = step.random_offchip_store %idx0_wr, %sum0 {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>} : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<4x8xf32>>) -> !step.stream<[2], i1>
  step.consume %st0 : !step.stream<[2], i1>
  %idx1_rd, %idx1_wr = step.broadcast %idx1 : (!step.stream<[2], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %addr1 = step.cache_read_addr_gen %idx1_rd, %len1 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<1x1xi64>>
  %kv1 = step.random_offchip_load %addr1 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L1], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<4x8xf32>>
  %sum1 = step.accum %kv1 {rank = 1 : i64} : !step.stream<[2, ?L1], !step.tile<4x8xf32>> -> !step.stream<[2], !step.tile<4x8xf32>> update {
  ^bb0(%4: !step.tile<4x8xf32>, %5: !step.tile<4x8xf32>):
    %6 = step.apply "add"(%5, %4) : (!step.tile<4x8xf32>, !step.tile<4x8xf32>) -> !step.tile<4x8xf32>
    step.yield %6 : !step.tile<4x8xf32>
  } init {
    %7 = step.apply "zero"() : () -> !step.tile<4x8xf32>
    step.yield %7 : !step.tile<4x8xf32>
  }
  %st1 = step.random_offchip_store %idx1_wr, %sum1 {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>} : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<4x8xf32>>) -> !step.stream<[2], i1>
  step.consume %st1 : !step.stream<[2], i1>
}

// -----

// The same regions writing their sums in stream order (a linear store): a
// dynamic dispatch would reorder what is written, so the graph stays.
// CHECK-LABEL: step.graph @ordered {
// CHECK:         step.parallelize
// expected-remark @+1 {{step-dynamic-parallelize: nothing to do: a region writes with step.linear_offchip_store (in stream order, which a dynamic dispatch changes)}}
step.graph @ordered {
  %idx = step.metadata_gen {values = array<i64: 0, 1, 2, 3>} : !step.stream<[4], !step.tile<1x1xi64>>
  %len = step.metadata_gen {values = array<i64: 2, 1, 3, 1>} : !step.stream<[4], !step.tile<1x1xi64>>
  %idx0, %idx1 = step.parallelize %idx {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %len0, %len1 = step.parallelize %len {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %addr0 = step.cache_read_addr_gen %idx0, %len0 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<1x1xi64>>
  %kv0 = step.random_offchip_load %addr0 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L0], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<4x8xf32>>
  step.linear_offchip_store %kv0 {base_addr = 0 : i64} : !step.stream<[2, ?L0], !step.tile<4x8xf32>>
  %addr1 = step.cache_read_addr_gen %idx1, %len1 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<1x1xi64>>
  %kv1 = step.random_offchip_load %addr1 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L1], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<4x8xf32>>
  step.linear_offchip_store %kv1 {base_addr = 0 : i64} : !step.stream<[2, ?L1], !step.tile<4x8xf32>>
}

// -----

// Regions that are not copies of one another (region 1 reads another
// tensor) cannot be replaced by copies of region 0.
// CHECK-LABEL: step.graph @different {
// expected-remark @+1 {{step-dynamic-parallelize: nothing to do: the regions differ in structure}}
step.graph @different {
  %idx = step.metadata_gen {values = array<i64: 0, 1, 2, 3>} : !step.stream<[4], !step.tile<1x1xi64>>
  %len = step.metadata_gen {values = array<i64: 2, 1, 3, 1>} : !step.stream<[4], !step.tile<1x1xi64>>
  %idx0, %idx1 = step.parallelize %idx {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %len0, %len1 = step.parallelize %len {rank = 0 : i64} : (!step.stream<[4], !step.tile<1x1xi64>>) -> (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>)
  %addr0 = step.cache_read_addr_gen %idx0, %len0 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<1x1xi64>>
  %kv0 = step.random_offchip_load %addr0 {base_addr = 4096 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L0], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L0], !step.tile<4x8xf32>>
  step.consume %kv0 : !step.stream<[2, ?L0], !step.tile<4x8xf32>>
  %addr1 = step.cache_read_addr_gen %idx1, %len1 : (!step.stream<[2], !step.tile<1x1xi64>>, !step.stream<[2], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<1x1xi64>>
  %kv1 = step.random_offchip_load %addr1 {base_addr = 8192 : i64, tiled_in_shape = array<i64: 64>} : (!step.stream<[2, ?L1], !step.tile<1x1xi64>>) -> !step.stream<[2, ?L1], !step.tile<4x8xf32>>
  step.consume %kv1 : !step.stream<[2, ?L1], !step.tile<4x8xf32>>
}
