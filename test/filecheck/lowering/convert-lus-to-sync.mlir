// RUN: step-opt %examples/lus/integrator.mlir -p convert-lus-to-sync | filecheck %s --check-prefix=INTEGR
// RUN: step-opt %s -p convert-lus-to-sync | filecheck %s
// RUN: step-opt %s -p convert-lus-to-sync | step-opt | filecheck %s
// RUN: step-opt %s -p convert-lus-to-sync --print-op-generic | step-opt | filecheck %s

// The seed's integrator: the fby's constant starts the loop-carried state,
// the merge "1(0)" of the normal form disappears.
// INTEGR:      sync.node @integr(%i: !sync.sigin<i32>) -> (%out0: !sync.sigout<i32>) {
// INTEGR-NEXT:   %c0 = arith.constant 0 : i32
// INTEGR-NEXT:   %{{.*}} = scf.while (%s_state = %c0) : (i32) -> i32 {
// INTEGR-NEXT:     %[[T:.*]] = arith.constant true
// INTEGR-NEXT:     scf.condition(%[[T]]) %s_state : i32
// INTEGR-NEXT:   } do {
// INTEGR-NEXT:   ^bb0(%[[S:.*]]: i32):
// INTEGR-NEXT:     %[[I:.*]] = sync.input(%i) : i32
// INTEGR-NEXT:     %{{.*}} = arith.constant 0 : i32
// INTEGR-NEXT:     %incr = arith.addi %[[S]], %[[I]] : i32
// INTEGR-NEXT:     %[[E:.*]] = sync.output(%out0 : %incr) : i32
// INTEGR-NEXT:     %[[TK:.*]] = sync.tick(%[[E]]) : i32
// INTEGR-NEXT:     %[[N:.*]] = sync.sync(%[[TK]], %incr : i32)
// INTEGR-NEXT:     scf.yield %[[N]] : i32
// INTEGR-NEXT:   }
// INTEGR-NEXT:   sync.halt
// INTEGR-NEXT: }

// Sub-clocked ops run under scf.if on the clock's condition (consecutive ops
// on one clock share it), instances become sync.inst, merge is sync.select,
// when is the identity.
// CHECK-LABEL: sync.node @sub(%x: !sync.sigin<i32>, %c: !sync.sigin<i1>) -> (%out0: !sync.sigout<i32>) {
// CHECK:         %[[X:.*]] = sync.input(%x) : i32
// CHECK-NEXT:    %[[C:.*]] = sync.input(%c) : i1
// CHECK-NEXT:    %d, %r = scf.if %[[C]] -> (i32, i32) {
// CHECK-NEXT:      %[[D:.*]] = arith.muli %[[X]], %[[X]] : i32
// CHECK-NEXT:      %[[R:.*]] = sync.inst @sum 1 (%[[D]]) : (i32) -> i32
// CHECK-NEXT:      scf.yield %[[D]], %[[R]] : i32, i32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[U1:.*]] = sync.undef : i32
// CHECK-NEXT:      %[[U2:.*]] = sync.undef : i32
// CHECK-NEXT:      scf.yield %[[U1]], %[[U2]] : i32, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = sync.select %[[C]] %r %[[X]] : i32
// CHECK-NEXT:    %[[E:.*]] = sync.output(%out0 : %m) : i32
// CHECK-NEXT:    %[[T:.*]] = sync.tick(%[[E]]) : i32
// CHECK-NEXT:    scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  sync.halt
lus.node @sum(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %n : i32
  %n = arith.addi %s, %x : i32
  lus.yield (%n : i32)
}
lus.node @sub(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %d = arith.muli %w, %w : i32
  %r = lus.instance @sum(%d) : (i32) -> (i32)
  %nc = lus.when not %c %x : i32
  %m = lus.merge %c %r %nc : i32
  lus.yield (%m : i32)
}

// A k-periodic word reads a loop-carried counter (position in "0(01)": 0, 1,
// 2, 1, 2, ...) that wraps to the start of the period.
// CHECK-LABEL: sync.node @word(%x: !sync.sigin<i32>) -> (%out0: !sync.sigout<i32>) {
// CHECK:         scf.while (%word = %{{.*}}) : (i32) -> i32 {
// CHECK:         ^bb0(%[[K:.*]]: i32):
// CHECK-NEXT:      %[[X:.*]] = sync.input(%x) : i32
// CHECK-NEXT:      %z = arith.constant 0 : i32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[BIT:.*]] = arith.cmpi eq, %[[K]], %[[TWO]] : i32
// CHECK-NEXT:      %m = sync.select %[[BIT]] %[[X]] %z : i32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[K1:.*]] = arith.addi %[[K]], %[[ONE]] : i32
// CHECK-NEXT:      %[[LEN:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[WRAP:.*]] = arith.cmpi eq, %[[K1]], %[[LEN]] : i32
// CHECK-NEXT:      %[[START:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[NEXT:.*]] = arith.select %[[WRAP]], %[[START]], %[[K1]] : i32
// CHECK-NEXT:      %[[E:.*]] = sync.output(%out0 : %m) : i32
// CHECK-NEXT:      %[[T:.*]] = sync.tick(%[[E]]) : i32
// CHECK-NEXT:      %[[S:.*]] = sync.sync(%[[T]], %[[NEXT]] : i32)
// CHECK-NEXT:      scf.yield %[[S]] : i32
lus.node @word(%x: i32) -> (i32) {
  %w = lus.when "0(01)" %x : i32
  %z = arith.constant 0 : i32
  %m = lus.merge "0(01)" %w %z : i32
  lus.yield (%m : i32)
}
