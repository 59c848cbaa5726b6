// RUN: step-opt %s -p 'ila-cancel-store-load' | filecheck %s
// RUN: step-opt %s -p 'ila-cancel-store-load{cancel=false}' | filecheck %s --check-prefix=NOCANCEL

// One store, four pools, one load (D2A §5.3).
// CHECK-LABEL: func.func @pools
// CHECK-NEXT:  %[[ACC:.*]] = ila.store %a : tensor<16x4096xf32> -> !ila.acc<"flexasr", tensor<16x4096xf32>>
// CHECK-NEXT:  %[[P1:.*]] = ila.compute "flexasr.maxpool"(%[[ACC]])
// CHECK-NEXT:  %[[P2:.*]] = ila.compute "flexasr.maxpool"(%[[P1]])
// CHECK-NEXT:  %[[P3:.*]] = ila.compute "flexasr.maxpool"(%[[P2]])
// CHECK-NEXT:  %[[P4:.*]] = ila.compute "flexasr.maxpool"(%[[P3]])
// CHECK-NEXT:  %[[OUT:.*]] = ila.load %[[P4]] : !ila.acc<"flexasr", tensor<1x4096xf32>> -> tensor<1x4096xf32>
// CHECK-NEXT:  func.return %[[OUT]]
// NOCANCEL-LABEL: func.func @pools
// NOCANCEL-COUNT-4: ila.store
// NOCANCEL-NOT: ila.store
// NOCANCEL-LABEL: func.func @shared
func.func @pools(%a: tensor<16x4096xf32>) -> tensor<1x4096xf32> {
  %1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<16x4096xf32>) -> tensor<8x4096xf32>
  %2 = ila.invoke "flexasr.maxpool"(%1) : (tensor<8x4096xf32>) -> tensor<4x4096xf32>
  %3 = ila.invoke "flexasr.maxpool"(%2) : (tensor<4x4096xf32>) -> tensor<2x4096xf32>
  %4 = ila.invoke "flexasr.maxpool"(%3) : (tensor<2x4096xf32>) -> tensor<1x4096xf32>
  func.return %4 : tensor<1x4096xf32>
}

// A loaded value the host also needs keeps its load; only the store goes.
// CHECK-LABEL: func.func @shared
// CHECK:       %[[L:.*]] = ila.load
// CHECK-NOT:   ila.store
// CHECK:       func.return %{{.*}}, %[[L]]
func.func @shared(%a: tensor<4x32xf32>) -> (tensor<1x32xf32>, tensor<2x32xf32>) {
  %1 = ila.invoke "flexasr.maxpool"(%a) : (tensor<4x32xf32>) -> tensor<2x32xf32>
  %2 = ila.invoke "flexasr.maxpool"(%1) : (tensor<2x32xf32>) -> tensor<1x32xf32>
  func.return %2, %1 : tensor<1x32xf32>, tensor<2x32xf32>
}
