// RUN: step-opt %s -p pim-lower-phases | filecheck %s
// RUN: step-opt %s -p pim-lower-phases -o %t && pim-orchestrate --run %t | filecheck %s --check-prefix=SIM

// The Swin-T 224^2 schedule of lower-phases.mlir with `batch = 2` and, on stage 3,
// `stream_bytes = 1000` (a baseline re-fetching 1000 B of weights per node that do not
// fit its memory).  With N_bt = 2 (eq. 12, Sec. VI-D) every feature-map ring carries both
// inputs (2x the bytes of lower-phases.mlir: pm 2 * 832, k/v/msa-fc/ffn1 2 * 416, ln 2 * 26,
// ffn2 2 * 1664) while the weight-sharing rings (ws-*) run once for the batch; the
// interaction sends both inputs' window maps (2 * 49 * 384 = 37632 B).  The streamed
// weights are one `pim.ring` on the mesh axis: every node of the layer receives its
// 1000 B from its neighbour.

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", batch = 2 : i64}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64, stream_bytes = 1000 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// CHECK:      "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64, stream_bytes = 1000 : i64}> ({
// CHECK-NEXT:   "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64, placement = array<i64: 0, 0, 4, 12, 4, 0, 4, 12, 8, 0, 4, 12, 12, 0, 4, 12>, cycles = {{[0-9]+}} : i64}> ({
// CHECK-NEXT:     "pim.compute"() <{phase = "blocks", cycles = {{[0-9]+}} : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "pm", axis = "group", rounds = 11 : i64, bytes = 1664 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-pm", axis = "patch", rounds = 3 : i64, bytes = 6144 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-msa", axis = "patch", rounds = 18 : i64, bytes = 9216 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "k", axis = "patch", rounds = 18 : i64, bytes = 832 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "v", axis = "patch", rounds = 18 : i64, bytes = 832 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ln1", axis = "group", rounds = 66 : i64, bytes = 52 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-fc", axis = "patch", rounds = 18 : i64, bytes = 3072 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "msa-fc", axis = "group", rounds = 66 : i64, bytes = 832 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ln2", axis = "group", rounds = 66 : i64, bytes = 52 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-ffn", axis = "patch", rounds = 18 : i64, bytes = 24576 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ffn1", axis = "group", rounds = 66 : i64, bytes = 832 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ffn2", axis = "group", rounds = 66 : i64, bytes = 3328 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "stream", axis = "mesh", rounds = 1 : i64, bytes = 1000 : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "pim.interact"() <{bytes = 37632 : i64, times = 6 : i64, pairs = array<i64: {{.*}}>}> : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NEXT: "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
// CHECK-NOT:  stream

// SIM: swin-t 224x224: simulated latency {{[0-9]+\.[0-9]+}} ms vs eq. 12 {{[0-9]+\.[0-9]+}} ms
