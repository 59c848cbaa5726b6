// One case per rule of the #target.sn40l and #target.pim verifiers
// (target-attrs.mlir runs this file with --verify-diagnostics).

// expected-error @+1 {{#target.sn40l: sn40l parameter 'pcu_flops' is derived}}
builtin.module attributes {target.sn40l = #target.sn40l<{pcu_flops = 3 : i64}>} {
}

// -----

// expected-error @+1 {{#target.sn40l: sn40l parameter 'pcus' must be a positive number, got 0}}
builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 0 : i64}>} {
}

// -----

// expected-error @+1 {{#target.sn40l: sn40l parameter 'hbm_channels' must be an integer, got 2.5}}
builtin.module attributes {target.sn40l = #target.sn40l<{hbm_channels = 2.5 : f64}>} {
}

// -----

// expected-error @+1 {{#target.sn40l: unknown sn40l parameter 'warp'}}
builtin.module attributes {target.sn40l = #target.sn40l<{warp = 1 : i64}>} {
}

// -----

// expected-error @+1 {{#target.sn40l: 'pcus' must be an integer or a float}}
builtin.module attributes {target.sn40l = #target.sn40l<{pcus = "many"}>} {
}

// -----

// expected-error @+1 {{#target.pim: unknown preset 'allspark-2x2' (choose from allspark-16x16, allspark-24x24, allspark-8x8)}}
builtin.module attributes {target.pim = #target.pim<"allspark-2x2">} {
}

// -----

// expected-error @+1 {{#target.pim: hardware: field 'rows' must be positive, got 0}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {rows = 0 : i64}>} {
}

// -----

// expected-error @+1 {{#target.pim: hardware: field 'cols' must be an integer, got 2.5}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {cols = 2.5 : f64}>} {
}

// -----

// expected-error @+1 {{#target.pim: hardware: unknown field 'bogus'}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {bogus = 1 : i64}>} {
}

// -----

// expected-error @+1 {{#target.pim: hardware: tRFC must be smaller than tREFI}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {t_rfc_ns = 5000.0 : f64}>} {
}

// -----

// expected-error @+1 {{#target.pim: 'name' is the preset, not a field to change}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {name = 1 : i64}>} {
}
