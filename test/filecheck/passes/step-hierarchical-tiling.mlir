// RUN: step-opt %s -p 'step-hierarchical-tiling{tile=16x16}' --split-input-file --verify-diagnostics | filecheck %s
// RUN: step-opt %s -p 'step-hierarchical-tiling{tile=16x16}' --split-input-file | step-opt -p step-infer-shapes --split-input-file | filecheck %s --check-prefix=TYPES
// RUN: not step-opt %s -p 'step-hierarchical-tiling{tile=4x0}' 2>&1 | filecheck %s --check-prefix=USAGE
// RUN: sh -c 'step-opt %s -p "step-hierarchical-tiling{tile=abc}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ABC
// RUN: sh -c 'step-opt %s -p "step-hierarchical-tiling{tile=\"16x99999999999\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BIG
// RUN: sh -c 'step-opt %s -p "step-hierarchical-tiling{tile=\"-16x16\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NEG

// A x B^T (Fig. 12) on 32x64 by 16x64 logical tiles, then an element-wise
// SiLU. With 16x16 physical tiles, I = 2, J = 1, Kp = 4: A is split into
// 16x64 row panels, repeated J times, each split into 4 tiles; B is repeated
// I times, split into its J row panels and each into 4 tiles; a matmul_t_acc
// accumulation over Kp gives the [I, J] physical tiles of A x B^T. The SiLU
// runs on them directly (its split of the product's join is bypassed) and
// the join rebuilds the 32x16 logical tile for the store.
// CHECK-LABEL: step.graph @mmt {
// CHECK:         %c_a_rows = step.flat_map %a {rank = 1 : i64} : !step.stream<[2], !step.tile<32x64xf32>> -> !step.stream<[2, 2], !step.tile<16x64xf32>> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: !step.tile<32x64xf32>):
// CHECK-NEXT:      %[[Z:.*]] = step.apply "zero"() : () -> !step.tile<16x64xf32>
// CHECK-NEXT:      %[[S:.*]] = step.apply "split_tiles"(%[[A]], %[[Z]]) : (!step.tile<32x64xf32>, !step.tile<16x64xf32>) -> !step.tile<16x64xf32>
// CHECK-NEXT:      step.yield %[[S]] : !step.tile<16x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %c_a_rep = step.repeat %c_a_rows {count = 1 : i64} : (!step.stream<[2, 2], !step.tile<16x64xf32>>) -> !step.stream<[2, 2, 1], !step.tile<16x64xf32>>
// CHECK-NEXT:    %c_a_phys = step.flat_map %c_a_rep {rank = 1 : i64} : !step.stream<[2, 2, 1], !step.tile<16x64xf32>> -> !step.stream<[2, 2, 1, 4], !step.tile<16x16xf32>> {
// CHECK:         %c_b_rep = step.repeat %b {count = 2 : i64} : (!step.stream<[2], !step.tile<16x64xf32>>) -> !step.stream<[2, 2], !step.tile<16x64xf32>>
// CHECK-NEXT:    %c_b_rows = step.flat_map %c_b_rep {rank = 1 : i64} : !step.stream<[2, 2], !step.tile<16x64xf32>> -> !step.stream<[2, 2, 1], !step.tile<16x64xf32>> {
// CHECK:         %c_b_phys = step.flat_map %c_b_rows {rank = 1 : i64} : !step.stream<[2, 2, 1], !step.tile<16x64xf32>> -> !step.stream<[2, 2, 1, 4], !step.tile<16x16xf32>> {
// CHECK:         %[[PAIRS:.*]] = step.zip %c_a_phys, %c_b_phys : (!step.stream<[2, 2, 1, 4], !step.tile<16x16xf32>>, !step.stream<[2, 2, 1, 4], !step.tile<16x16xf32>>) -> !step.stream<[2, 2, 1, 4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
// CHECK-NEXT:    %c_phys = step.accum %[[PAIRS]] {rank = 1 : i64} : !step.stream<[2, 2, 1, 4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[2, 2, 1], !step.tile<16x16xf32>> update {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: !step.tile<16x16xf32>, %[[Y:.*]]: !step.tile<16x16xf32>, %[[ACC:.*]]: !step.tile<16x16xf32>):
// CHECK-NEXT:      %[[MM:.*]] = step.apply "matmul_t_acc"(%[[ACC]], %[[X]], %[[Y]]) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
// CHECK-NEXT:      step.yield %[[MM]] : !step.tile<16x16xf32>
// CHECK-NEXT:    } init {
// CHECK-NEXT:      %{{.*}} = step.apply "zero"() : () -> !step.tile<16x16xf32>
// CHECK-NOT:     "matmul_t"(
// CHECK-NOT:     split_tiles
// CHECK:         %s_phys = step.map %c_phys : !step.stream<[2, 2, 1], !step.tile<16x16xf32>> -> !step.stream<[2, 2, 1], !step.tile<16x16xf32>> {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: !step.tile<16x16xf32>):
// CHECK-NEXT:      %{{.*}} = step.apply "silu"(%[[T]]) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
// CHECK:         %s = step.accum %s_phys {rank = 2 : i64} : !step.stream<[2, 2, 1], !step.tile<16x16xf32>> -> !step.stream<[2], !step.tile<32x16xf32>> update {
// CHECK-NEXT:    ^bb0(%[[P:.*]]: !step.tile<16x16xf32>, %[[L:.*]]: !step.tile<32x16xf32>):
// CHECK-NEXT:      %{{.*}} = step.apply "join_tiles"(%[[L]], %[[P]]) : (!step.tile<32x16xf32>, !step.tile<16x16xf32>) -> !step.tile<32x16xf32>
// CHECK:         step.linear_offchip_store %s {base_addr = 65536 : i64} : !step.stream<[2], !step.tile<32x16xf32>>
// TYPES-LABEL: step.graph @mmt {
// TYPES:         step.linear_offchip_store %s {base_addr = 65536 : i64} : !step.stream<[2], !step.tile<32x16xf32>>
step.graph @mmt {
  %a = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : () -> !step.stream<[2], !step.tile<32x64xf32>>
  %b = step.linear_offchip_load {base_addr = 16384 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : () -> !step.stream<[2], !step.tile<16x64xf32>>
  %z = step.zip %a, %b : (!step.stream<[2], !step.tile<32x64xf32>>, !step.stream<[2], !step.tile<16x64xf32>>) -> !step.stream<[2], !step.tuple<!step.tile<32x64xf32>, !step.tile<16x64xf32>>>
  %c = step.map %z : !step.stream<[2], !step.tuple<!step.tile<32x64xf32>, !step.tile<16x64xf32>>> -> !step.stream<[2], !step.tile<32x16xf32>> {
  ^bb0(%x: !step.tile<32x64xf32>, %y: !step.tile<16x64xf32>):
    %p = step.apply "matmul_t"(%x, %y) : (!step.tile<32x64xf32>, !step.tile<16x64xf32>) -> !step.tile<32x16xf32>
    step.yield %p : !step.tile<32x16xf32>
  }
  %s = step.map %c : !step.stream<[2], !step.tile<32x16xf32>> -> !step.stream<[2], !step.tile<32x16xf32>> {
  ^bb0(%t: !step.tile<32x16xf32>):
    %u = step.apply "silu"(%t) : (!step.tile<32x16xf32>) -> !step.tile<32x16xf32>
    step.yield %u : !step.tile<32x16xf32>
  }
  step.linear_offchip_store %s {base_addr = 65536 : i64} : !step.stream<[2], !step.tile<32x16xf32>>
}

// -----

// An accumulated A x B (the SwiGLU's projections): the outer add stays on
// logical tiles, after the join; a two-operand element-wise map splits both
// operands (rank 2).
// CHECK-LABEL: step.graph @acc {
// CHECK:         %g_a_rows = step.flat_map %x {rank = 1 : i64} : !step.stream<[2, 3], !step.tile<32x16xf32>> -> !step.stream<[2, 3, 2], !step.tile<16x16xf32>> {
// CHECK:         %g_b_rep = step.repeat %w {count = 2 : i64} : (!step.stream<[2, 3], !step.tile<16x32xf32>>) -> !step.stream<[2, 3, 2], !step.tile<16x32xf32>>
// CHECK-NEXT:    %g_b_cols = step.flat_map %g_b_rep {rank = 1 : i64} : !step.stream<[2, 3, 2], !step.tile<16x32xf32>> -> !step.stream<[2, 3, 2, 2], !step.tile<16x16xf32>> {
// CHECK:         %g_phys = step.accum %{{.*}} {rank = 1 : i64} : !step.stream<[2, 3, 2, 2, 1], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[2, 3, 2, 2], !step.tile<16x16xf32>> update {
// CHECK:           %{{.*}} = step.apply "matmul_acc"(%{{.*}}, %{{.*}}, %{{.*}}) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
// CHECK:         %g_join = step.accum %g_phys {rank = 2 : i64} : !step.stream<[2, 3, 2, 2], !step.tile<16x16xf32>> -> !step.stream<[2, 3], !step.tile<32x32xf32>> update {
// CHECK:         %g = step.accum %g_join {rank = 1 : i64} : !step.stream<[2, 3], !step.tile<32x32xf32>> -> !step.stream<[2], !step.tile<32x32xf32>> update {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: !step.tile<32x32xf32>, %[[ACC:.*]]: !step.tile<32x32xf32>):
// CHECK-NEXT:      %{{.*}} = step.apply "add"(%[[ACC]], %[[T]]) : (!step.tile<32x32xf32>, !step.tile<32x32xf32>) -> !step.tile<32x32xf32>
// CHECK:         %m_in0 = step.flat_map %g1 {rank = 2 : i64} : !step.stream<[2], !step.tile<32x32xf32>> -> !step.stream<[2, 2, 2], !step.tile<16x16xf32>> {
// CHECK:         %m_in1 = step.flat_map %g2 {rank = 2 : i64} : !step.stream<[2], !step.tile<32x32xf32>> -> !step.stream<[2, 2, 2], !step.tile<16x16xf32>> {
// CHECK:         %m_phys = step.map %{{.*}} : !step.stream<[2, 2, 2], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[2, 2, 2], !step.tile<16x16xf32>> {
// CHECK:           %{{.*}} = step.apply "mul"(%{{.*}}, %{{.*}}) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
// CHECK:         %m = step.accum %m_phys {rank = 2 : i64} : !step.stream<[2, 2, 2], !step.tile<16x16xf32>> -> !step.stream<[2], !step.tile<32x32xf32>> update {
step.graph @acc {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 3>, stride = array<i64: 3, 1>, tiled_out_shape = array<i64: 2, 3>} : () -> !step.stream<[2, 3], !step.tile<32x16xf32>>
  %w = step.linear_offchip_load {base_addr = 65536 : i64, tiled_in_shape = array<i64: 2, 3>, stride = array<i64: 3, 1>, tiled_out_shape = array<i64: 2, 3>} : () -> !step.stream<[2, 3], !step.tile<16x32xf32>>
  %z = step.zip %x, %w : (!step.stream<[2, 3], !step.tile<32x16xf32>>, !step.stream<[2, 3], !step.tile<16x32xf32>>) -> !step.stream<[2, 3], !step.tuple<!step.tile<32x16xf32>, !step.tile<16x32xf32>>>
  %g = step.accum %z {rank = 1 : i64} : !step.stream<[2, 3], !step.tuple<!step.tile<32x16xf32>, !step.tile<16x32xf32>>> -> !step.stream<[2], !step.tile<32x32xf32>> update {
  ^bb0(%a: !step.tile<32x16xf32>, %b: !step.tile<16x32xf32>, %acc: !step.tile<32x32xf32>):
    %p = step.apply "matmul"(%a, %b) : (!step.tile<32x16xf32>, !step.tile<16x32xf32>) -> !step.tile<32x32xf32>
    %n = step.apply "add"(%acc, %p) : (!step.tile<32x32xf32>, !step.tile<32x32xf32>) -> !step.tile<32x32xf32>
    step.yield %n : !step.tile<32x32xf32>
  } init {
    %0 = step.apply "zero"() : () -> !step.tile<32x32xf32>
    step.yield %0 : !step.tile<32x32xf32>
  }
  %g1, %g2 = step.broadcast %g : (!step.stream<[2], !step.tile<32x32xf32>>) -> (!step.stream<[2], !step.tile<32x32xf32>>, !step.stream<[2], !step.tile<32x32xf32>>)
  %z2 = step.zip %g1, %g2 : (!step.stream<[2], !step.tile<32x32xf32>>, !step.stream<[2], !step.tile<32x32xf32>>) -> !step.stream<[2], !step.tuple<!step.tile<32x32xf32>, !step.tile<32x32xf32>>>
  %m = step.map %z2 : !step.stream<[2], !step.tuple<!step.tile<32x32xf32>, !step.tile<32x32xf32>>> -> !step.stream<[2], !step.tile<32x32xf32>> {
  ^bb0(%u: !step.tile<32x32xf32>, %v: !step.tile<32x32xf32>):
    %q = step.apply "mul"(%u, %v) : (!step.tile<32x32xf32>, !step.tile<32x32xf32>) -> !step.tile<32x32xf32>
    step.yield %q : !step.tile<32x32xf32>
  }
  step.linear_offchip_store %m {base_addr = 131072 : i64} : !step.stream<[2], !step.tile<32x32xf32>>
}

