// A feedback edge through step.eager_merge with nothing to start it: the merge
// polls inputs that wait on the partition its own selector drives. The
// simulator reports the deadlock (it used to poll forever, its clock running).
// RUN: not step-run %S/inputs/step-run-unseeded-merge.mlir 2>&1 | filecheck %s

// CHECK: step-run-unseeded-merge.mlir: error: deadlock at cycle 0: 6 context(s) blocked
// CHECK-DAG: partition0 @ cycle 0: peek channel 'eager_merge0->partition0' (0/2 full)
// CHECK-DAG: map0 @ cycle 0: peek channel 'partition0->map0' (0/2 full)
// CHECK-DAG: map1 @ cycle 0: peek channel 'partition0->map1' (0/2 full)
// CHECK-DAG: eager_merge0 @ cycle {{[0-9]+}}: poll channel 'map{{[01]}}->eager_merge0' (0/2 full)
