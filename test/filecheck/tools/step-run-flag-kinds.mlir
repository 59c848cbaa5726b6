// An option that does not apply to the kind of entry point is a usage error
// (exit 2), never silently ignored.
// RUN: not step-run %S/inputs/counter.mlir --ticks 2 --preset sn40l 2>&1 | filecheck %s --check-prefix=NODE1
// NODE1: step-run: error: --preset applies to step graphs, not to a lus or sync node
// RUN: not step-run %S/inputs/counter.mlir --ticks 2 --functional --depth 3 2>&1 | filecheck %s --check-prefix=NODE2
// NODE2: step-run: error: --depth, --functional apply to step graphs, not to a lus or sync node
// RUN: not step-run %S/inputs/swiglu-tm32-tn128.mlir --backend iree 2>&1 | filecheck %s --check-prefix=GRAPH1
// GRAPH1: step-run: error: --backend iree applies to nodes and functions; a step.graph runs on the fabric simulator (--preset, --config)
// A graph's --output is an .npz of its stores (or .npy for one); checked before simulating.
// RUN: not step-run %S/inputs/swiglu-tm32-tn128.mlir --output %t.csv 2>&1 | filecheck %s --check-prefix=GRAPH2
// GRAPH2: step-run: error: --output {{.*}}.csv: expected an .npz (or, for one output, .npy) file
// RUN: not step-run %S/inputs/two-funcs.mlir --func @a --json 2>&1 | filecheck %s --check-prefix=FUNC
// FUNC: step-run: error: --json applies to step graphs, not to a function
// Exit code 2 (usage), not 1:
// RUN: sh -c 'step-run %S/inputs/counter.mlir --ticks 2 --trace %t.json; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT: step-run: error: --trace applies to step graphs, not to a lus or sync node
// EXIT-NEXT: exit=2
