// A symbol defined twice is reported at the second definition, with a note at
// the first (it was reported at 1:1).
// RUN: sh -c 'step-opt %s --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s

func.func @f() {
  func.return
}
func.func @f() {
  func.return
}
// CHECK:      duplicate-symbol.mlir:8:1: error: Redefinition of symbol "f"
// CHECK-NEXT: func.func @f() {
// CHECK-NEXT: ^
// CHECK-NEXT: duplicate-symbol.mlir:5:1: note: see existing symbol definition here
// CHECK-NEXT: func.func @f() {
// CHECK-NEXT: ^

// -----
sync.node @n(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  sync.halt
}
sync.node @n(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  sync.halt
}
// CHECK:      duplicate-symbol.mlir:22:1: error: Redefinition of symbol "n"
// CHECK-NEXT: sync.node @n(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
// CHECK-NEXT: ^
// CHECK-NEXT: duplicate-symbol.mlir:19:1: note: see existing symbol definition here
// CHECK-NEXT: sync.node @n(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
// CHECK-NEXT: ^
// CHECK-NEXT: // -----
// CHECK-NEXT: exit=1
