// RUN: step-opt %s --split-input-file --verify-diagnostics -p pim-verify-schedule

// The machine of a pim.model is the module's #target.pim when there is one
// (dialects/target/attrs.py): the same constraint-1 failure as a model with
// rows = 8, cols = 8 of its own (verify-schedule-invalid.mlir), here from the
// module attribute. Algorithm 1 packs 8 rows x 2 of 1x3 plus 2 x 2 rotated in
// the 8x2 strip = 20 sub-arrays of [3,1].
builtin.module attributes {target.pim = #target.pim<"allspark-16x16", {rows = 8 : i64, cols = 8 : i64}>} {
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
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
}

// -----

// The model's own rows/cols still override the target's: the full 16x16 mesh
// takes the schedule pim-orchestrate finds (verify-schedule-invalid.mlir's first case).
builtin.module attributes {target.pim = #target.pim<"allspark-16x16", {rows = 8 : i64, cols = 8 : i64}>} {
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16", rows = 16 : i64, cols = 16 : i64}> ({
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
}

// -----

// A model naming another preset than the module's target is an error at the model.
builtin.module attributes {target.pim = #target.pim<"allspark-8x8">} {
// expected-error @+1 {{pim.model: preset 'allspark-16x16' is not the module's #target.pim preset 'allspark-8x8'}}
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()
}
