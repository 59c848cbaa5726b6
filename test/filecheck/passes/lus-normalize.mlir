// RUN: step-opt %S/../../../examples/lus/integrator.mlir -p lus-normalize | filecheck %s --check-prefix=INTEGR
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p lus-normalize | filecheck %s --check-prefix=TWO
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p lus-normalize | step-opt | filecheck %s --check-prefix=TWO
// RUN: step-opt %s -p lus-normalize --split-input-file --verify-diagnostics

// The seed's normal form: fby -> state argument + merge "1(0)" + yield state.
// INTEGR:      lus.node @integr state(%s_state: i32) (%i: i32) -> (i32) {
// INTEGR-NEXT:   %c0 = arith.constant 0 : i32
// INTEGR-NEXT:   %s = lus.merge "1(0)" %c0 %s_state : i32
// INTEGR-NEXT:   %incr = arith.addi %s, %i : i32
// INTEGR-NEXT:   lus.yield state(%incr : i32) (%incr : i32)
// INTEGR-NEXT: }

// Ops are reordered so every value is defined before its use.
// TWO:      lus.node @two_cycle state(%c_state: i32, %y_state: f32) (%x: f32) -> (f32) {
// TWO:        %c = lus.merge "1(0)" %c0 %c_state : i32
// TWO-NEXT:   %cp = arith.addi %c, %c1 : i32
// TWO-NEXT:   %cn = arith.remsi %cp, %c2 : i32
// TWO-NEXT:   %ck = arith.cmpi ne, %c, %c0 : i32
// TWO-NEXT:   %fx = lus.when %ck %x : f32
// TWO-NEXT:   %y = lus.merge "1(0)" %f0 %y_state : f32
// TWO-NEXT:   %hold = lus.when not %ck %y : f32
// TWO-NEXT:   %m = lus.merge %ck %fx %hold : f32
// TWO-NEXT:   lus.yield state(%cn : i32, %m : f32) (%y : f32)

// pre becomes a state argument read directly.
lus.node @pre(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %p = lus.pre %x : i32
  %m = lus.merge "1(0)" %c0 %p : i32
  lus.yield (%m : i32)
}

// -----

lus.node @subclocked(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %z = arith.constant 0 : i32
  // expected-error @+1 {{lus-normalize: lus.fby must be on the base clock, found base on %c}}
  %f = lus.fby %z %w : i32
  lus.yield (%x : i32)
}
