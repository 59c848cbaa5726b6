// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize{mode=unfused}' | filecheck %s
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize{mode=conventional}' | filecheck %s --check-prefix=CONV
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize{mode=unfused}' | step-opt -p step-infer-shapes | filecheck %s --check-prefix=SHAPES
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-kernelize{mode=fast}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: step-opt %s -p 'step-kernelize' --verify-diagnostics

// Unfused: one kernel per operator (matmul, exp, accum, mul), in graph
// order. The matmul's output is written once (t0) and read back by the
// exp kernel; exp's output (t1) is read by both later kernels; the weights
// are re-read where they are used; the original tensors keep names.
// CHECK:      step.graph @g_k0 attributes {sn40l.kernel = 0 : i64, sn40l.kernels = 4 : i64, sn40l.source = "g"} {
// CHECK:        step.linear_offchip_load {name = "ld0", base_addr = 0 : i64
// CHECK:        step.linear_offchip_load {name = "ld1", base_addr = 1048576 : i64
// CHECK:        step.apply "matmul"
// CHECK:        step.linear_offchip_store %y {name = "t0_st", sn40l.symbol = "g.t0", base_addr = [[T0:[0-9]+]] : i64}
// CHECK:      step.graph @g_k1 attributes {sn40l.kernel = 1 : i64
// CHECK:        step.linear_offchip_load {name = "t0_ld1", sn40l.symbol = "g.t0", base_addr = [[T0]] : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>}
// CHECK:        step.apply "exp"
// CHECK:        step.linear_offchip_store %e {name = "t1_st", sn40l.symbol = "g.t1", base_addr = [[T1:[0-9]+]] : i64}
// CHECK:      step.graph @g_k2 attributes {sn40l.kernel = 2 : i64
// CHECK:        {name = "t1_ld2", sn40l.symbol = "g.t1", base_addr = [[T1]] : i64
// CHECK:        step.linear_offchip_store %s {name = "st0", base_addr = 4096 : i64}
// CHECK:      step.graph @g_k3 attributes {sn40l.kernel = 3 : i64
// CHECK:        {name = "ld2", base_addr = 2097152 : i64
// CHECK:        {name = "t1_ld3", sn40l.symbol = "g.t1", base_addr = [[T1]] : i64
// CHECK:        step.apply "mul"
// CHECK-NOT:  step.graph

// Conventional: exp is the matmul's epilogue; its result is the first cut.
// CONV:      step.graph @g_k0 attributes {sn40l.kernel = 0 : i64, sn40l.kernels = 3 : i64
// CONV:        step.apply "matmul"
// CONV:        step.apply "exp"
// CONV:        step.linear_offchip_store %e {name = "t0_st"
// CONV:      step.graph @g_k1
// CONV:      step.graph @g_k2
// CONV-NOT:  step.graph

// SHAPES: step.graph @g_k3

// BAD:      step-opt: error: invalid options for pass 'step-kernelize': unknown mode 'fast' (choose from unfused, conventional)
// BAD-NEXT: exit=2

step.graph @loop {
  // expected-error @+1 {{step-kernelize: a graph with feedback edges cannot be cut into kernels}}
  %f = step.map %x : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%0: !step.tile<16x16xf32>):
    %1 = step.apply "exp"(%0) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %1 : !step.tile<16x16xf32>
  }
  %x = step.map %f : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%0: !step.tile<16x16xf32>):
    %1 = step.apply "exp"(%0) : (!step.tile<16x16xf32>) -> !step.tile<16x16xf32>
    step.yield %1 : !step.tile<16x16xf32>
  }
}
