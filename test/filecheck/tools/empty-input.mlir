// An input with only white space or comments is an empty module (xdsl-opt
// crashes with a traceback on a lone newline).
// RUN: printf '\n' | step-opt | filecheck %s
// RUN: step-opt %s | filecheck %s

// CHECK:      builtin.module {
// CHECK-NEXT: }
