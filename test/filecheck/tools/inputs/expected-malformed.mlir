// An annotation without its {{message}} would never be checked.
// expected-error @+1 {{unterminated
func.func @f() {
  func.return
}
// -----
// An offset outside the chunk can never match.
// expected-error @-9 {{nowhere}}
func.func @g() {
  func.return
}
