// RUN: step-opt %s --split-input-file --verify-diagnostics
// Hostile discardable knobs (HARDEN-4): `true` is an i1 that xDSL reads as -1,
// so a boolean knob was refused as "got -1" (or, where -1 is in range, read
// as the count -1); now it is refused as what was written.

// expected-error @+1 {{step.graph: 'runtime.depth' must be an integer >= 1, got true}}
step.graph @g attributes {runtime.depth = true} {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  step.consume %x : !step.stream<[4], !step.tile<16x16xf32>>
}

// -----

// expected-error @+1 {{step.map: 'compute_bw' must be an integer in [1, 1099511627776], got true}}
step.graph @g {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  %y = step.map %x {compute_bw = true} : !step.stream<[4], !step.tile<16x16xf32>> -> !step.stream<[4], !step.tile<16x16xf32>> {
  ^bb0(%t: !step.tile<16x16xf32>):
    step.yield %t : !step.tile<16x16xf32>
  }
  step.consume %y : !step.stream<[4], !step.tile<16x16xf32>>
}

// -----

// expected-error @+1 {{step.graph: 'sn40l.kernel' must be an integer >= 0, got true}}
step.graph @g attributes {sn40l.kernel = true} {
^bb0(%x: !step.stream<[4], !step.tile<16x16xf32>>):
  step.consume %x : !step.stream<[4], !step.tile<16x16xf32>>
}
