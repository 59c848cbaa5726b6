// RUN: step-opt %s --split-input-file --verify-diagnostics -p pim-verify-schedule

// pim-verify-schedule names the rule a schedule breaks, at the op at fault. Swin-T at 224^2
// has 64, 16, 4, 1 windows of 7x7 patches (56/7, 28/7, 14/7, 7/7 squared), 3, 6, 12, 24 heads.

// A valid schedule passes (the one pim-orchestrate finds).
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

// -----

// Constraint 2: every branch in some temporal layer.
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{stage 1: 60 of 64 branches assigned (constraint 2: every branch in exactly one temporal layer)}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 60 : i64}> : () -> ()
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

// -----

// Constraint 4: branch counts never increase from one temporal layer to the next.
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  // expected-error @+1 {{stage 1: branch counts [4, 60] increase between temporal layers (constraint 4)}}
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 1, 1>, branches = 4 : i64}> : () -> ()
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 60 : i64}> : () -> ()
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

// -----

// Sec. VI-A: g in {1..ceil(24/2), 24} (24 does not fit 16 columns), m in {1..ceil(7/2), 7} for ceil(49/8) = 7.
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
    // expected-error @+1 {{stage 4, temporal layer 1: [9,9] is not a partition candidate of 24 heads x 49 patches on the 16x16 mesh (g in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], m in [1, 2, 3, 4, 7], Sec. VI-A)}}
    "pim.layer"() <{scheme = array<i64: 9, 9>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Constraint 1: Algorithm 1 packs 8 rows x 2 of 1x3 plus 2 x 2 rotated in the 8x2 strip = 20.
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", rows = 8 : i64, cols = 8 : i64}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    // expected-error @+1 {{stage 1, temporal layer 1: 64 sub-arrays of [3,1] but the 8x8 mesh packs 20 (constraint 1)}}
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 1, 1>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 1, 1>, branches = 4 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 1, 1>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Constraint 5: [1,1] keeps all of stage 3 on each node, 12 * 384^2 * 6 bytes = 10.1 MiB > 8 MiB.
// expected-error @+1 {{> node_cap 8.00 MiB (constraint 5, with weight reuse and sharing)}}
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 1, 1>, branches = 4 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Placement: two branches on the same nodes.
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
  "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 3, 1>, branches = 64 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 2 : i64, branches = 16 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 6, 2>, branches = 16 : i64}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 3 : i64, branches = 4 : i64, blocks = 6 : i64}> ({
    // expected-error @+1 {{stage 3, temporal layer 1: rectangles (0, 0, 4, 12) and (0, 0, 4, 12) share nodes (placement: one branch per node)}}
    "pim.layer"() <{scheme = array<i64: 12, 4>, branches = 4 : i64, placement = array<i64: 0, 0, 4, 12, 0, 0, 4, 12, 8, 0, 4, 12, 12, 0, 4, 12>}> : () -> ()
  }) : () -> ()
  "pim.stage"() <{index = 4 : i64, branches = 1 : i64, blocks = 2 : i64}> ({
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64}> : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Placement: rows 10..16 leave the 16-row mesh.
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
    // expected-error @+1 {{stage 4, temporal layer 1: rectangle (10, 0, 7, 12) leaves the 16x16 mesh (placement)}}
    "pim.layer"() <{scheme = array<i64: 12, 7>, branches = 1 : i64, placement = array<i64: 10, 0, 7, 12>}> : () -> ()
  }) : () -> ()
}) : () -> ()
