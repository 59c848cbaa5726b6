// The Lustre frontend: lus-translate --import-lustre lowers Lustre source to the
// lus dialect (`->` to merge "1(0)", `fby`, `pre`, `when`, `merge`, node calls to
// lus.instance, constants folded) and reports errors at the Lustre source.

// RUN: lus-translate --import-lustre %S/inputs/lustre-watchdog.lus | filecheck %s
// RUN: sh -c 'lus-translate --import-lustre %S/inputs/lustre-clock-error.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CLOCK
// RUN: sh -c 'lus-translate --import-lustre %S/inputs/lustre-unsupported.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNSUP
// RUN: sh -c 'step-opt %S/inputs/lustre-unsupported.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNSUP
// RUN: sh -c 'lus-translate %S/inputs/lustre-watchdog.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=USAGE

// CHECK:      lus.node @edge(%c: i1) -> (i1) attributes {lustre.outputs = ["e"]} {
// CHECK-NEXT:   %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT:   %[[PRE:.*]] = lus.pre %c : i1
// CHECK-NEXT:   %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:   %[[NOTPRE:.*]] = arith.xori %[[PRE]], %[[TRUE]] : i1
// CHECK-NEXT:   %[[RISE:.*]] = arith.andi %c, %[[NOTPRE]] : i1
// CHECK-NEXT:   %e = lus.merge "1(0)" %[[FALSE]] %[[RISE]] : i1
// CHECK-NEXT:   lus.yield (%e : i1)
// CHECK-NEXT: }
// CHECK-NEXT: lus.node @watchdog(%beat: i1, %armed: i1) -> (i1, i32) attributes {lustre.outputs = ["alarm", "since"]} {
// CHECK-NEXT:   %[[BEAT:.*]] = lus.when %armed %beat : i1
// CHECK-NEXT:   %[[RESET:.*]] = arith.constant 0 : i32
// CHECK-NEXT:   %[[INIT:.*]] = arith.constant 0 : i32
// CHECK-NEXT:   %[[PREV:.*]] = lus.fby %[[INIT]] %since : i32
// CHECK-NEXT:   %[[PREV_ON:.*]] = lus.when %armed %[[PREV]] : i32
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:   %[[INC:.*]] = arith.addi %[[PREV_ON]], %[[ONE]] : i32
// CHECK-NEXT:   %count = arith.select %[[BEAT]], %[[RESET]], %[[INC]] : i32
// CHECK-NEXT:   %[[INIT2:.*]] = arith.constant 0 : i32
// CHECK-NEXT:   %[[PREV2:.*]] = lus.fby %[[INIT2]] %since : i32
// CHECK-NEXT:   %[[HELD:.*]] = lus.when not %armed %[[PREV2]] : i32
// CHECK-NEXT:   %since = lus.merge %armed %count %[[HELD]] : i32
// CHECK-NEXT:   %[[FOUR:.*]] = arith.constant 4 : i32
// CHECK-NEXT:   %[[LATE:.*]] = arith.cmpi sgt, %since, %[[FOUR]] : i32
// CHECK-NEXT:   %[[EDGE:.*]] = lus.instance @edge(%armed) : (i1) -> i1
// CHECK-NEXT:   %[[NO:.*]] = arith.constant false
// CHECK-NEXT:   %[[NOEDGE:.*]] = arith.cmpi eq, %[[EDGE]], %[[NO]] : i1
// CHECK-NEXT:   %alarm = arith.andi %[[LATE]], %[[NOEDGE]] : i1
// CHECK-NEXT:   lus.yield (%alarm : i1, %since : i32)
// CHECK-NEXT: }

// CLOCK:      lustre-clock-error.lus:3:7: error: this expression: expected clock base, found base on 'c'
// CLOCK-NEXT:   y = x + (x when c);
// CLOCK-NEXT:       ^
// CLOCK-NEXT: exit=1

// UNSUP:      lustre-unsupported.lus:3:3: error: unsupported construct: automata (Heptagon, in .ept files) ('automaton')
// UNSUP-NEXT:   automaton Up
// UNSUP-NEXT:   ^
// UNSUP-NEXT: exit=1

// USAGE:      lus-translate: error: choose a translation: --import-lustre
// USAGE-NEXT: exit=2
