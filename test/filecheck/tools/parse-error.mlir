// RUN: not step-opt %s 2>&1 | filecheck %s
func.func @f(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i64
  func.return %b : i32
}
// CHECK: parse-error.mlir:3:19: error: operand is used with type i64, but has been previously used or defined with type i32
// CHECK-NOT: Traceback
