// RUN: step-opt %s --split-input-file -p 'convert-linalg-to-step{tile="2x4x8" schedule="mnk"}' | filecheck %s
// RUN: sh -c 'step-opt %s --split-input-file -p "convert-linalg-to-step{tile=\"2x3x8\" schedule=\"mnk\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DIVIDE

// The forms of linalg on tensors beyond the SwiGLU FFN, as torch-mlir emits
// them (rms, red, resh: torch_mlir.fx.export_and_import, linalg-on-tensors)
// or as IREE's input pipelines do (matmul_transpose_b). Tiles 2x4, K steps of 8.
//
// @bmm: linalg.batch_matmul [2,8,16] x [2,16,4] walks (batch, M/2, N/4, K/8) =
// (2, 4, 1, 2); A's batch stride is M/2 * K/8 = 8 tiles, B's K/8 * N/4 = 2;
// A is re-read per N tile (stride 0), B per M tile; the batch is the outer
// dim of the stored result.
// @linear_t: x @ w^T + b (w [4,16] read transposed: matmul_t), the [4] bias
// loaded as 1x4 row tiles re-read per M tile (stride 0) and fused.
// @rms: x * rsqrt(mean(x^2) + eps) * w: the row sum is an accum over the 4 N
// tiles into a 2x1 column, mean and eps are scalar-parametric maps (eps the
// f32 rounding of torch's 1e-6), the column joins the row tiles through a
// repeat over N; x is loaded twice (the reduction, and the product that waits
// for it), w as 1x4 row tiles.
// @red: x.sum(-1) and x.amax(-1) (torch's max-with-index form, index unused):
// accums from zero / -inf; the 1-D results are 2x1 column tiles.
// @resh: [2,2,32] collapsed to [4,32] (a view of the argument), matmul,
// expanded to [2,2,16]: the 2 row tiles split into (batch 2, 1 row tile).
// With tile 2x3 (3 divides no N here) every function is a located error.

func.func @bmm(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>) -> tensor<2x8x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%z : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %c : tensor<2x8x4xf32>
}

// -----

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @linear_t(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = linalg.matmul_transpose_b ins(%x, %w : tensor<8x16xf32>, tensor<4x16xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
func.func @rms(%arg0: tensor<8x16xf32>, %arg1: tensor<16xf32>) -> tensor<8x16xf32> {
  %c2_i64 = arith.constant 2 : i64
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 9.9999999999999995E-7 : f64
  %cst_1 = arith.constant 1.600000e+01 : f32
  %0 = tensor.empty() : tensor<8x16xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8x16xf32>) outs(%0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = math.fpowi %in, %c2_i64 : f32, i64
    linalg.yield %10 : f32
  } -> tensor<8x16xf32>
  %2 = tensor.empty() : tensor<8x1xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<8x16xf32>) outs(%3 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.addf %in, %out : f32
    linalg.yield %10 : f32
  } -> tensor<8x1xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<8x1xf32>) outs(%2 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.divf %in, %cst_1 : f32
    linalg.yield %10 : f32
  } -> tensor<8x1xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<8x1xf32>) outs(%2 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.truncf %cst_0 : f64 to f32
    %11 = arith.addf %in, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<8x1xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<8x1xf32>) outs(%2 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = math.rsqrt %in : f32
    linalg.yield %10 : f32
  } -> tensor<8x1xf32>
  %8 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %7 : tensor<8x16xf32>, tensor<8x1xf32>) outs(%0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %10 = arith.mulf %in, %in_2 : f32
    linalg.yield %10 : f32
  } -> tensor<8x16xf32>
  %9 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %arg1 : tensor<8x16xf32>, tensor<16xf32>) outs(%0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %10 = arith.mulf %in, %in_2 : f32
    linalg.yield %10 : f32
  } -> tensor<8x16xf32>
  return %9 : tensor<8x16xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @red(%arg0: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0_i64 = arith.constant 0 : i64
  %cst_0 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<8xf32>
  %3 = tensor.empty() : tensor<8xi64>
  %4 = linalg.fill ins(%c0_i64 : i64) outs(%3 : tensor<8xi64>) -> tensor<8xi64>
  %5 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %6:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>) outs(%5, %4 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %7 = linalg.index 1 : index
    %8 = arith.index_cast %7 : index to i64
    %9 = arith.maximumf %in, %out : f32
    %10 = arith.cmpf ogt, %in, %out : f32
    %11 = arith.select %10, %8, %out_1 : i64
    linalg.yield %9, %11 : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  return %2, %6#0 : tensor<8xf32>, tensor<8xf32>
}

