// RUN: step-opt %s --split-input-file --verify-diagnostics
// Hostile #target.sn40l tables (HARDEN-4): each was a Python OverflowError
// ("cannot convert float infinity to integer", naming no attribute) or read
// `true` as the count -1; now a located error naming the parameter.

// A denormal clock: socket_tflops / (pcus x clock) is infinite, pcu_flops its floor.
// expected-error @+1 {{#target.sn40l: sn40l parameter 'pcu_flops' overflows}}
builtin.module attributes {target.sn40l = #target.sn40l<{clock_ghz = 1.0e-310 : f64}>} {
}

// -----

// expected-error @+1 {{#target.sn40l: sn40l parameter 'pcu_flops' overflows}}
builtin.module attributes {target.sn40l = #target.sn40l<{socket_tflops = 1.0e300 : f64}>} {
}

// -----

// A launch cost whose cycle count at the clock is infinite (1e306 us x 1e3 x 1e3 GHz).
// expected-error @+1 {{#target.sn40l: as the sn40l fabric: 1e+306 us at 1000.0 GHz is not a finite cycle count}}
builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 1 : i64, clock_ghz = 1.0e3 : f64, launch_so_us = 1.0e306 : f64}>} {
}

// -----

// A boolean is not a count (xDSL reads i1 true as -1).
// expected-error @+1 {{#target.sn40l: 'pcus' must be an integer or a float, got a boolean}}
builtin.module attributes {target.sn40l = #target.sn40l<{pcus = true}>} {
}

// -----

// expected-error @+1 {{#target.pim: 'rows' must be an integer or a float, got a boolean}}
builtin.module attributes {target.pim = #target.pim<"allspark-8x8", {rows = true}>} {
}
