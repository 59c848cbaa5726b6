// RUN: step-opt %s -p pim-orchestrate | filecheck %s
// RUN: step-opt %s -p 'pim-orchestrate,pim-verify-schedule' | filecheck %s
// RUN: step-opt %S/inputs/orchestrate-invalid.mlir --split-input-file --verify-diagnostics -p pim-orchestrate

// pim-orchestrate writes the ILP's schedule into the pim.model: Swin-T at 224^2 has
// 64, 16, 4, 1 windows (56/7, 28/7, 14/7, 7/7 squared) of 49 patches, 2, 2, 6, 2 blocks
// and 3, 6, 12, 24 heads. Every layer's placement has one m x g rectangle per branch;
// stage 3's four [12,4] sub-arrays are Algorithm 1's 4x12 strips stacked down the 16x16
// mesh; stage 4's single [12,7] branch sits at the origin. The latency is the sum of the
// layers' cycles (69588 + 83463 + 299533 + 288737 = 741321 = 1.8533 ms at 400 MHz).

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()

// CHECK:      "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
// CHECK-NEXT:   "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, heads = 3 : i64, tokens = 49 : i64}> ({
// CHECK-NEXT:     "pim.layer"() <{scheme = array<i64: [[G1:[0-9]+]], [[M1:[0-9]+]]>, branches = 64 : i64, placement = array<i64: 0, 0, {{.*}}>, cycles = [[C1:[0-9]+]] : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64, heads = 6 : i64, tokens = 49 : i64}> ({
// CHECK-NEXT:     "pim.layer"() <{scheme = array<i64: {{[0-9]+}}, {{[0-9]+}}>, branches = 16 : i64, placement = array<i64: 0, 0, {{.*}}>, cycles = {{[0-9]+}} : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64, heads = 12 : i64, tokens = 49 : i64}> ({
// CHECK-NEXT:     "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64, placement = array<i64: 0, 0, 4, 12, 4, 0, 4, 12, 8, 0, 4, 12, 12, 0, 4, 12>, cycles = {{[0-9]+}} : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64, heads = 24 : i64, tokens = 49 : i64}> ({
// CHECK-NEXT:     "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64, placement = array<i64: 0, 0, 7, 12>, cycles = {{[0-9]+}} : i64}> : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) {latency_cycles = 741321 : i64, status = "optimal"} : () -> ()
