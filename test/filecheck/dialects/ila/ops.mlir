// RUN: step-opt %s | filecheck %s
// RUN: step-opt %s | step-opt | filecheck %s
// RUN: step-opt %s --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC
// RUN: step-opt %s --print-op-generic | step-opt | filecheck %s

// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<16x784xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>, %v: tensor<10x256xf32>) -> tensor<1x784xf32> {
  // CHECK: %l = ila.invoke "flexasr.linear"(%v, %w, %b) {out_bias = 2 : i64} : (tensor<10x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<10x64xf32>
  // CHECK-GENERIC: "ila.invoke"(%v, %w, %b) <{callee = "flexasr.linear"}> {out_bias = 2 : i64} : (tensor<10x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<10x64xf32>
  %l = ila.invoke "flexasr.linear"(%v, %w, %b) {out_bias = 2 : i64} : (tensor<10x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<10x64xf32>
  // CHECK: %h = ila.store %x : tensor<16x784xf32> -> !ila.acc<"flexasr", tensor<16x784xf32>>
  // CHECK-GENERIC: %h = "ila.store"(%x) : (tensor<16x784xf32>) -> !ila.acc<"flexasr", tensor<16x784xf32>>
  %h = ila.store %x : tensor<16x784xf32> -> !ila.acc<"flexasr", tensor<16x784xf32>>
  // CHECK: %p = ila.compute "flexasr.maxpool"(%h) : (!ila.acc<"flexasr", tensor<16x784xf32>>) -> !ila.acc<"flexasr", tensor<8x784xf32>>
  %p = ila.compute "flexasr.maxpool"(%h) : (!ila.acc<"flexasr", tensor<16x784xf32>>) -> !ila.acc<"flexasr", tensor<8x784xf32>>
  // CHECK: %y = ila.load %p : !ila.acc<"flexasr", tensor<8x784xf32>> -> tensor<8x784xf32>
  %y = ila.load %p : !ila.acc<"flexasr", tensor<8x784xf32>> -> tensor<8x784xf32>
  // CHECK: %f = ila.fragment "flexasr"(%y) : (tensor<8x784xf32>) -> tensor<1x784xf32> {
  // CHECK-NEXT: ^bb0(%a: tensor<8x784xf32>):
  // CHECK-NEXT:   ila.cmd "store_act"(%a) {region = 0 : i64} : (tensor<8x784xf32>) -> ()
  // CHECK-NEXT:   ila.write 0x33400010, 0x31
  // CHECK-NEXT:   ila.write 0x33800010, 0x80031000000000001
  // CHECK-NEXT:   ila.write 0x33000020, 0x1
  // CHECK-NEXT:   ila.wait_irq
  // CHECK-NEXT:   ila.read 0x33500000
  // CHECK-NEXT:   %r = ila.cmd "load_act"() {region = 0 : i64} : () -> tensor<1x784xf32>
  // CHECK-NEXT:   ila.yield %r : tensor<1x784xf32>
  // CHECK-NEXT: }
  // CHECK-GENERIC: "ila.write"() <{addr = 859832336 : i64, data = 49 : i128}> : () -> ()
  // CHECK-GENERIC: "ila.wait_irq"() : () -> ()
  %f = ila.fragment "flexasr"(%y) : (tensor<8x784xf32>) -> tensor<1x784xf32> {
  ^bb0(%a: tensor<8x784xf32>):
    ila.cmd "store_act"(%a) {region = 0 : i64} : (tensor<8x784xf32>) -> ()
    ila.write 0x33400010, 0x31
    ila.write 0x33800010, 0x80031000000000001
    ila.write 0x33000020, 0x1
    ila.wait_irq
    ila.read 0x33500000
    %r = ila.cmd "load_act"() {region = 0 : i64} : () -> tensor<1x784xf32>
    ila.yield %r : tensor<1x784xf32>
  }
  func.return %f : tensor<1x784xf32>
}
