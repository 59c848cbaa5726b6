// RUN: step-opt %s -p 'step-metrics' | filecheck %s
// RUN: step-opt %s -p 'step-metrics{bind="B=64, sum_L=6400"}' | filecheck %s --check-prefix=BOUND
// RUN: step-opt %s -p 'step-metrics{annotate=true bind="B=2"}' | filecheck %s --check-prefix=ANNOT
// RUN: step-opt %S/inputs/step-swiglu.mlir -p 'step-metrics' | filecheck %s --check-prefix=SWIGLU
// RUN: step-opt %S/inputs/step-swiglu.mlir -p 'step-metrics{onchip=paper}' | filecheck %s --check-prefix=PAPER
// RUN: step-opt %S/inputs/step-moe-fig2.mlir -p 'step-metrics{bind="B=4,B_0=2,B_1=0,B_2=0,B_3=0,B_4=0,B_5=0,B_6=0,B_7=6"}' | filecheck %s --check-prefix=MOE
// RUN: not step-opt %s -p 'step-metrics{bind="B"}' 2>&1 | filecheck %s --check-prefix=BADBIND

// Loads with a ref stream: [B, 2] tiles of 16x64 f32 (4096 bytes each); a
// ragged KV stream [B, ?L] of 32x64 bf16 tiles (4096 bytes) counts its
// elements as sum_L, the total length over the B requests (seed §4.1).
step.graph @loads {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>, %kv: !step.stream<[B, ?L], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 2>, stride = array<i64: 1>, tiled_out_shape = array<i64: 2>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 2], !step.tile<16x64xf32>>
  %e = step.map %x : !step.stream<[B, 2], !step.tile<16x64xf32>> -> !step.stream<[B, 2], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    %v = step.apply "exp"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %v : !step.tile<16x64xf32>
  }
  %r = step.repeat %e {count = 3 : i64} : (!step.stream<[B, 2], !step.tile<16x64xf32>>) -> !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
  step.linear_offchip_store %r {base_addr = 4096 : i64} : !step.stream<[B, 2, 3], !step.tile<16x64xf32>>
  %k = step.random_offchip_load %kv {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[B, ?L], !step.tile<1x1xi64>>) -> !step.stream<[B, ?L], !step.tile<32x64xbf16>>
  step.consume %k : !step.stream<[B, ?L], !step.tile<32x64xbf16>>
}
// CHECK:      step-metrics @loads
// CHECK-NEXT: op                            offchip_bytes  onchip_bytes  flops      padded_flops
// CHECK-NEXT: %x step.linear_offchip_load   8192*B         4096          0          0
// CHECK-NEXT: %e step.map                   0              0             8192*B     0
// CHECK-NEXT: %r step.repeat                0              4096          0          0
// CHECK-NEXT: #3 step.linear_offchip_store  24576*B        4096          0          0
// CHECK-NEXT: %k step.random_offchip_load   4096*sum_L     4096          0          0
// CHECK-NEXT: (1 operators without off-chip traffic, on-chip memory or FLOPs)
// CHECK-NEXT: total offchip_bytes = 32768*B + 4096*sum_L
// CHECK-NEXT: total onchip_bytes = 16384
// CHECK-NEXT: total flops = 8192*B
// CHECK-NEXT: total padded_flops = 0
// CHECK-NEXT: operational_intensity = 2*B/(8*B + sum_L)
// The IR is unchanged.
// CHECK:      step.graph @loads {
// CHECK-NOT:  step.metrics
// CHECK:      step.consume %k

// BOUND:      %k step.random_offchip_load   26214400
// BOUND:      total offchip_bytes = 28311552
// BOUND:      operational_intensity = 1/54 (~0.01852)

// ANNOT:      total offchip_bytes = 4096*sum_L + 65536
// ANNOT:      step.graph @loads attributes {step.metrics = {offchip_bytes = "4096*sum_L + 65536", onchip_bytes = "16384", flops = "16384", padded_flops = "0", operational_intensity = "4/(sum_L + 16)"}} {
// ANNOT:      %x = step.linear_offchip_load %ref {step.metrics = {offchip_bytes = "16384", onchip_bytes = "4096", flops = "0", padded_flops = "0"}, base_addr = 0 : i64

// The SwiGLU expert of reference spec §8.1 (B 64, D 256, F 512, tm 16, tn 64):
// traffic 4*B*D*(F/tn) + 3*4*D*F*(B/tm) + 4*B*D; FLOPs 6BDF + 11BF + BD(F/tn).
// SWIGLU:      step-metrics @swiglu
// SWIGLU:      %x step.linear_offchip_load    524288         16384         0         0
// SWIGLU-NEXT: %wg step.linear_offchip_load   2097152        65536         0         0
// SWIGLU-NEXT: %gate step.accum               0              4096          16809984  0
// SWIGLU:      %s step.map                    0              0             262144    0
// SWIGLU:      %down step.accum               0              16384         16908288  0
// SWIGLU:      total offchip_bytes = 6881280
// SWIGLU-NEXT: total onchip_bytes = 253952
// SWIGLU-NEXT: total flops = 50823168
// SWIGLU-NEXT: total padded_flops = 0
// SWIGLU-NEXT: operational_intensity = 517/70 (~7.386)

// Seed §4.1 conventions: double-buffered memory operators, matmul accums hold
// 16 input rows + the weight tile + the output tile.
// PAPER:      %x step.linear_offchip_load    524288         32768
// PAPER:      %gate step.accum               0              86016
// PAPER:      %down step.accum               0              86016
// PAPER:      total onchip_bytes = 716800

// Fig. 2 MoE with 4 tokens routed to expert 0 (2 tokens) and 7 (6 tokens):
// 2*4*4096 in + (1 + 1) token tiles x 3 weights x 2*4096*14336 + 4*4*4096 out.
// MOE:      %w1l0 step.linear_offchip_load  117440512
// MOE:      total offchip_bytes = 704741376

// BADBIND: step-opt: error: invalid pass pipeline: step-metrics: bad binding 'B': expected NAME=INTEGER
