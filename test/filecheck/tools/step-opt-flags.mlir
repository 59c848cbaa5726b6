// Every flag of `step-opt --help` does what its help says (issue 28 item 1).
// The input: the integrator; lus-normalize changes it, lus-clock-analysis does not.
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}

// --version names steplus and its version (pyproject: 0.1.0) and xDSL's (pinned 0.74.0).
// RUN: step-opt --version | filecheck %s --check-prefix=VERSION
// RUN: step-opt -v | filecheck %s --check-prefix=VERSION
// VERSION: step-opt (steplus 0.1.0) on xDSL 0.74.0

// Only flags step-opt implements are offered (xDSL's --shrink, --syntax-highlight
// and -f/--frontend did nothing here).
// RUN: step-opt --help | filecheck %s --check-prefix=HELP
// HELP-NOT: --shrink
// HELP-NOT: --syntax-highlight
// HELP-NOT: --frontend
// HELP: --pass-pipeline
// RUN: sh -c 'step-opt %s --shrink; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHRINK
// SHRINK:      step-opt: error: unrecognized arguments: --shrink
// SHRINK-NEXT: exit=2

// mlir-opt's pipeline syntax, with -p and with --pass-pipeline; a plain list too.
// RUN: step-opt %s --pass-pipeline='builtin.module(lus-normalize)' | filecheck %s --check-prefix=NORM
// RUN: step-opt %s -p 'builtin.module(lus-clock-analysis, lus-normalize)' | filecheck %s --check-prefix=NORM
// RUN: step-opt %s --pass-pipeline=lus-normalize | filecheck %s --check-prefix=NORM
// NORM: lus.node @integr state(%s_state: i32) (%i: i32) -> (i32) {
// RUN: sh -c 'step-opt %s -p lus-normalize --pass-pipeline=lus-normalize; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH:      step-opt: error: give the pipeline once: -p or --pass-pipeline, not both
// BOTH-NEXT: exit=2
// RUN: sh -c "step-opt %s --pass-pipeline='builtin.module(func.func(cse))'; echo exit=\$?" 2>&1 | filecheck %s --check-prefix=NESTED
// NESTED:      step-opt: error: invalid pass pipeline: nested pass pipelines inside builtin.module(...) are not supported
// NESTED-NEXT: exit=2
// RUN: sh -c "step-opt %s --pass-pipeline='func.func(cse)'; echo exit=\$?" 2>&1 | filecheck %s --check-prefix=ANCHOR
// ANCHOR:      step-opt: error: invalid pass pipeline: step-opt runs passes on builtin.module only, not nested on 'func.func'
// ANCHOR-NEXT: exit=2

// A pass option given twice is an error, not last-wins (also across spellings).
// RUN: sh -c "step-opt %s -p 'lus-clock-analysis{annotate=true annotate=false}'; echo exit=\$?" 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: sh -c "step-opt %s -p 'isel{node-limit=5 node_limit=6}'; echo exit=\$?" 2>&1 | filecheck %s --check-prefix=TWICE2
// TWICE:       step-opt: error: invalid options for pass 'lus-clock-analysis': option 'annotate' is given twice
// TWICE-NEXT:  exit=2
// TWICE2:      step-opt: error: invalid options for pass 'isel': option 'node-limit' is given twice
// TWICE2-NEXT: exit=2

// IR dumps go to stderr, titled as mlir-opt's; stdout keeps only the result.
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --print-between-passes 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// AFTER:      // -----// IR Dump After LusClockAnalysisPass (lus-clock-analysis) //----- //
// AFTER-NEXT: builtin.module {
// AFTER-NEXT:   lus.node @integr(%i: i32) -> (i32) {
// AFTER:      // -----// IR Dump After LusNormalizePass (lus-normalize) //----- //
// AFTER-NEXT: builtin.module {
// AFTER-NEXT:   lus.node @integr state(%s_state: i32) (%i: i32) -> (i32) {
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// BEFORE:      // -----// IR Dump Before LusClockAnalysisPass (lus-clock-analysis) //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE-NEXT:   lus.node @integr(%i: i32) -> (i32) {
// BEFORE:      // -----// IR Dump Before LusNormalizePass (lus-normalize) //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE-NEXT:   lus.node @integr(%i: i32) -> (i32) {
// BEFORE-NOT:  IR Dump
// Only the pass that changed the IR is dumped.
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --mlir-print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// CHANGE-NOT:  lus-clock-analysis
// CHANGE:      // -----// IR Dump After LusNormalizePass (lus-normalize) //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE-NOT:  IR Dump

// Timing report on stderr, one row per stage and pass.
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=TIME
// RUN: step-opt %s -p lus-clock-analysis,lus-normalize --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIME
// TIME:      ... Execution time report ...
// TIME:      Total Execution Time: {{[0-9.]+}} seconds
// TIME:      ----Wall Time----  ----Name----
// TIME:      {{[0-9.]+}} ({{ *[0-9.]+}}%)  parser
// TIME:      {{[0-9.]+}} ({{ *[0-9.]+}}%)  lus-clock-analysis
// TIME:      {{[0-9.]+}} ({{ *[0-9.]+}}%)  lus-normalize
// TIME:      {{[0-9.]+}} ({{ *[0-9.]+}}%)  output
// TIME:      {{[0-9.]+}} (100.0%)  Total

// Source locations, kept through a pass that rewrites the node.
// RUN: step-opt %s -p lus-normalize --print-debuginfo | filecheck %s --check-prefix=LOC
// LOC: %c0 = arith.constant 0 : i32 loc("{{.*}}step-opt-flags.mlir":4:3)
// LOC: %incr = arith.addi %s, %i : i32 loc("{{.*}}step-opt-flags.mlir":6:3)
// LOC: } loc("{{.*}}step-opt-flags.mlir":3:1)
// LOC-NOT: loc(unknown)

// Output forms.
// RUN: step-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// GENERIC: "lus.node"() <{sym_name = "integr", function_type = (i32) -> i32
// RUN: step-opt %s --print-op-generic --print-no-properties | filecheck %s --check-prefix=NOPROPS
// NOPROPS: }) {sym_name = "integr", function_type = (i32) -> i32
// RUN: step-opt %s -o %t.out.mlir && filecheck %s --check-prefix=OFILE < %t.out.mlir
// RUN: step-opt %s --output-file %t.out2.mlir && filecheck %s --check-prefix=OFILE < %t.out2.mlir
// OFILE: lus.node @integr(%i: i32) -> (i32) {
// RUN: step-opt %s -t mlir | filecheck %s --check-prefix=OFILE
