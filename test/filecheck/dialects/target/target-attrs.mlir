// RUN: step-opt %s --split-input-file | filecheck %s
// RUN: step-opt %s --split-input-file | step-opt --split-input-file | filecheck %s
// RUN: step-opt %S/inputs/target-attrs-invalid.mlir --split-input-file --verify-diagnostics

// The three target descriptions as module attributes (dialects/target/attrs.py),
// printed as they are written and stable through a second round trip.

// CHECK: builtin.module attributes {target.fabric = #target.fabric<"sn40l", {base_depth = 4 : i64}>, target.sn40l = #target.sn40l, target.pim = #target.pim<"allspark-16x16">} {
builtin.module attributes {target.fabric = #target.fabric<"sn40l", {base_depth = 4 : i64}>, target.sn40l = #target.sn40l, target.pim = #target.pim<"allspark-16x16">} {
}

// -----

// Changed SN40L parameters (the derived ones follow) and PIM fields.
// CHECK: builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 520 : i64, clock_ghz = 1.200000e+00 : f64}>, target.pim = #target.pim<"allspark-8x8", {rows = 4 : i64, node_cap_bytes = 4194304 : i64}>} {
builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 520 : i64, clock_ghz = 1.2 : f64}>, target.pim = #target.pim<"allspark-8x8", {rows = 4 : i64, node_cap_bytes = 4194304 : i64}>} {
}
