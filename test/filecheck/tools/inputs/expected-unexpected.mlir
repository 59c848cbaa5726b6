// No annotation here, but the verifier fails.
func.func @f(%a: i32) -> i32 {
  func.return %a, %a : i32, i32
}
