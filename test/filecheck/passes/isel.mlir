// RUN: step-opt %s --split-input-file -p 'isel{targets=flexasr,hlscnn,vta mode=flexible}' | filecheck %s --check-prefix=FLEX
// RUN: step-opt %s --split-input-file -p 'isel{targets=flexasr,hlscnn,vta mode=exact}' | filecheck %s --check-prefix=EXACT
// RUN: step-opt %s --split-input-file -p 'isel{targets=vta}' | filecheck %s --check-prefix=VTA

// D2A §5.1: (4,4)/(2,2) max-pool -> window splitting + four temporal pools.
// FLEX-LABEL: func.func @maxpool
// FLEX-NEXT:  %[[WIN:.*]] = ila.windows %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x128x128x1xf32>) -> tensor<16x4096xf32>
// FLEX-NEXT:  %[[P1:.*]] = ila.invoke "flexasr.maxpool"(%[[WIN]]) : (tensor<16x4096xf32>) -> tensor<8x4096xf32>
// FLEX-NEXT:  %[[P2:.*]] = ila.invoke "flexasr.maxpool"(%[[P1]]) : (tensor<8x4096xf32>) -> tensor<4x4096xf32>
// FLEX-NEXT:  %[[P3:.*]] = ila.invoke "flexasr.maxpool"(%[[P2]]) : (tensor<4x4096xf32>) -> tensor<2x4096xf32>
// FLEX-NEXT:  %[[P4:.*]] = ila.invoke "flexasr.maxpool"(%[[P3]]) : (tensor<2x4096xf32>) -> tensor<1x4096xf32>
// FLEX-NEXT:  %[[SHAPE:.*]] = tosa.const_shape {values = dense<[1, 64, 64, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
// FLEX-NEXT:  %[[OUT:.*]] = tosa.reshape %[[P4]], %[[SHAPE]] : (tensor<1x4096xf32>, !tosa.shape<4>) -> tensor<1x64x64x1xf32>
// FLEX-NEXT:  func.return %[[OUT]]
// EXACT-LABEL: func.func @maxpool
// EXACT-NOT:   ila.invoke
// EXACT:       tosa.max_pool2d
func.func @maxpool(%x: tensor<1x128x128x1xf32>) -> tensor<1x64x64x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<1x128x128x1xf32>) -> tensor<1x64x64x1xf32>
  func.return %y : tensor<1x64x64x1xf32>
}

// -----

// A temporal (2,1) max-pool is an exact FlexASR pattern.
// EXACT-LABEL: func.func @temporal
// EXACT:       %{{.*}} = tosa.reshape %x, %{{.*}} : (tensor<1x8x32x1xf32>, !tosa.shape<2>) -> tensor<8x32xf32>
// EXACT-NEXT:  %{{.*}} = ila.invoke "flexasr.maxpool"(%{{.*}}) : (tensor<8x32xf32>) -> tensor<4x32xf32>
func.func @temporal(%x: tensor<1x8x32x1xf32>) -> tensor<1x4x32x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 2, 1>, stride = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x8x32x1xf32>) -> tensor<1x4x32x1xf32>
  func.return %y : tensor<1x4x32x1xf32>
}

// -----

