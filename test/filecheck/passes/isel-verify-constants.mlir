// isel-verify reads every attribute shape a constant takes: a scalar FloatAttr (ONNX's
// `arith.constant 0.0 : f32` feeding linalg.fill and a ReLU generic), dense splat and dense
// per-element values; an attribute it cannot read, or a NaN, is an error at the constant.
// (A NaN is written as a scalar: xDSL 0.74 reads `dense<0x7FC00000>` as the integer 2143289344.)
// RUN: sh -c 'step-opt %s --split-input-file -p "isel-verify{targets=flexasr}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s

// CHECK: isel-verify-constants.mlir:[[# @LINE + 1]]:1: remark: isel-verify: @onnx_like: 1 invocations (flexasr=1) equivalent to the input on all 128 outputs (z3: unsat)
func.func @onnx_like(%x: tensor<2x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x64xf32>) -> tensor<2x64xf32>
  %2 = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x64xf32>) outs(%1 : tensor<2x64xf32>) -> tensor<2x64xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2, %b : tensor<2x64xf32>, tensor<64xf32>) outs(%0 : tensor<2x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<2x64xf32>) outs(%0 : tensor<2x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf ugt, %in, %cst : f32
    %r = arith.select %c, %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x64xf32>
  func.return %4 : tensor<2x64xf32>
}
// -----
// CHECK: isel-verify-constants.mlir:[[# @LINE + 1]]:1: remark: isel-verify: @dense_values: 0 invocations (none) equivalent to the input on all 2 outputs (z3: unsat)
func.func @dense_values(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %c = arith.constant dense<[[1.5, -2.0]]> : tensor<1x2xf32>
  %y = tosa.add %x, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}
// -----
func.func @nan(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  // CHECK: isel-verify-constants.mlir:[[# @LINE + 1]]:3: error: isel-verify: 'arith.constant' holds a non-finite value, which has no symbolic meaning
  %n = arith.constant 0x7FC00000 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %c = linalg.fill ins(%n : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = tosa.add %x, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}
// -----
func.func @resource(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  // CHECK: isel-verify-constants.mlir:[[# @LINE + 1]]:3: error: isel-verify: 'arith.constant': dense_resource<blob1> has no blob in the file's dialect_resources section
  %c = arith.constant dense_resource<blob1> : tensor<1x2xf32>
  %y = tosa.add %x, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}
// CHECK: exit=1
