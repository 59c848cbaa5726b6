// A tensor past the 2^62-byte address space is a located error (np.prod wrapped at
// 2^63 before: the two 2^65-byte arguments got negative sizes and both address 0, exit 0).
// 4294967296 x 2147483648 x 4 bytes = 2^65 = 36893488147419103232.
// RUN: sh -c 'step-opt %s -p "convert-linalg-to-step{tile=\"1x1\"}"; echo "exit=$?"' 2>&1 | filecheck %s
// RUN: sh -c 'step-opt %s --split-input-file -p "convert-linalg-to-step{tile=\"1x1\"}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SPLIT

// CHECK:      convert-linalg-to-step-huge.mlir:[[# @LINE + 3]]:1: error: arg0 needs 36893488147419103232 bytes at address 0, past the end of the address space (2^62 bytes)
// CHECK-NOT:  step.graph
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @big(%a: tensor<4294967296x2147483648xf32>, %b: tensor<4294967296x2147483648xf32>) -> tensor<4294967296x2147483648xf32> {
  %e = tensor.empty() : tensor<4294967296x2147483648xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4294967296x2147483648xf32>, tensor<4294967296x2147483648xf32>) outs(%e : tensor<4294967296x2147483648xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.addf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<4294967296x2147483648xf32>
  return %r : tensor<4294967296x2147483648xf32>
}
// CHECK:      exit=1

// -----
// Two 2^61-byte f32 arguments fit (the second at 2^61); the result, packed after
// them at 2^62, does not.
// SPLIT: convert-linalg-to-step-huge.mlir:[[# @LINE + 2]]:1: error: result0 needs 2305843009213693952 bytes at address 4611686018427387904, past the end of the address space (2^62 bytes)
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @edge(%a: tensor<1073741824x536870912xf32>, %b: tensor<1073741824x536870912xf32>) -> tensor<1073741824x536870912xf32> {
  %e = tensor.empty() : tensor<1073741824x536870912xf32>
  %r = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<1073741824x536870912xf32>, tensor<1073741824x536870912xf32>) outs(%e : tensor<1073741824x536870912xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.addf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<1073741824x536870912xf32>
  return %r : tensor<1073741824x536870912xf32>
}
// SPLIT: exit=1
