// step-run executes a lus node on the reactive runtime, one line per tick.
// RUN: step-run %S/../../../examples/lus/integrator.mlir --node @integr --ticks 4 --input i=%S/inputs/ints.csv | filecheck %s
// CHECK:      tick 0: 3
// CHECK-NEXT: tick 1: 2
// CHECK-NEXT: tick 2: 6
// CHECK-NEXT: tick 3: 7

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir --node @integr --ticks 9 --input i=%S/inputs/ints.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHORT
// SHORT:      integrator.mlir: error: input %i has 4 values for 9 ticks
// SHORT-NEXT: exit=1

// Without --node, step-run runs the only node of the file; with several it names them.
// RUN: sh -c 'step-run %S/../../../examples/lus/subsampled.mlir --ticks 2; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=USAGE
// USAGE:      step-run: error: {{.*}}subsampled.mlir has 2 entry points (lus.node @lstm, lus.node @subsampled); choose one with --graph @name, --node @name or --func @name
// USAGE-NEXT: exit=2

// RUN: sh -c 'step-run %S/inputs/expected-unexpected.mlir --node @f --ticks 1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// BAD:      expected-unexpected.mlir:3:3: error: Expected arguments to have the same types
// BAD-NEXT: {{^}}  func.return %a, %a : i32, i32
// BAD-NEXT: {{^}}  ^
// BAD-NEXT: exit=1

// The three execution paths print the same ticks; here an instance on a
// sub-clock (its fby only advances when %c holds).
// RUN: step-run %S/inputs/subclock-fby.mlir --node @f --ticks 4 --input x=%S/inputs/ints.csv --input c=%S/inputs/bools.csv | filecheck %s --check-prefix=PATHS
// RUN: step-run %S/inputs/subclock-fby.mlir --node @f --ticks 4 --input x=%S/inputs/ints.csv --input c=%S/inputs/bools.csv --backend sync | filecheck %s --check-prefix=PATHS
// RUN: step-run %S/inputs/subclock-fby.mlir --node @f --ticks 4 --input x=%S/inputs/ints.csv --input c=%S/inputs/bools.csv --backend iree | filecheck %s --check-prefix=PATHS
// PATHS:      tick 0: 3
// PATHS-NEXT: tick 1: -1
// PATHS-NEXT: tick 2: 7
// PATHS-NEXT: tick 3: 8

// A lowering error is located in the program, whatever the backend.
// RUN: sh -c 'step-run %S/inputs/subclock-init.mlir --node @f --ticks 1 --backend iree; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LOWER
// LOWER:      subclock-init.mlir:3:3: error: lus-normalize: a lus.fby on a sub-clock (base on %c) needs a constant initial value
// LOWER:      exit=1

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir --node @nope --ticks 1 --backend iree; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NONODE
// NONODE:      integrator.mlir: error: no lus.node or sync.node @nope (nodes: @integr)
// NONODE-NEXT: exit=1

// RUN: sh -c 'step-run %S/../../../examples/lus/integrator.mlir --node @integr --ticks 1 --backend gpu; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BACKEND
// BACKEND:      step-run: error: argument --backend: invalid choice: 'gpu' (choose from {{.*}}reactive{{.*}}sync{{.*}}iree{{.*}})
// BACKEND-NEXT: exit=2
