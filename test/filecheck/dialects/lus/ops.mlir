// RUN: step-opt %s | filecheck %s
// RUN: step-opt %s | step-opt | filecheck %s
// RUN: step-opt %s --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC
// RUN: step-opt %s --print-op-generic | step-opt | filecheck %s

// The integrator of the seed.
// CHECK-LABEL: lus.node @integr(%i: i32) -> (i32) {
// CHECK-NEXT:    %c0 = arith.constant 0 : i32
// CHECK-NEXT:    %s = lus.fby %c0 %incr : i32
// CHECK-NEXT:    %incr = arith.addi %s, %i : i32
// CHECK-NEXT:    lus.yield (%incr : i32)
// CHECK-NEXT:  }
// CHECK-GENERIC-LABEL: "lus.node"() <{sym_name = "integr", function_type = (i32) -> i32, num_static = 0 : i64, num_state = 0 : i64}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%i: i32):
// CHECK-GENERIC:         %s = "lus.fby"(%c0, %incr) : (i32, i32) -> i32
// CHECK-GENERIC:         "lus.yield"(%incr) <{operandSegmentSizes = array<i32: 0, 1>}> : (i32) -> ()
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}

// The seed's two-cycle program: c = 0 fby ((c+1)%2); ck = c<>0;
// y = 0.0 fby (merge ck fx (y whennot ck)).
// CHECK-LABEL: lus.node @two_cycle(%x: f32) -> (f32) {
// CHECK:         %y_on = lus.when %ck %x : f32
// CHECK-NEXT:    %y_off = lus.when not %ck %y : f32
// CHECK-NEXT:    %m = lus.merge %ck %y_on %y_off : f32
// CHECK-GENERIC-LABEL: "lus.node"() <{sym_name = "two_cycle"
// CHECK-GENERIC:       %y_on = "lus.when"(%ck, %x) <{operandSegmentSizes = array<i32: 1, 1>}> : (i1, f32) -> f32
// CHECK-GENERIC:       %y_off = "lus.when"(%ck, %y) <{negated, operandSegmentSizes = array<i32: 1, 1>}> : (i1, f32) -> f32
// CHECK-GENERIC:       %m = "lus.merge"(%ck, %y_on, %y_off) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (i1, f32, f32) -> f32
lus.node @two_cycle(%x: f32) -> (f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %f0 = arith.constant 0.0 : f32
  %c = lus.fby %c0 %cn : i32
  %cp = arith.addi %c, %c1 : i32
  %cn = arith.remsi %cp, %c2 : i32
  %ck = arith.cmpi ne, %c, %c0 : i32
  %y_on = lus.when %ck %x : f32
  %y_off = lus.when not %ck %y : f32
  %m = lus.merge %ck %y_on %y_off : f32
  %y = lus.fby %f0 %m : f32
  lus.yield (%y : f32)
}

// State arguments, static parameters, pre, k-periodic words, instances.
// CHECK-LABEL: lus.node @everything static(%k: i32) state(%n: i32) (%x: f32, %r: i1) -> (f32, i32) {
// CHECK:         %w = lus.when "0(001)" %x : f32
// CHECK-NEXT:    %b = lus.kperiodic "0(01)" : i1
// CHECK-NEXT:    %p = lus.pre %x : f32
// CHECK-NEXT:    %pm = lus.merge "1(0)" %x %p : f32
// CHECK-NEXT:    %out = lus.instance @integr(%k) : (i32) -> i32
// CHECK-NEXT:    %q = lus.merge "1(0)" %out %n : i32
// CHECK-NEXT:    lus.yield state(%q : i32) (%pm : f32, %q : i32)
// CHECK-GENERIC: "lus.when"(%x) <{word = "0(001)", operandSegmentSizes = array<i32: 0, 1>}> : (f32) -> f32
// CHECK-GENERIC: "lus.kperiodic"() <{word = "0(01)"}> : () -> i1
// CHECK-GENERIC: "lus.pre"(%x) : (f32) -> f32
// CHECK-GENERIC: "lus.instance"(%k) <{callee = @integr}> : (i32) -> i32
// CHECK-GENERIC: "lus.merge"(%out, %n) <{word = "1(0)", operandSegmentSizes = array<i32: 0, 1, 1>}> : (i32, i32) -> i32
// CHECK-GENERIC: "lus.yield"(%q, %pm, %q) <{operandSegmentSizes = array<i32: 1, 2>}> : (i32, f32, i32) -> ()
lus.node @everything static(%k: i32) state(%n: i32) (%x: f32, %r: i1) -> (f32, i32) {
  %w = lus.when "0(001)" %x : f32
  %b = lus.kperiodic "0(01)" : i1
  %p = lus.pre %x : f32
  %pm = lus.merge "1(0)" %x %p : f32
  %out = lus.instance @integr(%k) : (i32) -> i32
  %q = lus.merge "1(0)" %out %n : i32
  lus.yield state(%q : i32) (%pm : f32, %q : i32)
}
