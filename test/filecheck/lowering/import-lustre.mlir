// The Lustre frontend: lus-translate --import-lustre lowers Lustre source to the
// lus dialect (`->` to merge "1(0)", `fby`, `pre`, `when`, `merge`, node calls to
// lus.instance, constants folded) and reports errors at the Lustre source.

// RUN: lus-translate --import-lustre %S/inputs/lustre-watchdog.lus | filecheck %s
// RUN: sh -c 'lus-translate --import-lustre %S/inputs/lustre-clock-error.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CLOCK
// RUN: sh -c 'lus-translate --import-lustre %S/inputs/lustre-unsupported.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNSUP
// RUN: sh -c 'step-opt %S/inputs/lustre-unsupported.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNSUP
// RUN: sh -c 'lus-translate %S/inputs/lustre-watchdog.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=USAGE

// CHECK:      lus.node @edge(%c: i1) -> (i1) {
// CHECK-NEXT:   %0 = arith.constant false
// CHECK-NEXT:   %1 = lus.pre %c : i1
// CHECK-NEXT:   %2 = arith.constant true
// CHECK-NEXT:   %3 = arith.xori %1, %2 : i1
// CHECK-NEXT:   %4 = arith.andi %c, %3 : i1
// CHECK-NEXT:   %e = lus.merge "1(0)" %0 %4 : i1
// CHECK-NEXT:   lus.yield (%e : i1)
// CHECK-NEXT: }
// CHECK-NEXT: lus.node @watchdog(%beat: i1, %armed: i1) -> (i1, i32) {
// CHECK-NEXT:   %0 = lus.when %armed %beat : i1
// CHECK-NEXT:   %1 = arith.constant 0 : i32
// CHECK-NEXT:   %2 = arith.constant 0 : i32
// CHECK-NEXT:   %3 = lus.fby %2 %since : i32
// CHECK-NEXT:   %4 = lus.when %armed %3 : i32
// CHECK-NEXT:   %5 = arith.constant 1 : i32
// CHECK-NEXT:   %6 = arith.addi %4, %5 : i32
// CHECK-NEXT:   %count = arith.select %0, %1, %6 : i32
// CHECK-NEXT:   %7 = arith.constant 0 : i32
// CHECK-NEXT:   %8 = lus.fby %7 %since : i32
// CHECK-NEXT:   %9 = lus.when not %armed %8 : i32
// CHECK-NEXT:   %since = lus.merge %armed %count %9 : i32
// CHECK-NEXT:   %10 = arith.constant 4 : i32
// CHECK-NEXT:   %11 = arith.cmpi sgt, %since, %10 : i32
// CHECK-NEXT:   %12 = lus.instance @edge(%armed) : (i1) -> i1
// CHECK-NEXT:   %13 = arith.constant false
// CHECK-NEXT:   %14 = arith.cmpi eq, %12, %13 : i1
// CHECK-NEXT:   %alarm = arith.andi %11, %14 : i1
// CHECK-NEXT:   lus.yield (%alarm : i1, %since : i32)
// CHECK-NEXT: }

// CLOCK:      lustre-clock-error.lus:3:7: error: <result of lus.when> : expected clock base, found base on %c
// CLOCK-NEXT:   y = x + (x when c);
// CLOCK-NEXT:       ^
// CLOCK-NEXT: exit=1

// UNSUP:      lustre-unsupported.lus:3:3: error: unsupported construct: automata ('automaton')
// UNSUP-NEXT:   automaton Up
// UNSUP-NEXT:   ^
// UNSUP-NEXT: exit=1

// USAGE:      lus-translate: error: choose a translation: --import-lustre
// USAGE-NEXT: exit=2