// D2A §6.2: add(reshape(dense(x, w)), b) is a FlexASR linear layer only under flexible matching.
// FLEX-LABEL: func.func @linear
// FLEX-NEXT:  %[[LIN:.*]] = ila.invoke "flexasr.linear"(%x, %w, %b) : (tensor<10x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<10x64xf32>
// FLEX-NEXT:  %[[SHAPE:.*]] = tosa.const_shape {values = dense<[1, 10, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
// FLEX-NEXT:  %[[OUT:.*]] = tosa.reshape %[[LIN]], %[[SHAPE]] : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
// FLEX-NEXT:  func.return %[[OUT]]
// EXACT-LABEL: func.func @linear
// EXACT-NOT:   ila.invoke
// EXACT:       linalg.matmul
func.func @linear(%x: tensor<10x256xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>) -> tensor<1x10x64xf32> {
  %e = tensor.empty() : tensor<256x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x256xf32>) outs(%e : tensor<256x64xf32>) permutation = [1, 0]
  %z = arith.constant dense<0.0> : tensor<10x64xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<10x256xf32>, tensor<256x64xf32>) outs(%z : tensor<10x64xf32>) -> tensor<10x64xf32>
  %s3 = tosa.const_shape {values = dense<[1, 10, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %d, %s3 : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
  %sb = tosa.const_shape {values = dense<[1, 1, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b3 = tosa.reshape %b, %sb : (tensor<64xf32>, !tosa.shape<3>) -> tensor<1x1x64xf32>
  %y = tosa.add %r, %b3 : (tensor<1x10x64xf32>, tensor<1x1x64xf32>) -> tensor<1x10x64xf32>
  func.return %y : tensor<1x10x64xf32>
}

// -----

// Zero-bias insertion: a bare dense also becomes a linear layer (flexible only).
// FLEX-LABEL: func.func @dense
// FLEX:       %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// FLEX-NEXT:  %{{.*}} = ila.invoke "flexasr.linear"(%x, %w, %[[Z]])
// EXACT-LABEL: func.func @dense
// EXACT:       ila.invoke "vta.dense"(%x, %w)
func.func @dense(%x: tensor<16x256xf32>, %w: tensor<64x256xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<256x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x256xf32>) outs(%e : tensor<256x64xf32>) permutation = [1, 0]
  %z = arith.constant dense<0.0> : tensor<16x64xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<16x256xf32>, tensor<256x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  func.return %d : tensor<16x64xf32>
}

// -----

// D2A §6.3: conv2d -> VTA GEMM via im2col (flexible), HLSCNN exactly.
// VTA-LABEL: func.func @conv
// VTA:       %[[W:.*]] = tosa.reshape %w, %{{.*}} : (tensor<32x16x3x3xf32>, !tosa.shape<2>) -> tensor<32x144xf32>
// VTA-NEXT:  %[[C:.*]] = ila.im2col %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x16x10x10xf32>) -> tensor<64x144xf32>
// VTA-NEXT:  %[[D:.*]] = ila.invoke "vta.dense"(%[[W]], %[[C]]) : (tensor<32x144xf32>, tensor<64x144xf32>) -> tensor<32x64xf32>
// VTA:       %[[R:.*]] = tosa.reshape %[[D]], %{{.*}} : (tensor<32x64xf32>, !tosa.shape<4>) -> tensor<32x1x8x8xf32>
// VTA:       linalg.transpose ins(%[[R]]:tensor<32x1x8x8xf32>) outs(%{{.*}}:tensor<1x32x8x8xf32>) permutation = [1, 0, 2, 3]
// EXACT-LABEL: func.func @conv
// EXACT-NEXT:  ila.invoke "hlscnn.conv2d"(%x, %w) {strides = array<i64: 1, 1>}
func.func @conv(%x: tensor<1x16x10x10xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %z = arith.constant dense<0.0> : tensor<1x32x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%z : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  func.return %y : tensor<1x32x8x8xf32>
}

// -----

// Preconditions: 63x63 positions (3969 % 16 != 0) stay on the host.
// FLEX-LABEL: func.func @unaligned
// FLEX-NOT:   ila.invoke
func.func @unaligned(%x: tensor<1x128x128x1xf32>) -> tensor<1x63x63x1xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x128x128x1xf32>) -> tensor<1x63x63x1xf32>
  func.return %y : tensor<1x63x63x1xf32>
}

// -----

// Only static-shape f32 tensors are modelled; other values stay opaque.
// FLEX-LABEL: func.func @f16
// FLEX-NOT:   ila.invoke
// FLEX:       linalg.matmul
func.func @f16(%x: tensor<16x256xf16>, %w: tensor<64x256xf16>) -> tensor<16x64xf16> {
  %e = tensor.empty() : tensor<256x64xf16>
  %wt = linalg.transpose ins(%w : tensor<64x256xf16>) outs(%e : tensor<256x64xf16>) permutation = [1, 0]
  %z = arith.constant dense<0.0> : tensor<16x64xf16>
  %d = linalg.matmul ins(%x, %wt : tensor<16x256xf16>, tensor<256x64xf16>) outs(%z : tensor<16x64xf16>) -> tensor<16x64xf16>
  func.return %d : tensor<16x64xf16>
}
