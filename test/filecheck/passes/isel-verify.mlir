// RUN: step-opt %S/inputs/isel-small.mlir -p 'isel-verify{targets=flexasr}' 2>&1 >/dev/null | filecheck %s --check-prefix=FLEX
// RUN: step-opt %S/inputs/isel-small.mlir -p 'isel-verify{targets=vta arith=bv}' 2>&1 >/dev/null | filecheck %s --check-prefix=VTA
// RUN: not step-opt %S/inputs/isel-small.mlir -p 'isel-verify{arith=real}' 2>&1 | filecheck %s --check-prefix=BAD

// FLEX: isel-small.mlir:2:1: remark: isel-verify: @pool: 4 invocations (flexasr=4) equivalent to the input on all 16 outputs (z3: unsat)
// FLEX: isel-small.mlir:6:1: remark: isel-verify: @linear: 1 invocations (flexasr=1) equivalent to the input on all 128 outputs (z3: unsat)
// VTA: remark: isel-verify: @conv: 1 invocations (vta=1) equivalent to the input on all 256 outputs (z3: unsat)
// BAD: error: isel-verify: arith must be 'uf' or 'bv', got 'real'

// RUN: step-opt %S/inputs/isel-fused-small.mlir -p 'isel-verify{targets=flexasr}' 2>&1 >/dev/null | filecheck %s --check-prefix=FUSED
// FUSED: isel-fused-small.mlir:4:1: remark: isel-verify: @layernorm: 1 invocations (flexasr=1) equivalent to the input on all 32 outputs (z3: unsat)
// FUSED: isel-fused-small.mlir:33:1: remark: isel-verify: @attention: 1 invocations (flexasr=1) equivalent to the input on all 32 outputs (z3: unsat)
