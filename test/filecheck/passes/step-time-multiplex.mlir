// RUN: step-opt %S/inputs/moe-tiny.mlir -p 'step-time-multiplex{regions=1}' | filecheck %s
// RUN: step-opt %S/inputs/moe-tiny.mlir -p 'step-time-multiplex{regions=1}' | step-opt -p step-infer-shapes | filecheck %s
// RUN: step-opt %s -p 'step-time-multiplex{regions=1}' --verify-diagnostics
// RUN: not step-opt %S/inputs/moe-tiny.mlir -p 'step-time-multiplex{regions=3}' 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: sh -c 'step-opt %S/inputs/moe-tiny.mlir -p "step-time-multiplex{regions=0}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: sh -c 'step-opt %S/inputs/moe-tiny.mlir -p "step-time-multiplex{regions=-4}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NEG
// RUN: sh -c 'step-opt %S/inputs/moe-tiny.mlir -p "step-time-multiplex{regions=1000000000000}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HUGE

// Two experts share one region: their token tiles are merged eagerly, the
// merge's selector addresses the chosen expert's weights, the results go back
// to the experts by the same selector.
// CHECK:      %em0, %em0_sel = step.eager_merge %acc0, %acc1 : (!step.stream<["ceiling(B_0/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_1/4)"], !step.tile<4x8xf32>>) -> (!step.stream<["ceiling(B_0/4) + ceiling(B_1/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4) + ceiling(B_1/4)"], !step.selector<2>>)
// CHECK:      %[[ADDR:.*]] = step.expert_addr_gen %{{.*}} {tiles_per_expert = 2 : i64} : (!step.stream<["ceiling(B_0/4) + ceiling(B_1/4)"], !step.selector<2>>) -> !step.stream<["ceiling(B_0/4) + ceiling(B_1/4)", 2], !step.tile<1x1xi64>>
// CHECK:      %up_ld0 = step.random_offchip_load %{{.*}} {base_addr = 4294967296 : i64, tiled_in_shape = array<i64: 4>} : (!step.stream<["ceiling(B_0/4) + ceiling(B_1/4)", 2], !step.tile<1x1xi64>>) -> !step.stream<["ceiling(B_0/4) + ceiling(B_1/4)", 2], !step.tile<8x8xbf16>>
// CHECK:      %gate_ld0 = step.random_offchip_load
// CHECK:      %down_ld0 = step.random_offchip_load
// CHECK:      %pres0, %pres0_1 = step.partition %down0, %{{.*}} : (!step.stream<["ceiling(B_0/4) + ceiling(B_1/4)"], !step.tile<4x8xf32>>, !step.stream<["ceiling(B_0/4) + ceiling(B_1/4)"], !step.selector<2>>) -> (!step.stream<[R0_0], !step.tile<4x8xf32>>, !step.stream<[R0_1], !step.tile<4x8xf32>>)
// CHECK-NOT:  step.linear_offchip_load %acc
// SPLIT: error: step-time-multiplex: 2 expert pipelines do not split into 3 regions
// ZERO:      step-opt: error: invalid options for pass 'step-time-multiplex': regions must be a positive integer, got 0
// ZERO-NEXT: exit=2
// NEG:       step-opt: error: invalid options for pass 'step-time-multiplex': regions must be a positive integer, got -4
// NEG-NEXT:  exit=2
// HUGE:      error: step-time-multiplex: 2 expert pipelines do not split into 1000000000000 regions
// HUGE:      exit=1

// expected-remark @+1 {{step-time-multiplex: nothing to do: no retile_row accumulator groups tokens per expert}}
step.graph @plain {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
}
