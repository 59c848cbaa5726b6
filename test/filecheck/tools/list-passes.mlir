// RUN: step-opt --list-passes | filecheck %s
// Every registered pass is listed with a summary line; passes come from the
// registry (tools/registry.py).  Options are shown as users type them in a
// pipeline, with dashes (`isel{node-limit=10}`).
// CHECK: Available passes
// CHECK-NOT: (unavailable
// CHECK-NOT: (no summary)
// CHECK:      convert-ila-to-commands
// CHECK-NEXT:     Expand accelerator invocations into per-accelerator command streams (ila.fragment).
// CHECK-NEXT: convert-linalg-to-step
// CHECK-NEXT:     Lower linalg-on-tensors functions to tiled, fused step graphs (see module doc).
// CHECK-NEXT:     --tile: str = 32x128
// CHECK-NEXT:     --schedule: str = mn_mk
// CHECK-NEXT:     --memory: str
// CHECK-NEXT: convert-lus-to-sync
// CHECK-NEXT:     Lower every lus node to a `sync.node` with a `scf.while` main loop.
// CHECK-NEXT: convert-step-to-runtime
// CHECK-NEXT:     Place step graphs on the fabric: insert Broadcasts, number contexts, set depths.
// CHECK-NEXT:     --preset: str = step-eval
// CHECK-NEXT:     --depth: int = 0
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
// CHECK-NEXT:     --node-limit: int = 100000
// CHECK-NEXT:     --time-limit: float = 5.0
// CHECK-NEXT: isel-verify
// CHECK-NEXT:     Prove with z3 that isel preserves each function's meaning (small shapes).
// CHECK-NEXT:     --targets: tuple[str, ...] = ('flexasr', 'hlscnn', 'vta')
// CHECK-NEXT:     --mode: str = flexible
// CHECK-NEXT:     --arith: str = uf
// CHECK-NEXT:     --iterations: int = 40
// CHECK-NEXT:     --node-limit: int = 100000
// CHECK-NEXT:     --time-limit: float = 5.0
// CHECK-NEXT:     --timeout-ms: int = 60000
// CHECK-NEXT:     --memory-mb: int = 2048
// CHECK-NEXT:     --max-terms: int = 2000000
// CHECK-NEXT: lus-causality
// CHECK-NEXT:     Reject instantaneous dependency cycles (cycles not through fby/pre).
// CHECK-NEXT: lus-clock-analysis
// CHECK-NEXT:     Infer every value's clock and reject clock clashes.
// CHECK-NEXT:     --annotate: bool = false
// CHECK-NEXT: lus-initialization
// CHECK-NEXT:     Reject reads of values that may be undefined in the first cycles of their clock.
// CHECK-NEXT: lus-inline-instances
// CHECK-NEXT:     Inline every lus.instance, bottom-up; reject recursive instances.
// CHECK-NEXT: lus-normalize
// CHECK-NEXT:     Turn fby/pre into state arguments and order each node's ops for dominance.
// CHECK-NEXT: step-allocate-memory
// CHECK-NEXT:     Place off-chip symbols in HBM by lifetime (shared addresses), spill to DDR, address map.
// CHECK-NEXT:     --hbm: str = 64gib
// CHECK-NEXT:     --ddr: str = 1536gib
// CHECK-NEXT:     --out: str
// CHECK-NEXT: step-allocate-units
// CHECK-NEXT:     Give operators PCUs by FLOPs and PMUs by capacity/bandwidth; split into sections that fit.
// CHECK-NEXT:     --pcus: int = 1040
// CHECK-NEXT:     --pmus: int = 1040
// CHECK-NEXT:     --pcu-flops: int = 383
// CHECK-NEXT:     --pmu-bytes: int = 524288
// CHECK-NEXT:     --pmu-bw: int = 64
// CHECK-NEXT:     --solver: str = milp
// CHECK-NEXT: step-dynamic-parallelize
// CHECK-NEXT:     Dispatch requests to P regions on demand (Partition + EagerMerge feedback, Fig. 10).
// CHECK-NEXT:     --factor: int = 4
// CHECK-NEXT: step-dynamic-tiling
// CHECK-NEXT:     Turn static tiling of a dynamic dimension (Reshape + padding) into dynamic tiles.
// CHECK-NEXT: step-hierarchical-tiling
// CHECK-NEXT:     Split logical tiles into physical compute tiles (split_tiles / join_tiles, Fig. 12).
// CHECK-NEXT:     --tile: str = 16x16
// CHECK-NEXT: step-infer-shapes
// CHECK-NEXT:     Infer every step result type from the shape tables; fill in `_` dims, reject contradictions.
// CHECK-NEXT: step-kernelize
// CHECK-NEXT:     Cut every step.graph into kernels run one by one through HBM (unfused / conventional).
// CHECK-NEXT:     --mode: str = unfused
// CHECK-NEXT: step-metrics
// CHECK-NEXT:     Report symbolic off-chip traffic, on-chip memory, FLOPs and operational intensity per op and graph.
// CHECK-NEXT:     --bind: str
// CHECK-NEXT:     --onchip: str = artifact
// CHECK-NEXT:     --annotate: bool = false
// CHECK-NEXT:     --out: str
// CHECK-NEXT:     --format: str
// CHECK-NEXT: step-print-dot
// CHECK-NEXT:     Write each step.graph as Graphviz DOT with stream types on the edges.
// CHECK-NEXT:     --out: str
// CHECK-NEXT: step-specialize
// CHECK-NEXT:     Bind symbols of step graphs to values, or to a routing / KV-length trace.
// CHECK-NEXT:     --bind: str
// CHECK-NEXT:     --routing: str
// CHECK-NEXT:     --kv: str
// CHECK-NEXT:     --rewrite: bool = false
// CHECK-NEXT: step-time-multiplex
// CHECK-NEXT:     Share N configured expert regions among E identical expert pipelines.
// CHECK-NEXT:     --regions: int = 1

// The dashed spelling is accepted, and so is the underscore one.
// RUN: step-opt %s -p 'isel{node-limit=10 time_limit=1.0 targets="vta"}' | filecheck %s --check-prefix=DASH
// DASH: builtin.module
