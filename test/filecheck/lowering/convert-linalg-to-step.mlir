// RUN: step-opt %s -p 'convert-linalg-to-step{tile="4x16x8" schedule="mnk"}' | filecheck %s
// RUN: sh -c 'step-opt %s -p "convert-linalg-to-step{tile=\"3x16\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DIVIDE
// RUN: sh -c 'step-opt %s -p "convert-linalg-to-step{tile=\"8x64\"}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: sh -c 'step-opt %s -p "convert-linalg-to-step{schedule=\"mx\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OPTION

// A matmul C = A B tiled 4x16 with K in two steps of 8 (schedule "mnk": M, N
// and K tiled), then C * S fused into the stream: S is loaded in C's tiling,
// C never goes off-chip. Arguments at 16 MiB boundaries, the result at 1 GiB.

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @mm(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %s: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%c, %s : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   step.graph @mm {
// CHECK-NEXT:     %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 1, 2>, stride = array<i64: 2, 0, 1>, tiled_out_shape = array<i64: 2, 2, 2>} : () -> !step.stream<[2, 2, 2], !step.tile<4x8xf32>>
// CHECK-NEXT:     %arg1 = step.linear_offchip_load {base_addr = 16777216 : i64, tiled_in_shape = array<i64: 2, 1, 2>, stride = array<i64: 0, 1, 2>, tiled_out_shape = array<i64: 2, 2, 2>} : () -> !step.stream<[2, 2, 2], !step.tile<8x16xf32>>
// CHECK-NEXT:     %[[ZIP:.*]] = step.zip %arg0, %arg1 : (!step.stream<[2, 2, 2], !step.tile<4x8xf32>>, !step.stream<[2, 2, 2], !step.tile<8x16xf32>>) -> !step.stream<[2, 2, 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x16xf32>>>
// CHECK-NEXT:     %mm0 = step.accum %[[ZIP]] {write_back_mu, rank = 1 : i64} : !step.stream<[2, 2, 2], !step.tuple<!step.tile<4x8xf32>, !step.tile<8x16xf32>>> -> !step.stream<[2, 2], !step.tile<4x16xf32>> update {
// CHECK-NEXT:     ^bb0(%[[A:.*]]: !step.tile<4x8xf32>, %[[B:.*]]: !step.tile<8x16xf32>, %[[ACC:.*]]: !step.tile<4x16xf32>):
// CHECK-NEXT:       %[[MM:.*]] = step.apply "matmul"(%[[A]], %[[B]]) : (!step.tile<4x8xf32>, !step.tile<8x16xf32>) -> !step.tile<4x16xf32>
// CHECK-NEXT:       %[[SUM:.*]] = step.apply "add"(%[[ACC]], %[[MM]]) : (!step.tile<4x16xf32>, !step.tile<4x16xf32>) -> !step.tile<4x16xf32>
// CHECK-NEXT:       step.yield %[[SUM]] : !step.tile<4x16xf32>
// CHECK-NEXT:     } init {
// CHECK-NEXT:       %[[ZERO:.*]] = step.apply "zero"() : () -> !step.tile<4x16xf32>
// CHECK-NEXT:       step.yield %[[ZERO]] : !step.tile<4x16xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     %arg2 = step.linear_offchip_load {base_addr = 33554432 : i64, tiled_in_shape = array<i64: 2, 2>, stride = array<i64: 2, 1>, tiled_out_shape = array<i64: 2, 2>} : () -> !step.stream<[2, 2], !step.tile<4x16xf32>>
// CHECK-NEXT:     %[[ZIP2:.*]] = step.zip %mm0, %arg2 : (!step.stream<[2, 2], !step.tile<4x16xf32>>, !step.stream<[2, 2], !step.tile<4x16xf32>>) -> !step.stream<[2, 2], !step.tuple<!step.tile<4x16xf32>, !step.tile<4x16xf32>>>
// CHECK-NEXT:     %mul = step.map %[[ZIP2]] : !step.stream<[2, 2], !step.tuple<!step.tile<4x16xf32>, !step.tile<4x16xf32>>> -> !step.stream<[2, 2], !step.tile<4x16xf32>> {
// CHECK-NEXT:     ^bb0(%[[C:.*]]: !step.tile<4x16xf32>, %[[S:.*]]: !step.tile<4x16xf32>):
// CHECK-NEXT:       %[[PROD:.*]] = step.apply "mul"(%[[C]], %[[S]]) : (!step.tile<4x16xf32>, !step.tile<4x16xf32>) -> !step.tile<4x16xf32>
// CHECK-NEXT:       step.yield %[[PROD]] : !step.tile<4x16xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     step.linear_offchip_store %mul {base_addr = 1073741824 : i64} : !step.stream<[2, 2], !step.tile<4x16xf32>>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// DIVIDE:      convert-linalg-to-step.mlir:15:3: error: linalg.matmul #0: tile size 3 does not divide M=8 (option tile; padding is not supported)
// DIVIDE-NEXT: %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
// DIVIDE-NEXT: ^
// DIVIDE-NEXT: exit=1

// REMARK:      convert-linalg-to-step.mlir:15:3: remark: linalg.matmul #0: N=32 is smaller than the tile size 64: not tiled along N
// REMARK-NEXT: %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
// REMARK-NEXT: ^
// REMARK-NEXT: exit=0

// OPTION:      step-opt: error: invalid options for pass 'convert-linalg-to-step': schedule: 'mx' is not a list of tiled dims like 'mn_mk' (letters m, n, k once each, '_' between matmul levels)
// OPTION-NEXT: exit=2
