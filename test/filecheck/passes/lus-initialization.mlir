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

// Guarded: fby's next operand, and the false branch of merge "1(0)".
lus.node @guarded(%x: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %p = lus.pre %x : i32
  %f = lus.fby %c0 %p : i32
  %m = lus.merge "1(0)" %c0 %p : i32
  lus.yield (%f : i32, %m : i32)
}
