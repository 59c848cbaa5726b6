// The ONNX MLP (examples/isel/onnx/onnx_mlp.mlir, produced by iree-import-onnx + iree-opt):
// the linalg.generic broadcast adds fold into the two linear layers as their biases.
// RUN: step-opt %examples/isel/onnx/onnx_mlp.mlir -p 'isel{targets=flexasr mode=flexible}' | filecheck %s
// RUN: step-opt %examples/isel/onnx/onnx_mlp.mlir -p 'isel{targets=flexasr mode=exact}' | filecheck %s --check-prefix=EXACT
// RUN: step-opt %examples/isel/onnx/onnx_mlp.mlir -p 'isel{targets=vta mode=exact}' | filecheck %s --check-prefix=VTA

// CHECK-LABEL: func.func @onnx_mlp
// CHECK-NOT:   linalg.fill
// CHECK:       %[[T:.*]] = linalg.transpose ins(%arg1:tensor<64x128xf32>) outs(%{{.*}}:tensor<128x64xf32>) permutation = [1, 0]
// CHECK-NEXT:  %[[L1:.*]] = ila.invoke "flexasr.linear"(%arg0, %[[T]], %arg2) : (tensor<16x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<16x128xf32>
// CHECK-NEXT:  %[[R:.*]] = linalg.generic {{.*}} ins(%[[L1]] : tensor<16x128xf32>)
// CHECK:       arith.cmpf ugt
// CHECK-NOT:   linalg.fill
// CHECK:       %[[L2:.*]] = ila.invoke "flexasr.linear"(%[[R]], %arg3, %arg4) : (tensor<16x128xf32>, tensor<64x128xf32>, tensor<64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:  %[[Y:.*]] = tosa.add %arg0, %[[L2]] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<16x64xf32>

// EXACT-NOT:   ila.invoke

// The Gemm (transB=1) is a literal dense: exact VTA GEMM; the bias add stays on the host.
// VTA-COUNT-1: ila.invoke "vta.dense"(%{{.*}}, %arg3)
// VTA-NOT:     ila.invoke
