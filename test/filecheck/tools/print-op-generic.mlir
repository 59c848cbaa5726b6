// RUN: step-opt %s --print-op-generic | filecheck %s
// RUN: step-opt %s --print-op-generic | step-opt | filecheck %s --check-prefix=BACK
func.func @f(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i32
  func.return %b : i32
}
// CHECK:      "func.func"() <{sym_name = "f", function_type = (i32) -> i32}> ({
// CHECK-NEXT: ^bb0(%a: i32):
// CHECK-NEXT:   %b = "arith.addi"(%a, %a) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
// CHECK-NEXT:   "func.return"(%b) : (i32) -> ()
// BACK: %b = arith.addi %a, %a : i32
