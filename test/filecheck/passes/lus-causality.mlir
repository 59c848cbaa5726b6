// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %s --split-input-file --no-lus-checks | filecheck %s --check-prefix=UNCHECKED

// A two-value instantaneous cycle.
lus.node @two(%x: i32) -> (i32) {
  // expected-error @+1 {{instantaneous dependency cycle: %a -> %b -> %a (a cycle must pass through lus.fby or lus.pre)}}
  %a = arith.addi %b, %x : i32
  // expected-note @+1 {{%b is on the cycle}}
  %b = arith.muli %a, %x : i32
  lus.yield (%b : i32)
}
// UNCHECKED: lus.node @two

// -----

// A self-loop.
lus.node @self(%x: i32) -> (i32) {
  // expected-error @+1 {{instantaneous dependency cycle: %s -> %s}}
  %s = arith.addi %s, %x : i32
  lus.yield (%s : i32)
}

// -----

// A cycle through the init operand of fby is still instantaneous.
lus.node @through_init(%x: i32) -> (i32) {
  // expected-error @+1 {{instantaneous dependency cycle: %f -> %g -> %f}}
  %f = lus.fby %g %x : i32
  // expected-note @+1 {{%g is on the cycle}}
  %g = arith.addi %f, %x : i32
  lus.yield (%g : i32)
}

// -----

// A longer cycle through when and merge, named in dataflow order.
lus.node @long(%x: f32, %c: i1) -> (f32) {
  // expected-error @+1 {{instantaneous dependency cycle: %m -> %w -> %n -> %m}}
  %m = lus.merge %c %x %n : f32
  // expected-note @+1 {{%w is on the cycle}}
  %w = arith.addf %m, %m : f32
  // expected-note @+1 {{%n is on the cycle}}
  %n = lus.when not %c %w : f32
  lus.yield (%m : f32)
}

// -----

// Cycles through fby (next operand) and pre are fine.
lus.node @ok(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %x : i32
  %p = lus.pre %q : i32
  %q = arith.addi %p, %x : i32
  lus.yield (%incr : i32)
}
