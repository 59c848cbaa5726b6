// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p 'lus-clock-analysis{annotate=true}' | filecheck %s --check-prefix=CLOCKS

// CLOCKS:      %c = lus.fby %c0 %cn {lus.clock = "base"} : i32
// CLOCKS:      %fx = lus.when %ck %x {lus.clock = "base on %ck"} : f32
// CLOCKS-NEXT: %hold = lus.when not %ck %y {lus.clock = "base on not %ck"} : f32
// CLOCKS-NEXT: %m = lus.merge %ck %fx %hold {lus.clock = "base"} : f32
// CLOCKS-NEXT: %y = lus.fby %f0 %m {lus.clock = "base"} : f32

// Combining a sub-sampled flow with a base one.
lus.node @clash(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  // expected-error @+1 {{expected clock base on %c, found base}}
  %s = arith.addi %w, %x : i32
  lus.yield (%x : i32)
}

// -----

// An output must be on the base clock.
lus.node @output(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  // expected-error @+1 {{%w : expected clock base, found base on %c}}
  lus.yield (%w : i32)
}

// -----

// when and not-when of the same condition are different clocks.
lus.node @complement(%x: i32, %c: i1) -> (i32) {
  %a = lus.when %c %x : i32
  %b = lus.when not %c %x : i32
  // expected-error @+1 {{expected clock base on %c, found base on not %c}}
  %s = arith.addi %a, %b : i32
  lus.yield (%x : i32)
}

// -----

// The condition of a when must be on the clock of its input.
lus.node @condition(%x: i32, %c: i1, %d: i1) -> (i32) {
  %cw = lus.when %d %c : i1
  // expected-error @+1 {{%cw : expected clock base, found base on %d}}
  %w = lus.when %cw %x : i32
  lus.yield (%x : i32)
}

// -----

// Merge branches on the wrong sub-clocks.
lus.node @merge(%x: i32, %c: i1) -> (i32) {
  %a = lus.when not %c %x : i32
  %b = lus.when %c %x : i32
  // expected-error @+1 {{%a : expected clock base on %c, found base on not %c}}
  %m = lus.merge %c %a %b : i32
  lus.yield (%m : i32)
}

// -----

// A flow defined on its own sub-clock.
lus.node @own_subclock(%x: i32) -> (i32) {
  %k = lus.kperiodic "(01)" : i1
  // expected-error @+1 {{%s would be on clock 'ck and on its own sub-clock 'ck on %k}}
  %s = lus.when %k %s : i32
  lus.yield (%x : i32)
}

// -----

// Two different k-periodic clocks.
lus.node @words(%x: i32) -> (i32) {
  %a = lus.when "1(0)" %x : i32
  %b = lus.when "(01)" %x : i32
  // expected-error @+1 {{expected clock base on 1(0), found base on (01)}}
  %s = arith.addi %a, %b : i32
  lus.yield (%x : i32)
}

// -----

// Instances share the clock of their arguments (modular): results stay on it.
lus.node @id(%x: i32) -> (i32) {
  lus.yield (%x : i32)
}
lus.node @instance(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %r = lus.instance @id(%w) : (i32) -> i32
  // expected-error @+1 {{%r : expected clock base, found base on %c}}
  lus.yield (%r : i32)
}
