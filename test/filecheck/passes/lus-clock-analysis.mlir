// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p 'lus-clock-analysis{annotate=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=CLOCKS
// RUN: step-opt %S/../../../examples/lus/two_cycle.mlir -p 'lus-clock-analysis{annotate=true}' 2>/dev/null | filecheck %s --check-prefix=IR

// The clocks are remarks on stderr (none for the clock-polymorphic constants)...
// CLOCKS-NOT: remark: clock of %c0
// CLOCKS:      two_cycle.mlir:9:3: remark: clock of %c: base
// CLOCKS:      two_cycle.mlir:13:3: remark: clock of %fx: base on %ck
// CLOCKS:      two_cycle.mlir:14:3: remark: clock of %hold: base on not %ck
// CLOCKS:      two_cycle.mlir:15:3: remark: clock of %m: base
// CLOCKS:      two_cycle.mlir:16:3: remark: clock of %y: base
// ...and the IR on stdout is unchanged.
// IR:          lus.node @two_cycle(%x: f32) -> (f32) {
// IR-NOT:      lus.clock
// IR-NOT:      remark
// IR:          %hold = lus.when not %ck %y : f32

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
  // expected-error @+1 {{%w: expected clock base, found base on %c}}
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
  // expected-error @+1 {{%cw: expected clock base, found base on %d}}
  %w = lus.when %cw %x : i32
  lus.yield (%x : i32)
}

// -----

// Merge branches on the wrong sub-clocks.
lus.node @merge(%x: i32, %c: i1) -> (i32) {
  %a = lus.when not %c %x : i32
  %b = lus.when %c %x : i32
  // expected-error @+1 {{%a: expected clock base on %c, found base on not %c}}
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
  // expected-error @+1 {{%r: expected clock base, found base on %c}}
  lus.yield (%r : i32)
}
