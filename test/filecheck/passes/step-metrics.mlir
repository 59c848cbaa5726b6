// The report goes to stderr (or a file), the IR alone to stdout.
// RUN: step-opt %s -p 'step-metrics' -o /dev/null 2>&1 | filecheck %s
// RUN: step-opt %s -p 'step-metrics' 2>/dev/null | step-opt | filecheck %s --check-prefix=IR
// RUN: step-opt %s -p 'step-metrics{bind="B=64, sum_L=6400"}' -o /dev/null 2>&1 | filecheck %s --check-prefix=BOUND
// RUN: step-opt %s -p 'step-metrics{annotate=true bind="B=2"}' 2>&1 | filecheck %s --check-prefix=ANNOT
// RUN: step-opt %S/inputs/step-swiglu.mlir -p 'step-metrics' -o /dev/null 2>&1 | filecheck %s --check-prefix=SWIGLU
// RUN: step-opt %S/inputs/step-swiglu.mlir -p 'step-metrics{onchip=paper}' -o /dev/null 2>&1 | filecheck %s --check-prefix=PAPER
// RUN: step-opt %S/inputs/step-moe-fig2.mlir -p 'step-metrics{bind="B=4,B_0=2,B_1=0,B_2=0,B_3=0,B_4=0,B_5=0,B_6=0,B_7=6"}' -o /dev/null 2>&1 | filecheck %s --check-prefix=MOE
// RUN: not step-opt %s -p 'step-metrics{bind="B"}' 2>&1 | filecheck %s --check-prefix=BADBIND
// RUN: rm -f %t.json %t.csv %t.txt
// RUN: step-opt %s -p 'step-metrics{bind="B=64, sum_L=6400" out="%t.json"}' 2>&1 | step-opt | filecheck %s --check-prefix=IR
// RUN: filecheck %s --check-prefix=JSON < %t.json
// RUN: step-opt %s -p 'step-metrics{bind="B=64" out="%t.csv"}' -o /dev/null 2>%t.err
// RUN: wc -c < %t.err | filecheck %s --check-prefix=QUIET
// RUN: filecheck %s --check-prefix=CSV < %t.csv
// RUN: step-opt %s -p 'step-metrics{bind="B=64" out="%t.txt" format=csv}' -o /dev/null
// RUN: filecheck %s --check-prefix=CSV < %t.txt
// RUN: step-opt %s -p 'step-metrics{format=json}' -o /dev/null 2>&1 | filecheck %s --check-prefix=JSONSYM
// RUN: sh -c 'step-opt %s -p "step-metrics{format=xml}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADFMT
// RUN: sh -c 'step-opt %s -p "step-metrics{out=\"%t.dir/none/m.json\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADOUT
// RUN: step-opt %S/inputs/step-huge-dims.mlir -p 'step-metrics{bind="B=1000000000000000000"}' -o /dev/null 2>&1 | filecheck %s --check-prefix=HUGE

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
// CHECK-NEXT: total flops_artifact = n/a
// CHECK-NEXT: operational_intensity = 2*B/(8*B + sum_L)
// The IR is unchanged, and stdout parses again as IR.
// IR:         step.graph @loads {
// IR-NOT:     step.metrics
// IR:         step.consume %k
// IR-NOT:     step-metrics

// BOUND:      %k step.random_offchip_load   26214400
// BOUND:      total offchip_bytes = 28311552
// BOUND:      operational_intensity = 1/54 (~0.01852)

// ANNOT:      step-metrics @loads
// ANNOT:      total offchip_bytes = 4096*sum_L + 65536
// ANNOT:      step.graph @loads attributes {step.metrics = {offchip_bytes = "4096*sum_L + 65536", onchip_bytes = "16384", flops = "16384", padded_flops = "0", operational_intensity = "4/(sum_L + 16)"}} {
// ANNOT:      %x = step.linear_offchip_load %ref {step.metrics = {offchip_bytes = "16384", onchip_bytes = "4096", flops = "0", padded_flops = "0"}, base_addr = 0 : i64

