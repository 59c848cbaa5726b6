// Malformed recorded bindings (step-specialize-invalid.mlir), one per split:
// a negative value, a value that is not an integer, the old "k=v" string form, a value past 2**63 - 1.
step.graph @g attributes {step.bind = {B = 64 : i64, B_0 = -3 : i64}} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}

// -----

step.graph @g attributes {step.bind = {B = "64"}} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}

// -----

step.graph @g attributes {step.bind = "B=64"} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}

// -----

step.graph @g attributes {step.bind = {B = 18446744073709551615 : ui64}} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}
