// Chunks are processed independently and printed separated by `// -----`;
// line numbers in diagnostics are those of the whole file.
// RUN: step-opt %s --split-input-file | filecheck %s
// RUN: not step-opt %s 2>&1 | filecheck %s --check-prefix=NOSPLIT

func.func @first() {
  func.return
}
// -----
func.func @first() {
  func.return
}

// CHECK:      func.func @first()
// CHECK:      // -----
// CHECK:      func.func @first()
// A redefinition is reported at the second definition, with a note at the first.
// NOSPLIT:      split-input-file.mlir:10:1: error: Redefinition of symbol "first"
// NOSPLIT-NEXT: func.func @first() {
// NOSPLIT-NEXT: ^
// NOSPLIT-NEXT: split-input-file.mlir:6:1: note: see existing symbol definition here
