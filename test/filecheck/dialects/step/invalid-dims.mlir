// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: rm -f steplus_pwned
// RUN: sh -c 'step-opt %s --split-input-file -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXIT
// RUN: test ! -e steplus_pwned
// Dimension texts are parsed by a whitelist grammar (dialects/step/dims.py,
// SECURITY.md), never evaluated as Python: each hostile text is a located
// error at the type that holds it, exit 1, and runs nothing.

// EXIT: invalid-dims.mlir:15:10: error: invalid stream dimension '__import__('os').system('touch steplus_pwned')': names starting with '__' are reserved
// EXIT-NEXT: ^bb0(%x: !step.stream<["__import__('os').system('touch steplus_pwned')"], !step.tile<1x64xf32>>):
// EXIT: invalid-dims.mlir:92:10: error: stream dimension '9223372036854775808' must be a non-negative integer (at most 2**63 - 1)
// EXIT: exit=1
step.graph @import {
// expected-error @+1 {{invalid stream dimension '__import__('os').system('touch steplus_pwned')': names starting with '__' are reserved}}
^bb0(%x: !step.stream<["__import__('os').system('touch steplus_pwned')"], !step.tile<1x64xf32>>):
}

// -----

step.graph @subclasses {
// expected-error @+1 {{invalid stream dimension '().__class__.__bases__[0].__subclasses__()': names starting with '__' are reserved}}
^bb0(%x: !step.stream<["().__class__.__bases__[0].__subclasses__()"], !step.tile<1x64xf32>>):
}

// -----

step.graph @lambda {
// expected-error @+1 {{invalid stream dimension '(lambda: 3)()': 'lambda' is not allowed}}
^bb0(%x: !step.stream<["(lambda: 3)()"], !step.tile<1x64xf32>>):
}

// -----

step.graph @tower {
// expected-error @+1 {{invalid stream dimension '9**9**9**9': the exponent of '**' must be an integer literal of at most 16}}
^bb0(%x: !step.stream<["9**9**9**9"], !step.tile<1x64xf32>>):
}

// -----

step.graph @attribute {
// expected-error @+1 {{invalid stream dimension 'B.real': attribute access ('.') is not allowed}}
^bb0(%x: !step.stream<["B.real"], !step.tile<1x64xf32>>):
}

// -----

step.graph @subscript {
// expected-error @+1 {{invalid stream dimension 'x[0]': subscripting ('[]') is not allowed}}
^bb0(%x: !step.stream<["x[0]"], !step.tile<1x64xf32>>):
}

// -----

step.graph @string {
// expected-error @+1 {{invalid stream dimension ''a'': only integer literals are allowed, got 'a'}}
^bb0(%x: !step.stream<["'a'"], !step.tile<1x64xf32>>):
}

// -----

step.graph @float {
// expected-error @+1 {{invalid stream dimension '1.5': only integer literals are allowed, got 1.5}}
^bb0(%x: !step.stream<["1.5"], !step.tile<1x64xf32>>):
}

// -----

step.graph @unknown_function {
// expected-error @+1 {{invalid stream dimension 'exp(B)': unknown function 'exp'; allowed: Max, Min, Mod, ceil, ceiling, floor, max, min, mod}}
^bb0(%x: !step.stream<["exp(B)"], !step.tile<1x64xf32>>):
}

// -----

step.graph @mod_zero {
// expected-error @+1 {{invalid stream dimension 'mod(B, 0)': mod by zero}}
^bb0(%x: !step.stream<["mod(B, 0)"], !step.tile<1x64xf32>>):
}

// -----

step.graph @floordiv_zero {
// expected-error @+1 {{invalid stream dimension 'B // (C - C)': division by zero}}
^bb0(%x: !step.stream<["B // (C - C)"], !step.tile<1x64xf32>>):
}

// -----

step.graph @too_big {
// expected-error @+1 {{stream dimension '9223372036854775808' must be a non-negative integer (at most 2**63 - 1)}}
^bb0(%x: !step.stream<[9223372036854775808], !step.tile<1x64xf32>>):
}
