// step-run names its FLOP count and gives step-metrics' next to it (issue 28 item 5).
// SwiGLU FFN, B=64, D=256, F=512: the matmuls 3 * 2*64*256*512 = 50331648, silu
// 8*64*512 = 262144, mul 64*512 = 32768: 50626560 executed. step-metrics also counts
// the accumulator adds add(acc, matmul) the fabric fuses into the multiply-adds: gate
// and up (one K tile of 256) 64*512 each, down (four K tiles of 128) 4*64*256: 131072.
// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir | filecheck %s
// CHECK: FLOPs executed         50626560   (step-metrics: 50757632; the 131072 of accumulator adds are fused into the matmuls' multiply-adds)
// RUN: step-opt %S/inputs/swiglu-tm32-tn128.mlir -p step-infer-shapes,step-metrics 2>&1 >/dev/null | filecheck %s --check-prefix=METRICS
// METRICS: total flops = 50757632   (executed on the fabric: 50626560; the 131072 of accumulator adds are fused into the matmuls' multiply-adds)
// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir --json | filecheck %s --check-prefix=JSON
// JSON: "flops": 50626560,
// JSON: "flops_step_metrics": 50757632
