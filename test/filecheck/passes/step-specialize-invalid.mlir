// Malformed bindings and traces: a usage error (exit 2) for a bad `bind=`
// option, a located error (exit 1) for a bad trace file or a bad recorded
// `step.bind` attribute; each message names the option or file and the entry.
// RUN: sh -c 'step-opt %s -p "step-specialize{bind=\"B=-1\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NEG
// RUN: sh -c 'step-opt %s -p "step-specialize{bind=\"B=64,B=32\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DUP
// RUN: sh -c 'step-opt %s -p "step-specialize{bind=\"B=1.5\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FRAC
// RUN: sh -c 'step-opt %s -p "step-specialize{bind=\"=3\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: sh -c 'step-opt %s -p "step-specialize{bind=\"B=9223372036854775808\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: sh -c 'step-opt %s -p "step-metrics{bind=\"B=-64\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=METRICS
// RUN: sh -c 'step-opt %s -p "step-specialize{kv=\"%repo/examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=KVNPZ
// RUN: sh -c 'step-opt %s -p "step-specialize{routing=\"%repo/examples/data/step-traces/azure_kv/b16/conv_stdev0174_1845_1860.npy\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ROUTENPY
// RUN: sh -c 'step-opt %S/inputs/step-bad-bind-attr.mlir -p step-metrics --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ATTR
// RUN: sh -c 'step-opt %S/inputs/step-bad-bind-attr.mlir -p step-specialize --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ATTR

// NEG: step-opt: error: invalid options for pass 'step-specialize': bad binding entry 1 'B=-1': the value must be non-negative
// NEG-NEXT: exit=2
// DUP: step-opt: error: invalid options for pass 'step-specialize': bad binding entry 2 'B=32': 'B' is bound twice (first in entry 1)
// DUP-NEXT: exit=2
// FRAC: step-opt: error: invalid options for pass 'step-specialize': bad binding entry 1 'B=1.5': the value must be a non-negative integer
// FRAC-NEXT: exit=2
// EMPTY: step-opt: error: invalid options for pass 'step-specialize': bad binding entry 1 '=3': the symbol name is empty
// EMPTY-NEXT: exit=2
// HUGE: step-opt: error: invalid options for pass 'step-specialize': bad binding entry 1 'B=9223372036854775808': the value exceeds the limit 2**63 - 1 = 9223372036854775807
// HUGE-NEXT: exit=2
// METRICS: step-opt: error: invalid options for pass 'step-metrics': bad binding entry 1 'B=-64': the value must be non-negative
// METRICS-NEXT: exit=2
// ATTR: step-bad-bind-attr.mlir:3:1: error: step.bind: entry 'B_0': the value must be non-negative, got -3
// ATTR: step-bad-bind-attr.mlir:10:1: error: step.bind: entry 'B': the value must be an integer (NAME = 64 : i64), got "64"
// ATTR: step-bad-bind-attr.mlir:17:1: error: step.bind must be a dictionary of integers {NAME = INTEGER : i64, ...}, got "B=64"
// ATTR: step-bad-bind-attr.mlir:24:1: error: step.bind: entry 'B': the value exceeds the limit 2**63 - 1 = 9223372036854775807
// ATTR: exit=1
// KVNPZ: step-specialize-invalid.mlir:[[# @LINE + 5]]:1: error: step-specialize: {{.*}}mixtral_b64/008_010.npz: is a .npz archive; a KV-length trace is a NumPy .npy file
// KVNPZ: exit=1
// ROUTENPY: step-specialize-invalid.mlir:[[# @LINE + 3]]:1: error: step-specialize: {{.*}}conv_stdev0174_1845_1860.npy: not a routing trace (expected a NumPy .npz archive)
// ROUTENPY: exit=1

step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x8xbf16>>
  %xf = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[B, 1], !step.tile<1x8xbf16>>) -> !step.stream<[B], !step.tile<1x8xbf16>>
  %sel = step.select_gen {choices = 2 : i64} : !step.stream<[B], !step.selector<2>>
  %p0, %p1 = step.partition %xf, %sel : (!step.stream<[B], !step.tile<1x8xbf16>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0], !step.tile<1x8xbf16>>, !step.stream<[B_1], !step.tile<1x8xbf16>>)
  step.consume %p0 : !step.stream<[B_0], !step.tile<1x8xbf16>>
  step.consume %p1 : !step.stream<[B_1], !step.tile<1x8xbf16>>
}
