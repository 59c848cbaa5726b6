// A PyTorch model reaches a simulated schedule through step-opt: the timm-style module
// is exported with torch.export.save (.pt2), convert-torch-to-pim reads the archive's
// graph into a pim.model (source "ir"), pim-orchestrate schedules it, pim-lower-phases
// lowers it to phase programs, and pim-orchestrate --run simulates them.
//
// RUN: python %examples/allspark/export_pim.py swin-t 224 --pt2 %t.swin-t.pt2
// RUN: step-opt %s -p 'convert-torch-to-pim{export="%t.swin-t.pt2" model="swin-t"}' | filecheck %s
// RUN: step-opt %s -p 'convert-torch-to-pim{export="%t.swin-t.pt2" model="swin-t"},pim-orchestrate,pim-lower-phases' -o %t.swin.mlir
// RUN: step-opt %S/inputs/swin-t-table.mlir -p 'pim-orchestrate,pim-lower-phases' -o %t.table.mlir
// RUN: pim-orchestrate --run %t.swin.mlir > %t.sim
// RUN: pim-orchestrate --run %t.table.mlir >> %t.sim
// RUN: filecheck %s --check-prefix=SIM --input-file %t.sim
//
// RUN: python %examples/allspark/export_pim.py vit-t 224 --pt2 %t.vit-t.pt2
// RUN: step-opt %s -p 'convert-torch-to-pim{export="%t.vit-t.pt2" model="vit-t"},pim-orchestrate,pim-lower-phases' -o %t.vit.mlir
// RUN: pim-orchestrate --run %t.vit.mlir | filecheck %s --check-prefix=VIT
//
// RUN: not step-opt %s -p 'convert-torch-to-pim{export="%t.missing.pt2"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not step-opt %s -p 'convert-torch-to-pim{export="%s"}' 2>&1 | filecheck %s --check-prefix=NOTZIP
// RUN: python -c "import zipfile; zipfile.ZipFile('%t.other.pt2', 'w').writestr('a/b.txt', 'x')"
// RUN: not step-opt %s -p 'convert-torch-to-pim{export="%t.other.pt2"}' 2>&1 | filecheck %s --check-prefix=OTHER
// RUN: not step-opt %s -p 'convert-torch-to-pim' 2>&1 | filecheck %s --check-prefix=NOARG

// Swin-T (Liu et al., Table 7 / Sec. 3.3): C = 96, heads 3-6-12-24 of 32, depths 2-2-6-2,
// 7x7 windows, MLP ratio 4, 4x4 patches (3 * 4 * 4 = 48 inputs), 2x2 merging (4C -> 2C).
// At 224^2 the grids are 56, 28, 14, 7: 8x8, 4x4, 2x2 and 1 windows of 49 tokens; the
// last stage is one window, so it has no shift and no interaction.
// CHECK:      "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}>
// CHECK-NEXT:   "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, heads = 3 : i64, tokens = 49 : i64, channels = 96 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 48 : i64, grid = array<i64: 56, 56>, kv_tokens = 49 : i64, branch_grid = array<i64: 8, 8>, interaction = "shifted"}>
// CHECK:        "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64, heads = 6 : i64, tokens = 49 : i64, channels = 192 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 384 : i64, grid = array<i64: 28, 28>, kv_tokens = 49 : i64, branch_grid = array<i64: 4, 4>, interaction = "shifted"}>
// CHECK:        "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64, heads = 12 : i64, tokens = 49 : i64, channels = 384 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 768 : i64, grid = array<i64: 14, 14>, kv_tokens = 49 : i64, branch_grid = array<i64: 2, 2>, interaction = "shifted"}>
// CHECK:        "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64, heads = 24 : i64, tokens = 49 : i64, channels = 768 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 1536 : i64, grid = array<i64: 7, 7>, kv_tokens = 49 : i64}>

// The schedule of the graph's workload is simulated to the same latency as the named
// model's (the workload table, passes/allspark/vit.py): both derive the same shapes.
// SIM: swin-t 224x224: simulated latency [[LAT:[0-9]+\.[0-9]+]] ms vs eq. 12 [[EQ:[0-9]+\.[0-9]+]] ms, of which local-global interaction [[INT:[0-9]+\.[0-9]+]] ms
// SIM: swin-t 224x224: simulated latency [[LAT]] ms vs eq. 12 [[EQ]] ms, of which local-global interaction [[INT]] ms

// ViT-T: one global branch, so no local-global interaction.
// VIT: vit-t 224x224: simulated latency {{[0-9]+\.[0-9]+}} ms vs eq. 12 {{[0-9]+\.[0-9]+}} ms, of which local-global interaction 0.0000 ms

// MISSING: error: convert-torch-to-pim: {{.*}}missing.pt2: cannot read a .pt2 archive: No such file or directory
// NOTZIP: error: convert-torch-to-pim: {{.*}}torch-import.mlir: cannot read a .pt2 archive: File is not a zip file
// OTHER: error: convert-torch-to-pim: {{.*}}other.pt2: not a torch.export archive (no models/model.json)
// NOARG: error: convert-torch-to-pim: give the archive: export="model.pt2"
