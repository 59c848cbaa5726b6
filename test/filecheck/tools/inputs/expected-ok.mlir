func.func @f(%a: i32) -> i32 {
  // expected-error @+1 {{Expected arguments to have the same types}}
  func.return %a, %a : i32, i32
}
// -----
func.func @g(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i64 // expected-error {{operand is used with type i64}}
  func.return %b : i32
}
// -----
func.func @h(%a: i32) -> i32 {
  func.return %a : i32
}
