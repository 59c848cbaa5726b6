// Usage errors are one line with exit code 2; user errors exit 1.
// RUN: sh -c 'step-opt --no-such-flag %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG:      step-opt: error: unrecognized arguments: --no-such-flag
// FLAG-NEXT: exit=2

// RUN: sh -c 'step-opt -p no-such-pass %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PASS
// PASS:      step-opt: error: invalid pass pipeline: Unrecognized passes: ['no-such-pass']
// PASS-NEXT: exit=2

// RUN: sh -c 'step-opt %t.does-not-exist; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING:      does-not-exist: error: cannot read input file: No such file or directory
// MISSING-NEXT: exit=1

// RUN: sh -c 'step-opt %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OK
// OK: exit=0
func.func @ok() {
  func.return
}
