// RUN: step-opt %s --split-input-file -p 'ila-cancel-store-load,convert-ila-to-commands' | filecheck %s
// RUN: step-opt %s --split-input-file -p 'convert-ila-to-commands' | filecheck %s --check-prefix=NOCANCEL

// Small variant of D2A §6.1 (H = 784, 49 vectors): one store, four pools, one load.
// CHECK-LABEL: func.func @pools
// CHECK:       ila.fragment "flexasr"(%a) {invocations = 4 : i64} : (tensor<16x784xf32>) -> tensor<1x784xf32> {
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<16x784xf32>):
// CHECK-NEXT:    ila.cmd "store_act"(%[[A]]) {vector_offset = 0 : i64, vectors = 49 : i64}
// CHECK-NEXT:    ila.write 0x33400010, 0x31
// CHECK-NEXT:    ila.write 0x33800010, 0x100031000000000001
// CHECK-NEXT:    ila.write 0x33000020, 0x1
// CHECK-NEXT:    ila.wait_irq
// CHECK-NEXT:    ila.write 0x33400010, 0x31
// CHECK-NEXT:    ila.write 0x33800010, 0x80031000000000001
// CHECK:         ila.write 0x33800010, 0x40031000000000001
// CHECK:         ila.write 0x33800010, 0x20031000000000001
// CHECK-NEXT:    ila.write 0x33000020, 0x1
// CHECK-NEXT:    ila.wait_irq
// CHECK-NEXT:    %[[R:.*]] = ila.cmd "load_act"() {timesteps = 1 : i64, vectors = 49 : i64} : () -> tensor<1x784xf32>
// CHECK-NEXT:    ila.yield %[[R]] : tensor<1x784xf32>
// CHECK-NOT:   ila.store
// NOCANCEL-LABEL: func.func @pools
// NOCANCEL-COUNT-4: ila.fragment "flexasr"({{.*}}) {invocations = 1 : i64}
func.func @pools(%a: tensor<16x784xf32>) -> tensor<1x784xf32> {
  %1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<16x784xf32>) -> tensor<8x784xf32>
  %2 = ila.invoke "flexasr.maxpool"(%1) : (tensor<8x784xf32>) -> tensor<4x784xf32>
  %3 = ila.invoke "flexasr.maxpool"(%2) : (tensor<4x784xf32>) -> tensor<2x784xf32>
  %4 = ila.invoke "flexasr.maxpool"(%3) : (tensor<2x784xf32>) -> tensor<1x784xf32>
  func.return %4 : tensor<1x784xf32>
}

// -----

// 256 vectors exceed the 8-bit num_vector: two chunks, joined on the host.
// CHECK-LABEL: func.func @chunks
// CHECK:       ila.cmd "store_act"(%{{.*}}) {vector_offset = 0 : i64, vectors = 128 : i64}
// CHECK:       ila.cmd "store_act"(%{{.*}}) {vector_offset = 128 : i64, vectors = 128 : i64}
// CHECK:       ila.cmd "concat"(%{{.*}}, %{{.*}}) {axis = 1 : i64} : (tensor<1x2048xf32>, tensor<1x2048xf32>) -> tensor<1x4096xf32>
func.func @chunks(%a: tensor<2x4096xf32>) -> tensor<1x4096xf32> {
  %1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<2x4096xf32>) -> tensor<1x4096xf32>
  func.return %1 : tensor<1x4096xf32>
}

// -----

// Linear layers, dense and conv2d are one driver-level command each.
// CHECK-LABEL: func.func @ops
// CHECK:       ila.fragment "flexasr"(%x, %w, %b) {invocations = 1 : i64}
// CHECK:         ila.cmd "linear_layer"
// CHECK:       ila.fragment "vta"(%x, %w) {invocations = 1 : i64}
// CHECK:         ila.cmd "dense"
// CHECK:       ila.fragment "hlscnn"(%i, %k) {invocations = 1 : i64}
// CHECK:         ila.cmd "conv2d"(%{{.*}}, %{{.*}}) {strides = array<i64: 1, 1>}
func.func @ops(%x: tensor<16x256xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>, %i: tensor<1x8x6x6xf32>, %k: tensor<8x8x3x3xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<1x8x4x4xf32>) {
  %1 = ila.invoke "flexasr.linear"(%x, %w, %b) : (tensor<16x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %2 = ila.invoke "vta.dense"(%x, %w) : (tensor<16x256xf32>, tensor<64x256xf32>) -> tensor<16x64xf32>
  %3 = ila.invoke "hlscnn.conv2d"(%i, %k) {strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %1, %2, %3 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<1x8x4x4xf32>
}
