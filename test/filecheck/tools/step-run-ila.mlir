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

// Hostile inputs: an op without numpy semantics, an unreadable constant and an oversized result
// type are errors at the op (exit 1); zero-size tensors and NaN constants run.
// RUN: sh -c 'step-run %S/inputs/ila-no-semantics.mlir --backend ila --func @f --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOSEM
// NOSEM: ila-no-semantics.mlir:3:3: error: step-run: no numpy semantics for 'tosa.sin'
// NOSEM-NEXT: exit=1
// RUN: sh -c 'step-run %S/inputs/ila-resource-constant.mlir --backend ila --func @f --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RESOURCE
// RESOURCE: ila-resource-constant.mlir:3:3: error: step-run: 'arith.constant': dense_resource<blob1> has no blob in the file's dialect_resources section
// RESOURCE-NEXT: exit=1
// RUN: sh -c 'step-run %S/inputs/ila-huge-result.mlir --backend ila --func @f --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HUGE
// HUGE: ila-huge-result.mlir:3:3: error: step-run: 'tensor.empty' result has 10000000000 elements, more than step-run's limit of 134217728 per tensor
// HUGE-NEXT: exit=1
// RUN: sh -c 'step-run %S/inputs/ila-zero-size.mlir --backend ila --func @f --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: invocations: none
// ZERO-NEXT: output 0: shape [0, 3], relative error vs float32 numpy 0.000000
// ZERO-NEXT: exit=0
// RUN: sh -c 'step-run %S/inputs/ila-nan-constant.mlir --backend ila --func @f --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NAN
// NAN: invocations: none
// NAN-NEXT: output 0: shape [2, 3], relative error vs float32 numpy nan
// NAN-NEXT: exit=0
// A malformed pool is rejected at the op when the pipeline's isel imports it.
// RUN: sh -c 'step-run %S/../passes/isel-malformed.mlir --backend ila --func @zero_stride --random 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=POOL
// POOL: isel-malformed.mlir:11:3: error: isel: 'tosa.max_pool2d': kernel and stride must be positive and pads non-negative
// POOL: exit=1
