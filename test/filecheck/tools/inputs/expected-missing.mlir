func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
// -----
// expected-error @+1 {{this is never reported}}
func.func @g() {
  func.return
}