// -----

// Nothing to tile: a row-wise reduction is not element-wise, 24x24 tiles are
// not made of 16x16 ones, and 16x16 tiles already are physical.
// CHECK-LABEL: step.graph @none {
// CHECK-NOT:     split_tiles
// expected-remark @+1 {{step-hierarchical-tiling: nothing to tile: no element-wise or matmul map/accum on tiles larger than 16x16 that it divides}}
step.graph @none {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<24x24xf32>>
  %x1, %x2 = step.broadcast %x : (!step.stream<[4], !step.tile<24x24xf32>>) -> (!step.stream<[4], !step.tile<24x24xf32>>, !step.stream<[4], !step.tile<24x24xf32>>)
  // expected-remark @+1 {{step-hierarchical-tiling: left on logical tiles: 'row_sum' is not element-wise or a matmul}}
  %r = step.map %x1 : !step.stream<[4], !step.tile<24x24xf32>> -> !step.stream<[4], !step.tile<24x1xf32>> {
  ^bb0(%t: !step.tile<24x24xf32>):
    %s = step.apply "row_sum"(%t) : (!step.tile<24x24xf32>) -> !step.tile<24x1xf32>
    step.yield %s : !step.tile<24x1xf32>
  }
  // expected-remark @+1 {{step-hierarchical-tiling: left on logical tiles: the 16x16 physical tile does not divide its 24x24 tiles}}
  %e = step.map %x2 : !step.stream<[4], !step.tile<24x24xf32>> -> !step.stream<[4], !step.tile<24x24xf32>> {
  ^bb0(%t: !step.tile<24x24xf32>):
    %s = step.apply "exp"(%t) : (!step.tile<24x24xf32>) -> !step.tile<24x24xf32>
    step.yield %s : !step.tile<24x24xf32>
  }
  %y = step.linear_offchip_load {base_addr = 65536 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
  %f = step.map %y : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%t: !step.tile<16x16xf32>):
    %s = step.apply "silu"(%t) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %s : !step.tile<16x16xf32>
  }
  step.linear_offchip_store %r {base_addr = 131072 : i64} : !step.stream<[4], !step.tile<24x1xf32>>
  step.linear_offchip_store %e {base_addr = 196608 : i64} : !step.stream<[4], !step.tile<24x24xf32>>
  step.linear_offchip_store %f {base_addr = 262144 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
}

// USAGE: step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be RxC with integers in [1, 65536] (e.g. 16x16), got '4x0'
// ABC:      step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be RxC with integers in [1, 65536] (e.g. 16x16), got 'abc'
// ABC-NEXT: exit=2
// BIG:      step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be RxC with integers in [1, 65536] (e.g. 16x16), got '16x99999999999'
// BIG-NEXT: exit=2
// NEG:      step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be RxC with integers in [1, 65536] (e.g. 16x16), got '-16x16'
// NEG-NEXT: exit=2
