// Saturation limits of isel: a limit that stops saturation is a warning naming it; the result is still valid.
// RUN: step-opt %examples/isel/maxpool128.mlir -p 'isel{targets=flexasr iterations=3}' 2>&1 | filecheck %s --check-prefix=ITER
// RUN: step-opt %examples/isel/encoder_layer.mlir -p 'isel{targets=flexasr node-limit=100}' 2>&1 >/dev/null | filecheck %s --check-prefix=NODES
// RUN: step-opt %examples/isel/encoder_layer.mlir -p 'isel{targets=flexasr time-limit=0.001}' 2>&1 >/dev/null | filecheck %s --check-prefix=TIME
// RUN: step-opt %examples/isel/maxpool128.mlir -p 'isel{targets=flexasr}' 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: not step-opt %examples/isel/maxpool128.mlir -p 'isel{node-limit=0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not step-opt %examples/isel/maxpool128.mlir -p 'isel{time-limit=-1.0}' 2>&1 | filecheck %s --check-prefix=BADT
// RUN: not step-opt %examples/isel/maxpool128.mlir -p 'isel{iterations=99999999999999999999}' 2>&1 | filecheck %s --check-prefix=BADI

// Three iterations do not reach the temporal pools: the max-pool stays on the host.
// ITER: maxpool128.mlir:2:1: warning: isel: @maxpool: saturation stopped by the iteration limit (3 iterations) after 3 iterations, {{[0-9]+}} e-nodes, {{[0-9.]+}} s; the selection is valid but may miss matches
// ITER-NOT: ila.invoke
// ITER: tosa.max_pool2d

// NODES: encoder_layer.mlir:3:1: warning: isel: @encoder_layer: saturation stopped by the node limit (100 e-nodes) after 1 iterations, {{[0-9]+}} e-nodes
// A stop by time depends on the machine's load: the warning says the result may differ between runs.
// TIME: warning: isel: @encoder_layer: saturation stopped by the time limit (0.001 s) after 1 iterations, {{[0-9]+}} e-nodes, {{[0-9.]+}} s; the selection is valid but may miss matches, and depends on this machine's speed and load: it may differ between runs (raise time-limit, or lower iterations / node-limit, for a reproducible stop)

// The defaults (40 iterations, 100000 e-nodes; the 300 s time limit is a safety) saturate: no warning, four pools.
// DEFAULT-NOT: warning
// DEFAULT-COUNT-4: ila.invoke "flexasr.maxpool"

// BAD: step-opt: error: invalid options for pass 'isel': node-limit must be an integer in [1, 100000000], got 0
// BADI: step-opt: error: invalid options for pass 'isel': iterations must be an integer in [1, 10000], got 99999999999999999999
// BADT: step-opt: error: invalid options for pass 'isel': time-limit must be a positive number of seconds, got -1.0
