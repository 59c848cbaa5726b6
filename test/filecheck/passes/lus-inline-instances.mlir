// RUN: step-opt %s -p lus-inline-instances | filecheck %s
// RUN: step-opt %S/inputs/recursive.mlir -p lus-inline-instances --verify-diagnostics

lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
lus.node @counter state(%n: i32) (%x: i32) -> (i32) {
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  lus.yield state(%m : i32) (%m : i32)
}
lus.node @top state(%t: i32) (%x: i32) -> (i32, i32) {
  %a = lus.instance @integr(%x) : (i32) -> i32
  %b = lus.instance @integr(%a) : (i32) -> i32
  %c = lus.instance @counter(%b) : (i32) -> i32
  lus.yield state(%t : i32) (%b : i32, %c : i32)
}

// Two instances of @integr are inlined with fresh values (forward references
// inside the callee body are preserved); @counter's state becomes @top's.
// CHECK-LABEL: lus.node @top state(%t: i32, %n: i32) (%x: i32) -> (i32, i32) {
// CHECK-NEXT:    %c0 = arith.constant 0 : i32
// CHECK-NEXT:    %s = lus.fby %c0 %incr : i32
// CHECK-NEXT:    %incr = arith.addi %s, %x : i32
// CHECK-NEXT:    %c0_1 = arith.constant 0 : i32
// CHECK-NEXT:    %s_1 = lus.fby %c0_1 %incr_1 : i32
// CHECK-NEXT:    %incr_1 = arith.addi %s_1, %incr : i32
// CHECK-NEXT:    %c1 = arith.constant 1 : i32
// CHECK-NEXT:    %m = arith.addi %n, %c1 : i32
// CHECK-NEXT:    lus.yield state(%t : i32, %m : i32) (%incr_1 : i32, %m : i32)
// CHECK-NEXT:  }
// CHECK-NOT: lus.instance
