// source "ir" needs the stage's shapes; a windowed stage needs its branch_grid, and
// groups must account for every block.

"pim.model"() <{model = "vit-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  // expected-error @+1 {{pim.stage: source 'ir' needs channels, head_dim, mlp_ratio, merge_in, grid}}
  "pim.stage"() <{index = 1 : i64, branches = 1 : i64, blocks = 12 : i64, heads = 3 : i64, tokens = 197 : i64}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  // expected-error @+1 {{pim.stage: 64 branches need a branch_grid (rows x cols = branches)}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, heads = 3 : i64, tokens = 49 : i64, channels = 96 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 48 : i64, kv_tokens = 49 : i64, grid = array<i64: 56, 56>}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "twins-s", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  // expected-error @+1 {{pim.stage: groups hold 3 blocks, not 2 (each group at least 1)}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, heads = 2 : i64, tokens = 49 : i64, channels = 64 : i64, head_dim = 32 : i64, mlp_ratio = 4 : i64, merge_in = 48 : i64, groups = array<i64: 1, 49, 0, 0, 2, 49, 262144, 4096>, branch_grid = array<i64: 8, 8>, interaction = "subsample", grid = array<i64: 56, 56>}> ({
  }) : () -> ()
}) : () -> ()

// -----

// sizes are bounded (heads = 2**20 used to take 100 s, tokens = 2**63 all memory)
"pim.model"() <{model = "vit-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  // expected-error @+1 {{pim.stage: 'tokens' must be at most 1048576, got 9223372036854775807}}
  "pim.stage"() <{index = 1 : i64, branches = 1 : i64, blocks = 12 : i64, heads = 3 : i64, tokens = 9223372036854775807 : i64, channels = 192 : i64, head_dim = 64 : i64, mlp_ratio = 4 : i64, merge_in = 768 : i64, grid = array<i64: 14, 14>, kv_tokens = 197 : i64}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "vit-t", img = 224 : i64, preset = "allspark-16x16", source = "ir"}> ({
  // expected-error @+1 {{pim.stage: 'kv_tokens' must be in [1, 1048576], got 0}}
  "pim.stage"() <{index = 1 : i64, branches = 1 : i64, blocks = 12 : i64, heads = 3 : i64, tokens = 197 : i64, channels = 192 : i64, head_dim = 64 : i64, mlp_ratio = 4 : i64, merge_in = 768 : i64, grid = array<i64: 14, 14>, kv_tokens = 0 : i64}> ({
  }) : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{pim.model: source must be 'table' or 'ir', got 'onnx'}}
"pim.model"() <{model = "vit-t", img = 224 : i64, preset = "allspark-16x16", source = "onnx"}> ({
}) : () -> ()
