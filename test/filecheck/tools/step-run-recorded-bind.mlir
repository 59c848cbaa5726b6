// step-run writes a graph's recorded bindings (step.bind, from step-specialize
// without rewrite=true) into its stream types before simulating, as --bind does
// (step-run-graph.mlir SMALLB). The graph loads [B, 2] tiles of 16x64xf32
// (4096 bytes each) and stores each 3 times: with B = 4, 4*2*4096 = 32768 bytes
// read and 3 * 32768 = 98304 written. Without the recorded binding, B stays a
// symbol and the graph is refused (an unbound graph argument).
// RUN: step-opt %S/inputs/step-bind-b.mlir -p 'step-specialize{bind="B=4"}' | step-run - --force --json | filecheck %s
// CHECK: "offchip_read_bytes": 32768,
// CHECK: "offchip_written_bytes": 98304,

// A malformed recorded binding is a one-line error naming the graph.
// RUN: sh -c 'step-run %s --force; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: step-run-recorded-bind.mlir: error: @g: step.bind: entry 'B': the value must be non-negative, got -4
// BAD-NEXT: exit=1
step.graph @g attributes {step.bind = {B = -4 : i64}} {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  step.consume %ref : !step.stream<[B], !step.tile<1x1xi64>>
}
