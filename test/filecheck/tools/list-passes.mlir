// RUN: step-opt --list-passes | filecheck %s
// Every registered pass is listed with a summary line; passes come from the
// registry (tools/registry.py).  Options are shown as users type them in a
// pipeline, with dashes (`isel{node-limit=10}`), with their type in MLIR terms,
// default and allowed values, and on the next line what they mean (the field's
// docstring in the pass: never "(undocumented)").
// CHECK: Available passes
// CHECK-NOT: (unavailable
// CHECK-NOT: (no summary)
// CHECK:      convert-ila-to-commands
// CHECK-NEXT:     Expand accelerator invocations into per-accelerator command streams (ila.fragment).
// CHECK-NEXT: convert-linalg-to-step
// CHECK-NEXT:     Lower linalg-on-tensors functions to tiled, fused step graphs (see module doc).
// CHECK-NEXT:     --tile=<string>  (default: 32x128{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --schedule=<string>  (default: mn_mk{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --memory=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: convert-lus-to-sync
// CHECK-NEXT:     Lower every lus node to a `sync.node` with a `scf.while` main loop.
// CHECK-NEXT: convert-step-to-runtime
// CHECK-NEXT:     Place step graphs on the fabric: insert Broadcasts, number contexts, set depths.
// CHECK-NEXT:     --preset=<string>{{.*}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --depth=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: convert-sync-to-std
// CHECK-NEXT:     Lower sync nodes to func/scf/arith/tensor (step functions or modular).
// CHECK-NEXT:     --target=<string>  (default: step-functions{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: convert-torch-to-pim
// CHECK-NEXT:     Read a `torch.export.save` archive (`.pt2`) into a `pim.model` (source "ir").
// CHECK-NEXT:     --export=<string>
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --model=<string>
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --preset=<string>  (default: allspark-16x16{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: ila-cancel-store-load
// CHECK-NEXT:     Split ila.invoke into store/compute/load and cancel store(load) round trips.
// CHECK-NEXT:     --cancel=<bool>  (default: true{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: isel
// CHECK-NEXT:     Select accelerator invocations by e-graph matching (exact or flexible).
// CHECK-NEXT:     --targets=<list of string>  (default: flexasr,hlscnn,vta{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --mode=<string>  (default: flexible{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --iterations=<int>  (default: 40{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --node-limit=<int>  (default: 100000{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --time-limit=<double>  (default: 300.0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --lstm=<string>  (default: sequence; one of: sequence, step)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --offload=<string>  (default: always; one of: always, profitable)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: isel-verify
// CHECK-NEXT:     Prove with z3 that isel preserves each function's meaning (small shapes).
// CHECK-NEXT:     --targets=<list of string>  (default: flexasr,hlscnn,vta{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --mode=<string>  (default: flexible{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --arith=<string>  (default: uf{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --iterations=<int>  (default: 40{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --node-limit=<int>  (default: 100000{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --time-limit=<double>  (default: 300.0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --timeout-ms=<int>  (default: 60000{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --memory-mb=<int>  (default: 2048{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --max-terms=<int>  (default: 2000000{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --lstm=<string>  (default: sequence; one of: sequence, step)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: lus-causality
// CHECK-NEXT:     Reject instantaneous dependency cycles (cycles not through fby/pre).
// CHECK-NEXT: lus-clock-analysis
// CHECK-NEXT:     Infer every value's clock and reject clock clashes.
// CHECK-NEXT:     --annotate=<bool>  (default: false{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: lus-initialization
// CHECK-NEXT:     Reject reads of values that may be undefined in the first cycles of their clock.
// CHECK-NEXT: lus-inline-instances
// CHECK-NEXT:     Inline every lus.instance, bottom-up; reject recursive instances.
// CHECK-NEXT: lus-normalize
// CHECK-NEXT:     Turn fby/pre into state arguments and order each node's ops for dominance.
// CHECK-NEXT: pim-lower-phases
// CHECK-NEXT:     Lower each scheduled `pim.model` to per-node phase programs and ring transfers.
// CHECK-NEXT: pim-orchestrate
// CHECK-NEXT:     Schedule every `pim.model` with the Allspark ILP and attach the schedule as IR.
// CHECK-NEXT:     --time-limit=<double>  (default: 60.0)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --form=<string>  (default: compact; one of: compact, literal, cpsat)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: pim-verify-schedule
// CHECK-NEXT:     Check every scheduled `pim.model` against the seed's constraints 1-5.
// CHECK-NEXT: step-allocate-memory
// CHECK-NEXT:     Place off-chip symbols in HBM by lifetime (shared addresses), spill to DDR, address map.
// CHECK-NEXT:     --hbm=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --ddr=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --out=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --layers=<int>  (default: 1)
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-allocate-units
// CHECK-NEXT:     Give operators PCUs by FLOPs and PMUs by capacity/bandwidth; split into sections that fit.
// CHECK-NEXT:     --pcus=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --pmus=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --pcu-flops=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --pmu-bytes=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --pmu-bw=<int>  (default: 0{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --solver=<string>  (default: milp{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-dynamic-parallelize
// CHECK-NEXT:     Dispatch requests to P regions on demand (Partition + EagerMerge feedback, Fig. 10).
// CHECK-NEXT:     --factor=<int>  (default: 4{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-dynamic-tiling
// CHECK-NEXT:     Turn static tiling of a dynamic dimension (Reshape + padding) into dynamic tiles.
// CHECK-NEXT: step-hierarchical-tiling
// CHECK-NEXT:     Split logical tiles into physical compute tiles (split_tiles / join_tiles, Fig. 12).
// CHECK-NEXT:     --tile=<string>  (default: 16x16{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-infer-shapes
// CHECK-NEXT:     Infer every step result type from the shape tables; fill in `_` dims, reject contradictions.
// CHECK-NEXT: step-kernelize
// CHECK-NEXT:     Cut every step.graph into kernels run one by one through HBM (unfused / conventional).
// CHECK-NEXT:     --mode=<string>  (default: unfused{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-metrics
// CHECK-NEXT:     Report symbolic off-chip traffic, on-chip memory, FLOPs and operational intensity per op and graph.
// CHECK-NEXT:     --bind=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --onchip=<string>  (default: artifact{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --annotate=<bool>  (default: false{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --out=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --format=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-print-dot
// CHECK-NEXT:     Write each step.graph as Graphviz DOT with stream types on the edges.
// CHECK-NEXT:     --out=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-specialize
// CHECK-NEXT:     Bind symbols of step graphs to values, or to a routing / KV-length trace.
// CHECK-NEXT:     --bind=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --routing=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --kv=<string>{{(  \(one of: .*\))?$}}
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT:     --rewrite=<bool>  (default: false{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}
// CHECK-NEXT: step-time-multiplex
// CHECK-NEXT:     Share N configured expert regions among E identical expert pipelines.
// CHECK-NEXT:     --regions=<int>  (default: 1{{(; one of: .*)?}})
// CHECK-NEXT: {{^        [^( ]}}

// The dashed spelling is accepted, and so is the underscore one.
// RUN: step-opt %s -p 'isel{node-limit=10 time_limit=1.0 targets="vta"}' | filecheck %s --check-prefix=DASH
// DASH: builtin.module

// The full entry of one pass: allowed values come from the docstring's
// "One of:" line, and the description is its first line.
// RUN: step-opt --list-passes | filecheck %s --check-prefix=ISEL
// ISEL:      {{^}}isel{{$}}
// ISEL-NEXT:     Select accelerator invocations by e-graph matching (exact or flexible).
// ISEL-NEXT:     --targets=<list of string>  (default: flexasr,hlscnn,vta; one of: flexasr, hlscnn, vta)
// ISEL-NEXT:         Accelerators to select onto.
// ISEL-NEXT:     --mode=<string>  (default: flexible; one of: exact, flexible)
// ISEL-NEXT:         `exact`: patterns match whole shapes only; `flexible`: also tiled, padded and windowed matches.
// ISEL-NEXT:     --iterations=<int>  (default: 40)
// ISEL-NEXT:         Stop equality saturation after this many iterations.
