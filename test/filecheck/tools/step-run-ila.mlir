// RUN: step-run %examples/isel/maxpool128.mlir --backend ila --func @maxpool --random 0 | filecheck %s
// RUN: step-run %examples/isel/linear_reshape.mlir --backend ila --func @linear --random 1 --pipeline 'isel{targets=flexasr},convert-ila-to-commands' | filecheck %s --check-prefix=LIN
// RUN: not step-run %examples/isel/maxpool128.mlir --backend ila --func @maxpool 2>&1 | filecheck %s --check-prefix=NOIN
// RUN: not step-run %examples/isel/maxpool128.mlir --backend ila --func @nope --random 0 2>&1 | filecheck %s --check-prefix=NOFN

// CHECK: invocations: flexasr=4
// CHECK-NEXT: commands: flexasr.reads=256, flexasr.waits=8, flexasr.writes=4120
// CHECK-NEXT: output 0: shape [1, 64, 64, 1], relative error vs float32 numpy 0.0{{[0-9]+}}
// LIN: invocations: flexasr=1
// LIN-NEXT: commands: flexasr.reads=40, flexasr.waits=1, flexasr.writes=1207
// NOIN: step-run: error: missing --input for argument 'x' (or pass --random SEED)
// NOFN: step-run: error: no func.func @nope in
// RUN: step-run %examples/isel/onnx/onnx_mlp.mlir --backend ila --func @onnx_mlp --random 0 | filecheck %s --check-prefix=ONNX
// ONNX: invocations: flexasr=2
// ONNX-NEXT: commands: flexasr.reads=192, flexasr.waits=2, flexasr.writes=1266
// ONNX-NEXT: output 0: shape [16, 64], relative error vs float32 numpy 0.0{{[0-4][0-9]+}}
