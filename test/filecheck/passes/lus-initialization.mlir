// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %s --split-input-file --no-lus-checks | filecheck %s --check-prefix=UNCHECKED

lus.node @output(%x: i32) -> (i32) {
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  // expected-error @+1 {{%p may be read uninitialized in the first cycle}}
  lus.yield (%p : i32)
}
// UNCHECKED: lus.node @output

// -----

// Through arithmetic.
lus.node @through(%x: i32) -> (i32) {
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  %s = arith.addi %p, %x : i32
  // expected-error @+1 {{%s may be read uninitialized in the first cycle}}
  lus.yield (%s : i32)
}

// -----

// As the init of fby.
lus.node @fby_init(%x: i32) -> (i32) {
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  %f = lus.fby %p %x : i32
  // expected-error @+1 {{%f may be read uninitialized in the first cycle}}
  lus.yield (%f : i32)
}

// -----

// As a clock condition.
lus.node @condition(%x: i32, %c: i1) -> (i32) {
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %pc = lus.pre %c : i1
  // expected-error @+1 {{%pc may be read uninitialized in the first cycle}}
  %w = lus.when %pc %x : i32
  lus.yield (%x : i32)
}

// -----

// Into an instance, and the wrong branch of a "0(1)" merge.
lus.node @id(%x: i32) -> (i32) {
  lus.yield (%x : i32)
}
lus.node @instance(%x: i32) -> (i32) {
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  %m = lus.merge "0(1)" %x %p : i32
  // expected-error @+1 {{%m may be read uninitialized in the first cycle}}
  %r = lus.instance @id(%m) : (i32) -> i32
  lus.yield (%r : i32)
}

// -----

// Guarded: the false branch of merge "1(0)" (Lustre's ->), a pre of pre by
// a word with two leading 1s or by a -> inside, a pre on a sub-clock by a ->
// on that sub-clock, and a running maximum m = x -> max(x, pre m).
lus.node @guarded(%x: i32, %c: i1) -> (i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %p = lus.pre %x : i32
  %m = lus.merge "1(0)" %c0 %p : i32
  %pp = lus.pre %p : i32
  %m2 = lus.merge "11(0)" %c0 %pp : i32
  %pm = lus.pre %m : i32
  %m3 = lus.merge "1(0)" %c0 %pm : i32
  %xs = lus.when %c %x : i32
  %ps = lus.pre %xs : i32
  %gs = lus.merge "1(0)" %c0 %ps : i32
  %xn = lus.when not %c %x : i32
  %sub = lus.merge %c %gs %xn : i32
  %prev = lus.pre %max : i32
  %bigger = arith.maxsi %x, %prev : i32
  %max = lus.merge "1(0)" %x %bigger : i32
  lus.yield (%m : i32, %m2 : i32, %m3 : i32, %sub : i32, %max : i32)
}

// Guarded on the sub-clock though the two flows on it come from two whens.
lus.node @two_whens(%x: i32, %c: i1) -> (i32) {
  %a = lus.when %c %x : i32
  %b = lus.when %c %x : i32
  %pb = lus.pre %b : i32
  %g = lus.merge "1(0)" %a %pb : i32
  %n = lus.when not %c %x : i32
  %m = lus.merge %c %g %n : i32
  lus.yield (%m : i32)
}

// -----

// 0 fby (pre x) is undefined in its second cycle.
lus.node @fby_of_pre(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  %f = lus.fby %c0 %p : i32
  // expected-error @+1 {{%f may be read uninitialized in the first 2 cycles of its clock}}
  lus.yield (%f : i32)
}

// -----

// 0 -> pre (pre x): one -> guards one cycle, not two.
lus.node @pre_of_pre(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %x : i32
  %pp = lus.pre %p : i32
  %m = lus.merge "1(0)" %c0 %pp : i32
  // expected-error @+1 {{%m may be read uninitialized in the first 2 cycles of its clock}}
  lus.yield (%m : i32)
}

// -----

// A pre on the sub-clock `on %c`, guarded by a -> on the base clock: the
// first cycle of the sub-clock is not the first base cycle.
lus.node @subclock(%x: i32, %c: i1) -> (i32) {
  %c0 = arith.constant 0 : i32
  %xs = lus.when %c %x : i32
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %xs : i32
  %xn = lus.when not %c %x : i32
  %m = lus.merge %c %p %xn : i32
  %g = lus.merge "1(0)" %c0 %m : i32
  // expected-error @+1 {{%g may be read uninitialized in cycles of its clock that no initialization guards}}
  lus.yield (%g : i32)
}

// -----

// A pre of itself is never defined.
lus.node @self_pre(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  // expected-note @+1 {{the uninitialized lus.pre is here}}
  %p = lus.pre %p : i32
  %m = lus.merge "1(0)" %c0 %p : i32
  // expected-error @+1 {{%m may be read uninitialized in cycles of its clock that no initialization guards}}
  lus.yield (%m : i32)
}
