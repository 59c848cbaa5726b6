// RUN: step-opt %s -p 'pim-orchestrate,pim-lower-phases' -o %t
// RUN: pim-orchestrate --run %t | filecheck %s
// RUN: step-opt %S/inputs/source-ir-invalid.mlir --split-input-file --verify-diagnostics -p pim-orchestrate

// A pim.model whose workload is its own IR (source "ir"), as lowering/torch_to_pim.py
// writes it from a torch.export graph (examples/allspark/export_pim.py vit-t 224):
// ViT-T, 192 wide, 3 heads of 64, 12 blocks, MLP ratio 4, 16x16 patches: 14x14 + 1 class
// token = 197 tokens, patch embedding 3 * 16 * 16 = 768 inputs. One global branch, so
// no local-global interaction.

"pim.model"() <{model = "vit-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 1 : i64, blocks = 12 : i64, heads = 3 : i64, tokens = 197 : i64, channels = 192 : i64, head_dim = 64 : i64, mlp_ratio = 4 : i64, merge_in = 768 : i64, kv_tokens = 197 : i64, grid = array<i64: 14, 14>}> ({
  }) : () -> ()
}) : () -> ()

// CHECK: vit-t 224x224: simulated latency {{[0-9]+\.[0-9]+}} ms vs eq. 12 {{[0-9]+\.[0-9]+}} ms, of which local-global interaction 0.0000 ms
