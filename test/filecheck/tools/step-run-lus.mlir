// step-run executes a lus node on the reactive runtime, one line per tick.
// RUN: step-run %S/../../../examples/lus/integrator.mlir --node @integr --ticks 4 --input i=%S/inputs/ints.csv | filecheck %s
// CHECK:      tick 0: 3
// CHECK-NEXT: tick 1: 2
// CHECK-NEXT: tick 2: 6
// CHECK-NEXT: tick 3: 7

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir --node @integr --ticks 9 --input i=%S/inputs/ints.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHORT
// SHORT:      integrator.mlir: error: input %i has 4 values for 9 ticks
// SHORT-NEXT: exit=1

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir --ticks 2; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=USAGE
// USAGE:      step-run: error: the following arguments are required: --node
// USAGE-NEXT: exit=2

// RUN: sh -c 'step-run %S/inputs/expected-unexpected.mlir --node @f --ticks 1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// BAD:      expected-unexpected.mlir:3:3: error: Expected arguments to have the same types
// BAD-NEXT: exit=1
