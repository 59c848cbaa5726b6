// Bad isel / isel-verify options are usage errors (exit 2) naming the option and the allowed values.
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel{targets=\"\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel{targets=foo}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel{targets=vta,foo}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel{mode=fast}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{mode=fast}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VMODE
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{targets=tpu}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VTARGET
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{arith=real}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ARITH
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{timeout-ms=0}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TIMEOUT
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{memory-mb=-5}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MEMORY
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{max-terms=0}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TERMS
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{node-limit=0}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NODES

// EMPTY: step-opt: error: invalid options for pass 'isel': targets must name at least one of flexasr, hlscnn, vta
// EMPTY-NEXT: exit=2
// UNKNOWN: step-opt: error: invalid options for pass 'isel': unknown target 'foo' in targets (allowed: flexasr, hlscnn, vta)
// UNKNOWN-NEXT: exit=2
// MODE: step-opt: error: invalid options for pass 'isel': mode must be one of exact, flexible, got 'fast'
// MODE-NEXT: exit=2
// VMODE: step-opt: error: invalid options for pass 'isel-verify': mode must be one of exact, flexible, got 'fast'
// VMODE-NEXT: exit=2
// VTARGET: step-opt: error: invalid options for pass 'isel-verify': unknown target 'tpu' in targets (allowed: flexasr, hlscnn, vta)
// VTARGET-NEXT: exit=2
// ARITH: step-opt: error: invalid options for pass 'isel-verify': arith must be 'uf' or 'bv', got 'real'
// ARITH-NEXT: exit=2
// TIMEOUT: step-opt: error: invalid options for pass 'isel-verify': timeout-ms must be a positive integer, got 0
// TIMEOUT-NEXT: exit=2
// MEMORY: step-opt: error: invalid options for pass 'isel-verify': memory-mb must be a positive integer, got -5
// MEMORY-NEXT: exit=2
// TERMS: step-opt: error: invalid options for pass 'isel-verify': max-terms must be a positive integer, got 0
// TERMS-NEXT: exit=2
// NODES: step-opt: error: invalid options for pass 'isel-verify': node-limit must be an integer in [1, 100000000], got 0
// NODES-NEXT: exit=2
