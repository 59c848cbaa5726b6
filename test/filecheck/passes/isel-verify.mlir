// RUN: step-opt %S/inputs/isel-small.mlir -p 'isel-verify{targets=flexasr}' 2>&1 >/dev/null | filecheck %s --check-prefix=FLEX
// RUN: step-opt %S/inputs/isel-small.mlir -p 'isel-verify{targets=vta arith=bv}' 2>&1 >/dev/null | filecheck %s --check-prefix=VTA
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{arith=real}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD

// FLEX: isel-small.mlir:2:1: remark: isel-verify: @pool: 4 invocations (flexasr=4) equivalent to the input on all 16 outputs (z3: unsat)
// FLEX: isel-small.mlir:6:1: remark: isel-verify: @linear: 1 invocations (flexasr=1) equivalent to the input on all 128 outputs (z3: unsat)
// VTA: remark: isel-verify: @conv: 1 invocations (vta=1) equivalent to the input on all 256 outputs (z3: unsat)
// BAD: step-opt: error: invalid options for pass 'isel-verify': arith must be 'uf' or 'bv', got 'real'
// BAD-NEXT: exit=2

// RUN: step-opt %S/inputs/isel-fused-small.mlir -p 'isel-verify{targets=flexasr}' 2>&1 >/dev/null | filecheck %s --check-prefix=FUSED
// FUSED: isel-fused-small.mlir:4:1: remark: isel-verify: @layernorm: 1 invocations (flexasr=1) equivalent to the input on all 32 outputs (z3: unsat)
// FUSED: isel-fused-small.mlir:33:1: remark: isel-verify: @attention: 1 invocations (flexasr=1) equivalent to the input on all 32 outputs (z3: unsat)

// z3 `unknown` is "not proved", never "differs": a warning, and the pipeline succeeds (exit 0).
// A 1 ms budget (it starts before isel runs on the copy) is spent before the first query of @pool (the
// one function whose two programs differ syntactically: its 16 outputs); a 1 MB z3 memory ceiling stops its first query.
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{targets=flexasr timeout-ms=1}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TIMEOUT
// TIMEOUT: isel-small.mlir:2:1: warning: isel-verify: @pool: not proven within timeout-ms=1 (the time ran out with 0 of the 16 outputs that differ as terms checked (0 z3 queries)); raise isel-verify{timeout-ms=...} or verify at smaller shapes
// TIMEOUT-NOT: differs
// TIMEOUT: exit=0
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{targets=flexasr memory-mb=1}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MEMORY
// MEMORY: isel-small.mlir:2:1: warning: isel-verify: @pool: could not prove equivalence (z3: unknown, out of memory); raise isel-verify{timeout-ms=...} (now 60000) or {memory-mb=...} (now 1)
// MEMORY-NOT: differs
// MEMORY: exit=0

// The proof's size is estimated before any term is built; past max-terms it is refused at the
// function.  @pool, counted by hand: the input program has 64 input elements and the 4x4 max-pool
// 2·16 terms (a comparison and an If per window element) for each of its 16 outputs: 576.  The
// selected program: 64 inputs, ila.windows 16·16 = 256 elements, four flexasr.maxpool with
// 2·(128 + 64 + 32 + 16) = 480, tosa.const_shape 1, tosa.reshape 16: 817.  Total 1393.
// RUN: sh -c 'step-opt %S/inputs/isel-small.mlir -p "isel-verify{targets=flexasr max-terms=1000}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TERMS
// TERMS: isel-small.mlir:2:1: error: isel-verify: @pool: the proof would build about 1393 symbolic terms, more than max-terms=1000; raise isel-verify{max-terms=...} (about 1 KB of memory each) or verify at smaller shapes
// TERMS: exit=1
// With the defaults, a program too big to prove in bounded memory is refused before any term is built
// (the ResMLP block: two 256x256 layers on 16 tokens, about 9 million terms, > 9 GB).
// RUN: sh -c 'step-opt %examples/isel/resmlp.mlir -p isel-verify -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BIG
// BIG: resmlp.mlir:3:1: error: isel-verify: @resmlp: the proof would build about {{[0-9]+}} symbolic terms, more than max-terms=2000000; raise isel-verify{max-terms=...} (about 1 KB of memory each) or verify at smaller shapes
// BIG: exit=1