// -----

func.func @resh(%arg0: tensor<2x2x32xf32>, %arg1: tensor<32x16xf32>) -> tensor<2x2x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<2x2x32xf32> into tensor<4x32xf32>
  %0 = tensor.empty() : tensor<4x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = linalg.matmul ins(%collapsed, %arg1 : tensor<4x32xf32>, tensor<32x16xf32>) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %expanded = tensor.expand_shape %2 [[0, 1], [2]] output_shape [2, 2, 16] : tensor<4x16xf32> into tensor<2x2x16xf32>
  return %expanded : tensor<2x2x16xf32>
}

// CHECK-LABEL: step.graph @bmm {
// CHECK-NEXT:  %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 4, 1, 2>, stride = array<i64: 8, 2, 0, 1>, tiled_out_shape = array<i64: 2, 4, 1, 2>} : () -> !step.stream<[2, 4, 1, 2], !step.tile<2x8xf32>>
// CHECK-NEXT:  %arg1 = step.linear_offchip_load {base_addr = 16777216 : i64, tiled_in_shape = array<i64: 2, 2, 1, 1>, stride = array<i64: 2, 0, 1, 1>, tiled_out_shape = array<i64: 2, 4, 1, 2>} : () -> !step.stream<[2, 4, 1, 2], !step.tile<8x4xf32>>
// CHECK-NEXT:  %0 = step.zip %arg0, %arg1 : (!step.stream<[2, 4, 1, 2], !step.tile<2x8xf32>>, !step.stream<[2, 4, 1, 2], !step.tile<8x4xf32>>) -> !step.stream<[2, 4, 1, 2], !step.tuple<!step.tile<2x8xf32>, !step.tile<8x4xf32>>>
// CHECK-NEXT:  %mm0 = step.accum %0 {write_back_mu, rank = 1 : i64} : !step.stream<[2, 4, 1, 2], !step.tuple<!step.tile<2x8xf32>, !step.tile<8x4xf32>>> -> !step.stream<[2, 4, 1], !step.tile<2x4xf32>> update {
// CHECK-NEXT:  ^bb0(%1: !step.tile<2x8xf32>, %2: !step.tile<8x4xf32>, %3: !step.tile<2x4xf32>):
// CHECK-NEXT:  %4 = step.apply "matmul"(%1, %2) : (!step.tile<2x8xf32>, !step.tile<8x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  %5 = step.apply "add"(%3, %4) : (!step.tile<2x4xf32>, !step.tile<2x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %5 : !step.tile<2x4xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %6 = step.apply "zero"() : () -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %6 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  step.linear_offchip_store %mm0 {base_addr = 1073741824 : i64} : !step.stream<[2, 4, 1], !step.tile<2x4xf32>>
// CHECK-NEXT:  }
// CHECK-LABEL: step.graph @linear_t {
// CHECK-NEXT:  %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1, 2>, stride = array<i64: 2, 0, 1>, tiled_out_shape = array<i64: 4, 1, 2>} : () -> !step.stream<[4, 1, 2], !step.tile<2x8xf32>>
// CHECK-NEXT:  %arg1 = step.linear_offchip_load {base_addr = 16777216 : i64, tiled_in_shape = array<i64: 1, 1, 2>, stride = array<i64: 0, 2, 1>, tiled_out_shape = array<i64: 4, 1, 2>} : () -> !step.stream<[4, 1, 2], !step.tile<4x8xf32>>
// CHECK-NEXT:  %0 = step.zip %arg0, %arg1 : (!step.stream<[4, 1, 2], !step.tile<2x8xf32>>, !step.stream<[4, 1, 2], !step.tile<4x8xf32>>) -> !step.stream<[4, 1, 2], !step.tuple<!step.tile<2x8xf32>, !step.tile<4x8xf32>>>
// CHECK-NEXT:  %mm0 = step.accum %0 {write_back_mu, rank = 1 : i64} : !step.stream<[4, 1, 2], !step.tuple<!step.tile<2x8xf32>, !step.tile<4x8xf32>>> -> !step.stream<[4, 1], !step.tile<2x4xf32>> update {
// CHECK-NEXT:  ^bb0(%1: !step.tile<2x8xf32>, %2: !step.tile<4x8xf32>, %3: !step.tile<2x4xf32>):
// CHECK-NEXT:  %4 = step.apply "matmul_t"(%1, %2) : (!step.tile<2x8xf32>, !step.tile<4x8xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  %5 = step.apply "add"(%3, %4) : (!step.tile<2x4xf32>, !step.tile<2x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %5 : !step.tile<2x4xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %6 = step.apply "zero"() : () -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %6 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %arg2 = step.linear_offchip_load {base_addr = 33554432 : i64, tiled_in_shape = array<i64: 1, 1>, stride = array<i64: 0, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<1x4xf32>>
// CHECK-NEXT:  %7 = step.zip %mm0, %arg2 : (!step.stream<[4, 1], !step.tile<2x4xf32>>, !step.stream<[4, 1], !step.tile<1x4xf32>>) -> !step.stream<[4, 1], !step.tuple<!step.tile<2x4xf32>, !step.tile<1x4xf32>>>
// CHECK-NEXT:  %add = step.map %7 : !step.stream<[4, 1], !step.tuple<!step.tile<2x4xf32>, !step.tile<1x4xf32>>> -> !step.stream<[4, 1], !step.tile<2x4xf32>> {
// CHECK-NEXT:  ^bb0(%8: !step.tile<2x4xf32>, %9: !step.tile<1x4xf32>):
// CHECK-NEXT:  %10 = step.apply "add"(%8, %9) : (!step.tile<2x4xf32>, !step.tile<1x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %10 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  step.linear_offchip_store %add {base_addr = 1073741824 : i64} : !step.stream<[4, 1], !step.tile<2x4xf32>>
// CHECK-NEXT:  }
// CHECK-LABEL: step.graph @rms {
// CHECK-NEXT:  %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 4>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 4, 4>} : () -> !step.stream<[4, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  %arg0_1 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 4>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 4, 4>} : () -> !step.stream<[4, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  %square = step.map %arg0_1 : !step.stream<[4, 4], !step.tile<2x4xf32>> -> !step.stream<[4, 4], !step.tile<2x4xf32>> {
// CHECK-NEXT:  ^bb0(%0: !step.tile<2x4xf32>):
// CHECK-NEXT:  %1 = step.apply "square"(%0) : (!step.tile<2x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %1 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %row_sum = step.accum %square {write_back_mu, rank = 1 : i64} : !step.stream<[4, 4], !step.tile<2x4xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> update {
// CHECK-NEXT:  ^bb0(%2: !step.tile<2x4xf32>, %3: !step.tile<2x1xf32>):
// CHECK-NEXT:  %4 = step.apply "row_sum"(%2) : (!step.tile<2x4xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  %5 = step.apply "add"(%3, %4) : (!step.tile<2x1xf32>, !step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %5 : !step.tile<2x1xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %6 = step.apply "zero"() : () -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %6 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %div_scalar = step.map %row_sum : !step.stream<[4], !step.tile<2x1xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> {
// CHECK-NEXT:  ^bb0(%7: !step.tile<2x1xf32>):
// CHECK-NEXT:  %8 = step.apply "div_scalar[16.0]"(%7) : (!step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %8 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %add_scalar = step.map %div_scalar : !step.stream<[4], !step.tile<2x1xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> {
// CHECK-NEXT:  ^bb0(%9: !step.tile<2x1xf32>):
// CHECK-NEXT:  %10 = step.apply "add_scalar[9.999999974752427e-07]"(%9) : (!step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %10 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %rsqrt = step.map %add_scalar : !step.stream<[4], !step.tile<2x1xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> {
// CHECK-NEXT:  ^bb0(%11: !step.tile<2x1xf32>):
// CHECK-NEXT:  %12 = step.apply "rsqrt"(%11) : (!step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %12 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %13 = step.repeat %rsqrt {count = 4 : i64} : (!step.stream<[4], !step.tile<2x1xf32>>) -> !step.stream<[4, 4], !step.tile<2x1xf32>>
// CHECK-NEXT:  %14 = step.zip %arg0, %13 : (!step.stream<[4, 4], !step.tile<2x4xf32>>, !step.stream<[4, 4], !step.tile<2x1xf32>>) -> !step.stream<[4, 4], !step.tuple<!step.tile<2x4xf32>, !step.tile<2x1xf32>>>
// CHECK-NEXT:  %mul = step.map %14 : !step.stream<[4, 4], !step.tuple<!step.tile<2x4xf32>, !step.tile<2x1xf32>>> -> !step.stream<[4, 4], !step.tile<2x4xf32>> {
// CHECK-NEXT:  ^bb0(%15: !step.tile<2x4xf32>, %16: !step.tile<2x1xf32>):
// CHECK-NEXT:  %17 = step.apply "mul"(%15, %16) : (!step.tile<2x4xf32>, !step.tile<2x1xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %17 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %arg1 = step.linear_offchip_load {base_addr = 16777216 : i64, tiled_in_shape = array<i64: 1, 4>, stride = array<i64: 0, 1>, tiled_out_shape = array<i64: 4, 4>} : () -> !step.stream<[4, 4], !step.tile<1x4xf32>>
// CHECK-NEXT:  %18 = step.zip %mul, %arg1 : (!step.stream<[4, 4], !step.tile<2x4xf32>>, !step.stream<[4, 4], !step.tile<1x4xf32>>) -> !step.stream<[4, 4], !step.tuple<!step.tile<2x4xf32>, !step.tile<1x4xf32>>>
// CHECK-NEXT:  %mul_1 = step.map %18 : !step.stream<[4, 4], !step.tuple<!step.tile<2x4xf32>, !step.tile<1x4xf32>>> -> !step.stream<[4, 4], !step.tile<2x4xf32>> {
// CHECK-NEXT:  ^bb0(%19: !step.tile<2x4xf32>, %20: !step.tile<1x4xf32>):
// CHECK-NEXT:  %21 = step.apply "mul"(%19, %20) : (!step.tile<2x4xf32>, !step.tile<1x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %21 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  step.linear_offchip_store %mul_1 {base_addr = 1073741824 : i64} : !step.stream<[4, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  }
// CHECK-LABEL: step.graph @red {
// CHECK-NEXT:  %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 4>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 4, 4>} : () -> !step.stream<[4, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  %row_sum = step.accum %arg0 {write_back_mu, rank = 1 : i64} : !step.stream<[4, 4], !step.tile<2x4xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> update {
// CHECK-NEXT:  ^bb0(%0: !step.tile<2x4xf32>, %1: !step.tile<2x1xf32>):
// CHECK-NEXT:  %2 = step.apply "row_sum"(%0) : (!step.tile<2x4xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  %3 = step.apply "add"(%1, %2) : (!step.tile<2x1xf32>, !step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %3 : !step.tile<2x1xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %4 = step.apply "zero"() : () -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %4 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  step.linear_offchip_store %row_sum {base_addr = 1073741824 : i64} : !step.stream<[4], !step.tile<2x1xf32>>
// CHECK-NEXT:  %arg0_1 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 4>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 4, 4>} : () -> !step.stream<[4, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  %row_max = step.accum %arg0_1 {write_back_mu, rank = 1 : i64} : !step.stream<[4, 4], !step.tile<2x4xf32>> -> !step.stream<[4], !step.tile<2x1xf32>> update {
// CHECK-NEXT:  ^bb0(%5: !step.tile<2x4xf32>, %6: !step.tile<2x1xf32>):
// CHECK-NEXT:  %7 = step.apply "row_max"(%5) : (!step.tile<2x4xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  %8 = step.apply "max"(%6, %7) : (!step.tile<2x1xf32>, !step.tile<2x1xf32>) -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %8 : !step.tile<2x1xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %9 = step.apply "neg_inf"() : () -> !step.tile<2x1xf32>
// CHECK-NEXT:  step.yield %9 : !step.tile<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  step.linear_offchip_store %row_max {base_addr = 1090519040 : i64} : !step.stream<[4], !step.tile<2x1xf32>>
// CHECK-NEXT:  }
// CHECK-LABEL: step.graph @resh {
// CHECK-NEXT:  %arg0 = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 2, 1, 4>, stride = array<i64: 4, 0, 1>, tiled_out_shape = array<i64: 2, 4, 4>} : () -> !step.stream<[2, 4, 4], !step.tile<2x8xf32>>
// CHECK-NEXT:  %arg1 = step.linear_offchip_load {base_addr = 16777216 : i64, tiled_in_shape = array<i64: 4, 1, 4>, stride = array<i64: 0, 1, 4>, tiled_out_shape = array<i64: 2, 4, 4>} : () -> !step.stream<[2, 4, 4], !step.tile<8x4xf32>>
// CHECK-NEXT:  %0 = step.zip %arg0, %arg1 : (!step.stream<[2, 4, 4], !step.tile<2x8xf32>>, !step.stream<[2, 4, 4], !step.tile<8x4xf32>>) -> !step.stream<[2, 4, 4], !step.tuple<!step.tile<2x8xf32>, !step.tile<8x4xf32>>>
// CHECK-NEXT:  %mm0 = step.accum %0 {write_back_mu, rank = 1 : i64} : !step.stream<[2, 4, 4], !step.tuple<!step.tile<2x8xf32>, !step.tile<8x4xf32>>> -> !step.stream<[2, 4], !step.tile<2x4xf32>> update {
// CHECK-NEXT:  ^bb0(%1: !step.tile<2x8xf32>, %2: !step.tile<8x4xf32>, %3: !step.tile<2x4xf32>):
// CHECK-NEXT:  %4 = step.apply "matmul"(%1, %2) : (!step.tile<2x8xf32>, !step.tile<8x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  %5 = step.apply "add"(%3, %4) : (!step.tile<2x4xf32>, !step.tile<2x4xf32>) -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %5 : !step.tile<2x4xf32>
// CHECK-NEXT:  } init {
// CHECK-NEXT:  %6 = step.apply "zero"() : () -> !step.tile<2x4xf32>
// CHECK-NEXT:  step.yield %6 : !step.tile<2x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %7, %8 = step.reshape %mm0 {split_dim = 1 : i64, chunk_size = 1 : i64} : (!step.stream<[2, 4], !step.tile<2x4xf32>>) -> (!step.stream<[2, 1, 4], !step.tile<2x4xf32>>, !step.stream<[2, 1, 4], i1>)
// CHECK-NEXT:  step.consume %8 : !step.stream<[2, 1, 4], i1>
// CHECK-NEXT:  step.linear_offchip_store %7 {base_addr = 1073741824 : i64} : !step.stream<[2, 1, 4], !step.tile<2x4xf32>>
// CHECK-NEXT:  }

// DIVIDE: convert-linalg-to-step-forms.mlir:29:3: error: linalg.batch_matmul #0: tile size 3 does not divide N=4 (option tile; padding is not supported)
// DIVIDE: convert-linalg-to-step-forms.mlir:41:3: error: linalg.matmul_transpose_b #0: tile size 3 does not divide N=4 (option tile; padding is not supported)
// DIVIDE: convert-linalg-to-step-forms.mlir:61:3: error: element-wise 'square': tile size 3 does not divide N=16 (option tile; padding is not supported)
// DIVIDE: convert-linalg-to-step-forms.mlir:112:3: error: row sum: tile size 3 does not divide N=16 (option tile; padding is not supported)
// DIVIDE: convert-linalg-to-step-forms.mlir:139:3: error: linalg.matmul #0: tile size 3 does not divide N=16 (option tile; padding is not supported)
// DIVIDE: exit=1
