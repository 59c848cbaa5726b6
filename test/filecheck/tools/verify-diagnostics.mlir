// --verify-diagnostics succeeds when every expected diagnostic is produced
// and nothing else is; otherwise it fails naming the mismatch.
// RUN: step-opt %S/inputs/expected-ok.mlir --split-input-file --verify-diagnostics
// RUN: sh -c 'step-opt %S/inputs/expected-missing.mlir --split-input-file --verify-diagnostics; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: sh -c 'step-opt %S/inputs/expected-unexpected.mlir --verify-diagnostics; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNEXPECTED

// MISSING:      expected-missing.mlir:5:1: error: expected error "this is never reported" on line 6 was not produced
// MISSING-NEXT: exit=1

// UNEXPECTED:      expected-unexpected.mlir:3:3: error: unexpected error: Expected arguments to have the same types
// UNEXPECTED-NEXT: exit=1

// A malformed annotation or one pointing outside its chunk is an error, not
// silently ignored (the first chunk passed with exit 0 before).
// RUN: sh -c 'step-opt %S/inputs/expected-malformed.mlir --split-input-file --verify-diagnostics; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MALFORMED
// MALFORMED:      expected-malformed.mlir:2:4: error: malformed expected-error annotation: expected an optional @+N, @-N, @above or @below, then {{[{][{]}}message{{[}][}]}}
// MALFORMED-NEXT: expected-malformed.mlir:8:1: error: expected-error annotation points to line -1, outside lines 6-11
// MALFORMED-NEXT: expected-malformed.mlir:8:1: error: expected error "nowhere" on line -1 was not produced
// MALFORMED-NEXT: exit=1
