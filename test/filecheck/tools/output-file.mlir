// RUN: step-opt %s -o %t.out && filecheck %s < %t.out
// RUN: sh -c 'step-opt %s -o /nonexistent-dir/x.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
func.func @f() {
  func.return
}
// CHECK: func.func @f()
// BAD:      /nonexistent-dir/x.mlir: error: cannot write output: No such file or directory
// BAD-NEXT: exit=1
