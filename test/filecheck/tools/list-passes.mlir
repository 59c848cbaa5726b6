// RUN: step-opt --list-passes | filecheck %s
// Every registered pass is listed with a summary line; passes come from the
// registry (tools/registry.py).
// CHECK: Available passes
// CHECK-NOT: (unavailable
// CHECK-NOT: (no summary)
// CHECK: lus-causality
// CHECK-NEXT: Reject instantaneous dependency cycles (cycles not through fby/pre).
// CHECK: lus-initialization
// CHECK-NEXT: Reject reads of a `pre` value in the first cycle of its clock.
