// Verifier failures and parse errors are reported as file:line:col: error:
// followed by the source line and a caret; nothing else, no traceback.
// RUN: not step-opt %s 2>&1 | filecheck %s

func.func @f(%a: i32) -> i32 {
  func.return %a, %a : i32, i32
}
// CHECK:      error-format.mlir:6:3: error: Expected arguments to have the same types as the function output types
// CHECK-NEXT:   func.return %a, %a : i32, i32
// CHECK-NEXT:   ^
// CHECK-NOT:  Traceback
