// step-run simulates a step.graph on the fabric and prints its metrics.
// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir --preset swiglu-hdl | filecheck %s
// CHECK:      hardware               swiglu-hdl
// CHECK-NEXT: cycles                 14773
// CHECK-NEXT: off-chip read (B)      3407872
// CHECK-NEXT: off-chip written (B)   65536
// CHECK-NEXT: off-chip traffic (B)   3473408
// CHECK:      context                  kind                busy  stall-in stall-out  mem-wait  util%
// CHECK-NEXT: X                        Load
// CHECK:      gate                     Accum               5120
// CHECK:      broadcast0               Broadcast

// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir --preset swiglu-hdl --json | filecheck %s --check-prefix=JSON
// JSON: "cycles": 14773,
// JSON: "offchip_traffic_bytes": 3473408,
// JSON: "preset": "swiglu-hdl"

// The same graph on the evaluation hardware (32 channels, PMU 64 B/cycle, depth 2).
// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir | filecheck %s --check-prefix=EVAL
// EVAL: hardware               step-eval
// EVAL-NEXT: cycles                 25141

// A config file derives from a preset.
// RUN: echo '{"preset": "swiglu-hdl", "base_depth": 4}' > %t.json
// RUN: step-run %S/inputs/swiglu-tm32-tn128.mlir --config %t.json --trace %t.trace.json | filecheck %s --check-prefix=CFG
// RUN: grep -c traceEvents %t.trace.json
// CFG: hardware               swiglu-hdl

// RUN: sh -c 'step-run %S/inputs/step-feedback-deadlock.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DEAD
// DEAD:      step-feedback-deadlock.mlir: error: deadlock at cycle 35: 2 context(s) blocked
// DEAD-NEXT:   x @ cycle 102: enqueue to channel 'x->acc' (2/2 full)
// DEAD-NEXT:   acc @ cycle 35: peek channel 'acc->acc' (0/2 full)
// DEAD-NEXT: exit=1

// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --preset nope; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PRESET
// PRESET:      step-run: error: unknown hardware preset 'nope' (choose from sn40l, step-eval, swiglu-hdl)
// PRESET-NEXT: exit=2

// RUN: echo '{"pmu": 3}' > %t.bad.json
// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --config %t.bad.json; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADCFG
// BADCFG:      bad.json: error: invalid hardware config: unknown hardware config field(s): pmu
// BADCFG-NEXT: exit=1

// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --depth 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DEPTH
// DEPTH:      step-run: error: --depth must be positive
// DEPTH-NEXT: exit=2

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LUS
// LUS:      step-run: error: the following arguments are required: --node, --ticks (or give a file with a step.graph)
// LUS-NEXT: exit=2

// Partition / reassemble routing with selector generators.
// RUN: step-run %S/inputs/step-route-2experts.mlir --preset swiglu-hdl --functional | filecheck %s --check-prefix=ROUTE
// ROUTE: cycles                 146
// ROUTE: part                     Partition              8
// ROUTE: reasm                    Reassemble
