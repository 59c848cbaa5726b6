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

// A file with one lus node runs it, which needs --ticks.
// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LUS
// LUS:      step-run: error: the following arguments are required: --ticks
// LUS-NEXT: exit=2

// Partition / reassemble routing with selector generators.
// RUN: step-run %S/inputs/step-route-2experts.mlir --preset swiglu-hdl --functional | filecheck %s --check-prefix=ROUTE
// ROUTE: cycles                 146
// ROUTE: part                     Partition              8
// ROUTE: reasm                    Reassemble

// Hardware configs are validated on load, naming the key and what it expects.
// RUN: echo '{"hbm": {"channels": 0}}' > %t.zero.json
// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --config %t.zero.json; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZEROCH
// ZEROCH:      zero.json: error: invalid hardware config: hbm.channels: expected an integer in [1, 1024], got 0
// ZEROCH-NEXT: exit=1
// RUN: echo '{"base_depth": "2"}' > %t.str.json
// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --config %t.str.json; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=STRDEPTH
// STRDEPTH:      str.json: error: invalid hardware config: base_depth: expected an integer in [1, 1048576], got "2"
// STRDEPTH-NEXT: exit=1
// RUN: sh -c 'step-run %S/inputs/swiglu-tm32-tn128.mlir --depth 100000000; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BIGDEPTH
// BIGDEPTH:      step-run: error: --depth: base_depth: expected an integer in [1, 1048576], got 100000000
// BIGDEPTH-NEXT: exit=2

// A simulation estimated past 10M stream elements is refused before anything
// is allocated (B = 10^9: 8 x 10^9 elements); B = 4 runs.
// RUN: sh -c 'step-run %S/inputs/step-bind-b.mlir --bind B=1000000000; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HUGEB
// HUGEB:      step-bind-b.mlir: error: simulation too large: about 8,000,000,000 stream elements (limit 10,000,000); bind smaller dims, or pass --force to run it anyway
// HUGEB-NEXT: exit=1
// RUN: step-run %S/inputs/step-bind-b.mlir --bind B=4 --force --json | filecheck %s --check-prefix=SMALLB
// SMALLB: "offchip_read_bytes": 32768,
// SMALLB: "offchip_written_bytes": 98304,

// Binding B alone leaves the experts' token counts open: the selectors carry
// no routing and the layer deadlocks; the report names the unbound symbols.
// RUN: sh -c 'step-run %S/../passes/inputs/moe-tiny.mlir --bind B=4; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNBOUND
// UNBOUND:      moe-tiny.mlir: error: deadlock at cycle
// UNBOUND:      note: the stream dims still have unbound symbols (B_0, B_1, B_sel, F, F_1, P_0, ...); bind them (step-run --bind/--routing/--kv)
// UNBOUND-NEXT: exit=1

// Per-op knobs are registered attributes (dialects/step/discardable.py), verified
// where written: switch times never negative (time would run backwards), a positive
// compute_bw; the placement checks there is one switch time per branch.
// RUN: sed 's/{name = "part"}/{name = "part", switch_cycles = array<i64: -5, 1>}/' %S/inputs/step-route-2experts.mlir > %t.neg.mlir
// RUN: sh -c 'step-run %t.neg.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NEGSW
// NEGSW:      neg.mlir:2:3: error: step.partition: 'switch_cycles' must be an array of integers in [0, 1099511627776], got [-5, 1]
// NEGSW:      exit=1
// RUN: sed 's/{name = "part"}/{name = "part", switch_cycles = array<i64: 1>}/' %S/inputs/step-route-2experts.mlir > %t.short.mlir
// RUN: sh -c 'step-run %t.short.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHORTSW
// SHORTSW:      short.mlir: error: 'switch_cycles' must list 2 cycle counts in [0, 1099511627776], got [1] ('step.partition')
// SHORTSW-NEXT: exit=1
// RUN: sed 's/compute_bw = 16 : i64/compute_bw = 0 : i64/' %S/inputs/step-route-2experts.mlir > %t.bw.mlir
// RUN: sh -c 'step-run %t.bw.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZEROBW
// ZEROBW:      bw.mlir:2:3: error: step.map: 'compute_bw' must be an integer in [1, 1099511627776], got 0
// ZEROBW:      exit=1
