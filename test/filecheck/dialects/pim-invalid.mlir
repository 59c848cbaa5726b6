// RUN: step-opt %s --split-input-file --verify-diagnostics

// The pim ops verify their own shape; the schedule's constraints are pim-verify-schedule's.

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    // expected-error @+1 {{pim.layer: scheme must be [g, m] with g, m >= 1, got [3, 1, 2]}}
    "pim.layer"() <{scheme = array<i64: 3, 1, 2>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    // expected-error @+1 {{pim.layer: placement must hold 2 rectangles (row, col, rows, cols), got 4 integers}}
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 2 : i64, placement = array<i64: 0, 0, 7, 12>}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    // expected-error @+1 {{pim.layer: rectangle (0, 0, 12, 12) is not an 7x12 sub-array at a non-negative position}}
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64, placement = array<i64: 0, 0, 12, 12>}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{pim.stage: 'branches' must be in [1, 1048576], got 0}}
  "pim.stage"() <{index = 1 : i64, branches = 0 : i64, blocks = 2 : i64}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{'pim.layer' expects parent op 'pim.stage'}}
  "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{pim.stage: branch_grid must be [rows, cols] with rows x cols = branches, got [8, 7]}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, branch_grid = array<i64: 8, 7>}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{pim.stage: interaction must be one of none, shifted, focal, subsample, cross, got 'diagonal'}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, interaction = "diagonal"}> ({
  }) : () -> ()
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{pim.stage: groups must be non-negative (blocks, kv_tokens, extra_weights, extra_macs) quadruples}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64, groups = array<i64: 2, 49, 0>}> ({
  }) : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{pim.model: 'batch' must be in [1, 1048576], got 0}}
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", batch = 0 : i64}> ({
}) : () -> ()

// -----

"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> ({
      // expected-error @+1 {{pim.ring: axis must be 'patch', 'group' or 'mesh', got 'torus'}}
      "pim.ring"() <{phase = "stream", axis = "torus", rounds = 1 : i64, bytes = 8 : i64}> : () -> ()
    }) : () -> ()
  }) : () -> ()
}) : () -> ()
