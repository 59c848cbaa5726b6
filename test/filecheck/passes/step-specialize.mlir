// RUN: step-opt %s -p 'step-specialize{bind="B=64,B_0=40,B_1=24" rewrite=true}' --split-input-file | filecheck %s
// RUN: not step-opt %s -p 'step-specialize{routing="%repo/examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz" rewrite=true}' 2>&1 | filecheck %s --check-prefix=TRACE
// RUN: step-opt %examples/step/moe_mixtral_tn16.mlir -p 'step-specialize{routing="%repo/examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz"},step-metrics' -o /dev/null 2>&1 | filecheck %s --check-prefix=MIXTRAL
// RUN: step-opt %examples/step/moe_mixtral_dyn.mlir -p 'step-specialize{routing="%repo/examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz"},step-metrics' -o /dev/null 2>&1 | filecheck %s --check-prefix=DYN
// RUN: not step-opt %s -p 'step-specialize{routing="%S/missing.npz"}' --split-input-file 2>&1 | filecheck %s --check-prefix=MISSING

// Binding by name, with the types rewritten.
// CHECK-LABEL: step.graph @two attributes {step.bind = {B = 64 : i64, B_0 = 40 : i64, B_1 = 24 : i64}} {
// CHECK-NEXT:  ^bb0(%ref: !step.stream<[64], !step.tile<1x1xi64>>):
// CHECK:         %p0, %p1 = step.partition %xf, %sel : (!step.stream<[64], !step.tile<1x8xbf16>>, !step.stream<[64], !step.selector<2>>) -> (!step.stream<[40], !step.tile<1x8xbf16>>, !step.stream<[24], !step.tile<1x8xbf16>>)
// A routing trace over 8 experts does not fit a 2-way graph.
// TRACE: step-specialize.mlir:14:1: error: step-specialize: {{.*}}mixtral_b64/008_010.npz: expert id [0, 0] = 6 is out of range [0, 2)
// MISSING: step-specialize.mlir:14:1: error: step-specialize: {{.*}}missing.npz: cannot read routing trace
step.graph @two {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x8xbf16>>
  %xf = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[B, 1], !step.tile<1x8xbf16>>) -> !step.stream<[B], !step.tile<1x8xbf16>>
  %sel = step.select_gen {choices = 2 : i64} : !step.stream<[B], !step.selector<2>>
  %p0, %p1 = step.partition %xf, %sel : (!step.stream<[B], !step.tile<1x8xbf16>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0], !step.tile<1x8xbf16>>, !step.stream<[B_1], !step.tile<1x8xbf16>>)
  step.consume %p0 : !step.stream<[B_0], !step.tile<1x8xbf16>>
  step.consume %p1 : !step.stream<[B_1], !step.tile<1x8xbf16>>
}

// The Mixtral-8x7B MoE layer, static tile_N = 16, on the shipped batch-64
// trace (tokens per expert 13 10 17 14 17 10 24 23 -> 12 token tiles):
// traffic 2BD + 2BK + 12*3*2DF + 4BD, on-chip 10D + 2 + 8*(12*16*D + 6*D*64).
// MIXTRAL:      step-metrics @moe_mixtral_tn16
// MIXTRAL:      total offchip_bytes = 4229431552
// MIXTRAL-NEXT: total onchip_bytes = 18915330
// MIXTRAL-NEXT: total flops = 67847716864
// MIXTRAL-NEXT: total padded_flops = 22615556096
// Dynamic tiling: every expert loads its weights exactly once, no padding.
// DYN:      total offchip_bytes = 2820145408
// DYN-NEXT: total onchip_bytes = 18915330
// DYN-NEXT: total flops = 45232160768
// DYN-NEXT: total padded_flops = 0
