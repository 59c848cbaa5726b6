// RUN: printf 'func.func @f() {\n  \377\n}\n' > %t.mlir
// RUN: sh -c 'step-opt %t.mlir; echo "exit=$?"' 2>&1 | filecheck %s
// CHECK:      .mlir:2:3: error: input is not valid UTF-8 (byte 0xff)
// CHECK-NEXT: exit=1
