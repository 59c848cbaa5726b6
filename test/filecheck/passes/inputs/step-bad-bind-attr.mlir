// A recorded binding with a negative value (step-specialize-invalid.mlir).
step.graph @g attributes {step.bind = "B=64,B_0=-3"} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}
