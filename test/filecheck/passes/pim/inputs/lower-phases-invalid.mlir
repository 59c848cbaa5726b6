// pim-lower-phases checks the schedule first.

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
