// RUN: step-opt %S/../../../examples/lus/integrator.mlir -p lus-normalize | filecheck %s --check-prefix=INTEGR
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p lus-normalize | filecheck %s --check-prefix=TWO
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p lus-normalize | step-opt | filecheck %s --check-prefix=TWO
// RUN: step-opt %s -p lus-normalize --split-input-file --verify-diagnostics
// RUN: step-opt %s -p lus-normalize --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SUB

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

// A fby on a sub-clock keeps its state on the base clock, held between the
// ticks of its clock: read sampled down (when), written merged back up.
// SUB-LABEL: lus.node @subclocked state(%f_state: i32) (%x: i32, %c: i1) -> (i32) {
// SUB-NEXT:    %w = lus.when %c %x : i32
// SUB-NEXT:    %z = arith.constant 0 : i32
// SUB-NEXT:    %[[H:.*]] = lus.merge "1(0)" %z %f_state : i32
// SUB-NEXT:    %f = lus.when %c %[[H]] : i32
// SUB-NEXT:    %[[KEEP:.*]] = lus.when not %c %[[H]] : i32
// SUB-NEXT:    %n = arith.addi %f, %w : i32
// SUB-NEXT:    %[[NEXT:.*]] = lus.merge %c %n %[[KEEP]] : i32
// SUB-NEXT:    lus.yield state(%[[NEXT]] : i32) (%x : i32)
lus.node @subclocked(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %z = arith.constant 0 : i32
  %f = lus.fby %z %n : i32
  %n = arith.addi %f, %w : i32
  lus.yield (%x : i32)
}

// -----

lus.node @subclocked_init(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  // expected-error @+1 {{lus-normalize: a lus.fby on a sub-clock (base on %c) needs a constant initial value}}
  %f = lus.fby %w %n : i32
  %n = arith.addi %f, %w : i32
  lus.yield (%x : i32)
}
