// RUN: step-opt %s -p pim-lower-phases | filecheck %s
// RUN: step-opt %S/inputs/lower-phases-invalid.mlir --verify-diagnostics -p pim-lower-phases

// pim-lower-phases on a written Swin-T 224^2 schedule (C = 96 * 2^(s-1), d = 32, MLP
// ratio 4, 49 patches per 7x7 window). Stage 3 ([12,4], 12 heads, C = 384, 6 blocks):
// b = 1 head and q = 32 columns per node, p = ceil(49/4) = 13 patches; the merge input
// is 4 * 192 = 768. Sec. V-B per node:
//   pm     (g-1) = 11 rounds of p * 768/12         = 13 * 64         =   832 B
//   ws-pm  (m-1) =  3 rounds of 768 * q / m        = 768 * 32 / 4    =  6144 B
//   ws-msa 3 * 6 = 18 rounds of 3 * C * q / m      = 3 * 384 * 32/4  =  9216 B
//   k, v   18 rounds of p * q                      = 13 * 32         =   416 B
//   ln1/2  11 * 6 = 66 rounds of 2p                                  =    26 B
//   ws-fc  18 rounds of C * q / m                                    =  3072 B
//   msa-fc, ffn1  66 rounds of p * q                                 =   416 B
//   ws-ffn 18 rounds of 2 * 4 * C * q / m                            = 24576 B
//   ffn2   66 rounds of p * 4 * q                                    =  1664 B
// Its 4 windows (2x2) all depend on each other (shifted windows): 12 messages of one
// window's feature map, 49 * 384 = 18816 B, once per block (6).

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// CHECK:      "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
// CHECK-NEXT:   "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64, placement = array<i64: 0, 0, 4, 12, 4, 0, 4, 12, 8, 0, 4, 12, 12, 0, 4, 12>, cycles = {{[0-9]+}} : i64}> ({
// CHECK-NEXT:     "pim.compute"() <{phase = "blocks", cycles = {{[0-9]+}} : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "pm", axis = "group", rounds = 11 : i64, bytes = 832 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-pm", axis = "patch", rounds = 3 : i64, bytes = 6144 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-msa", axis = "patch", rounds = 18 : i64, bytes = 9216 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "k", axis = "patch", rounds = 18 : i64, bytes = 416 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "v", axis = "patch", rounds = 18 : i64, bytes = 416 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ln1", axis = "group", rounds = 66 : i64, bytes = 26 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-fc", axis = "patch", rounds = 18 : i64, bytes = 3072 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "msa-fc", axis = "group", rounds = 66 : i64, bytes = 416 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ln2", axis = "group", rounds = 66 : i64, bytes = 26 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ws-ffn", axis = "patch", rounds = 18 : i64, bytes = 24576 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ffn1", axis = "group", rounds = 66 : i64, bytes = 416 : i64}> : () -> ()
// CHECK-NEXT:     "pim.ring"() <{phase = "ffn2", axis = "group", rounds = 66 : i64, bytes = 1664 : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "pim.interact"() <{bytes = 18816 : i64, times = 6 : i64, pairs = array<i64: [[P:([0-9]+, ){47}[0-9]+]]>}> : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NEXT: "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
// CHECK-NOT:  pim.interact
// CHECK:      }) : () -> ()
