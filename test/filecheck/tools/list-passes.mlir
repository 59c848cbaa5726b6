// RUN: step-opt --list-passes | filecheck %s
// Every registered pass is listed with a summary line; passes come from the
// registry (tools/registry.py).
// CHECK: Available passes
// CHECK-NOT: (unavailable
// CHECK-NOT: (no summary)
// CHECK:      convert-ila-to-commands
// CHECK-NEXT:     Expand accelerator invocations into per-accelerator command streams (ila.fragment).
// CHECK-NEXT: convert-lus-to-sync
// CHECK-NEXT:     Lower every lus node to a `sync.node` with a `scf.while` main loop.
// CHECK-NEXT: convert-sync-to-std
// CHECK-NEXT:     Lower sync nodes to func/scf/arith/tensor (step functions or modular).
// CHECK-NEXT:     --target: str = step-functions
// CHECK-NEXT: ila-cancel-store-load
// CHECK-NEXT:     Split ila.invoke into store/compute/load and cancel store(load) round trips.
// CHECK-NEXT:     --cancel: bool = true
// CHECK-NEXT: isel
// CHECK-NEXT:     Select accelerator invocations by e-graph matching (exact or flexible).
// CHECK-NEXT:     --targets: tuple[str, ...] = ('flexasr', 'hlscnn', 'vta')
// CHECK-NEXT:     --mode: str = flexible
// CHECK-NEXT:     --iterations: int = 40
// CHECK-NEXT: isel-verify
// CHECK-NEXT:     Prove with z3 that isel preserves each function's meaning (small shapes).
// CHECK-NEXT:     --targets: tuple[str, ...] = ('flexasr', 'hlscnn', 'vta')
// CHECK-NEXT:     --mode: str = flexible
// CHECK-NEXT:     --arith: str = uf
// CHECK-NEXT: lus-causality
// CHECK-NEXT:     Reject instantaneous dependency cycles (cycles not through fby/pre).
// CHECK-NEXT: lus-clock-analysis
// CHECK-NEXT:     Infer every value's clock and reject clock clashes.
// CHECK-NEXT:     --annotate: bool = false
// CHECK-NEXT: lus-initialization
// CHECK-NEXT:     Reject reads of a `pre` value in the first cycle of its clock.
// CHECK-NEXT: lus-inline-instances
// CHECK-NEXT:     Inline every lus.instance, bottom-up; reject recursive instances.
// CHECK-NEXT: lus-normalize
// CHECK-NEXT:     Turn fby/pre into state arguments and order each node's ops for dominance.
