// --split-input-file prints the chunks that succeed and reports the others
// (exit 1), as mlir-opt does; --parsing-diagnostics makes a parse error the
// chunk's output (exit 0); input-checking flags.
// RUN: sh -c 'step-opt %s --split-input-file 2>%t.err; echo "exit=$?"' | filecheck %s --check-prefix=GOOD
// RUN: filecheck %s --check-prefix=BAD < %t.err
// GOOD:      func.func @good_one()
// GOOD-NEXT:   func.return
// GOOD-NEXT: }
// GOOD-NEXT: }
// GOOD-NEXT: // -----
// GOOD-NEXT: // -----
// GOOD-NEXT: builtin.module {
// GOOD-NEXT:   func.func @good_two()
// GOOD:      exit=1
// BAD:      {{.*}}step-opt-chunks.mlir:[[# @LINE + 14]]:20: error: type expected
// BAD-NOT:  error:
// RUN: sh -c 'step-opt %s --split-input-file --parsing-diagnostics 2>%t.perr; echo "exit=$?"' | filecheck %s --check-prefix=PDIAG
// RUN: test ! -s %t.perr
// PDIAG:      func.func @good_one()
// PDIAG:      // -----
// PDIAG-NEXT: {{.*}}step-opt-chunks.mlir:[[# @LINE + 8]]:20: error: type expected
// PDIAG:      // -----
// PDIAG:      func.func @good_two()
// PDIAG:      exit=0
func.func @good_one() {
  func.return
}
// -----
func.func @bad(%x: ) {
  func.return
}
// -----
func.func @good_two() {
  func.return
}

// --disable-verify skips the verifier: a redefined symbol prints.
// RUN: step-opt %S/duplicate-symbol.mlir --split-input-file --disable-verify | filecheck %s --check-prefix=NOVERIFY
// NOVERIFY: func.func @f()
// NOVERIFY: func.func @f()
// --no-implicit-module wants one builtin.module around the input.
// RUN: sh -c 'step-opt %S/duplicate-symbol.mlir --split-input-file --no-implicit-module; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOIMPLICIT
// NOIMPLICIT: error: {{.*}}builtin.module
// NOIMPLICIT: exit=1
// --allow-unregistered-dialect accepts ops of unknown dialects (printed generic).
// RUN: echo '"foo.bar"() : () -> ()' | step-opt --allow-unregistered-dialect | filecheck %s --check-prefix=UNREG
// RUN: echo '"foo.bar"() : () -> ()' | not step-opt 2>&1 | filecheck %s --check-prefix=NOUNREG
// UNREG: "foo.bar"() : () -> ()
// NOUNREG: error: {{.*}}foo.bar