// The SwiGLU expert of reference spec §8.1 (B 64, D 256, F 512, tm 16, tn 64):
// traffic 4*B*D*(F/tn) + 3*4*D*F*(B/tm) + 4*B*D; FLOPs 6BDF + 11BF + BD(F/tn);
// the artifact's formula (spec §5.4) B*F*(14*D + 1) = 64*512*3585.
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
// SWIGLU-NEXT: total flops_artifact = 117473280
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

// BADBIND: step-opt: error: invalid options for pass 'step-metrics': bad binding entry 1 'B': expected NAME=INTEGER

// B=64, sum_L=6400: %x 64*2 tiles of 4096 B; the map's exp 4 FLOPs per
// scalar (4096 per 16x64 tile) x 128 tiles; the store 64*2*3 tiles; the KV
// load 6400 tiles of 4096 B; OI = 2B/(8B+sum_L) = 128/6912 = 1/54.
// JSON:      "name": "loads",
// JSON:      "op": "%x step.linear_offchip_load",
// JSON-NEXT: "offchip_bytes": 524288,
// JSON-NEXT: "onchip_bytes": 4096,
// JSON:      "op": "%e step.map",
// JSON-NEXT: "offchip_bytes": 0,
// JSON-NEXT: "onchip_bytes": 0,
// JSON-NEXT: "flops": 524288,
// JSON:      "op": "#3 step.linear_offchip_store",
// JSON-NEXT: "offchip_bytes": 1572864,
// JSON:      "op": "%k step.random_offchip_load",
// JSON-NEXT: "offchip_bytes": 26214400,
// JSON:      "totals": {
// JSON-NEXT:   "offchip_bytes": 28311552,
// JSON-NEXT:   "onchip_bytes": 16384,
// JSON-NEXT:   "flops": 524288,
// JSON-NEXT:   "flops_executed": 524288,
// JSON-NEXT:   "padded_flops": 0,
// JSON-NEXT:   "flops_artifact": null,
// JSON-NEXT:   "operational_intensity": 0.018518518518518517
// JSON-NEXT: }

// With out=, nothing on stderr.
// QUIET: {{^}}0{{$}}

// CSV:      graph,op,offchip_bytes,onchip_bytes,flops,padded_flops,operational_intensity,flops_artifact
// CSV-NEXT: loads,%x step.linear_offchip_load,524288,4096,0,0,,
// CSV-NEXT: loads,%e step.map,0,0,524288,0,,
// CSV-NEXT: loads,%r step.repeat,0,4096,0,0,,
// CSV-NEXT: loads,#3 step.linear_offchip_store,1572864,4096,0,0,,
// CSV-NEXT: loads,%k step.random_offchip_load,4096*sum_L,4096,0,0,,
// CSV-NEXT: loads,#5 step.consume,0,0,0,0,,
// CSV-NEXT: loads,total,4096*sum_L + 2097152,16384,524288,0,128/(sum_L + 512),
// CSV-EMPTY:

// Unbound symbols stay expressions (JSON strings).
// JSONSYM:      "totals": {
// JSONSYM-NEXT:   "offchip_bytes": "32768*B + 4096*sum_L",
// JSONSYM:        "operational_intensity": "2*B/(8*B + sum_L)"

// BADFMT: step-opt: error: invalid options for pass 'step-metrics': format must be one of text, json, csv, got 'xml'
// BADFMT-NEXT: exit=2
// BADOUT:      step-metrics.mlir:1:1: error: step-metrics: cannot write report '{{.*}}none/m.json': No such file or directory
// BADOUT-NEXT: // The report goes to stderr
// BADOUT-NEXT: ^
// BADOUT-NEXT: exit=1

// Streams of (10^18)^3 and (10^18)^60 2x2 f32 tiles (16 bytes): 1.6e55 bytes
// print exactly; 1.6e1081 (past the 1000-digit limit) in scientific notation.
// HUGE:      step-metrics @small
// HUGE:      total offchip_bytes = 16000000000000000000000000000000000000000000000000000000
// HUGE:      step-metrics @huge
// HUGE:      total offchip_bytes = 1.60000e+1081
// HUGE:      total flops = 0
