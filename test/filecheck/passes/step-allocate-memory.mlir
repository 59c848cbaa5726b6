// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize,step-allocate-memory' 2>&1 | filecheck %s
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize,step-allocate-memory{hbm=12KiB out="%t.json"}' 2>&1 | filecheck %s --check-prefix=SPILL
// RUN: filecheck %s --check-prefix=MAP < %t.json
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize,step-allocate-memory{hbm=12KiB}' | step-run - --preset sn40l --orchestration so | filecheck %s --check-prefix=SIM
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-kernelize,step-allocate-memory{hbm=4KiB ddr=8KiB}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FULL
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-allocate-memory{hbm=lots}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = #target.sn40l<{hbm_bytes = 12288 : i64}>} {/' %S/inputs/sn40l-tiny.mlir | step-opt -p 'step-kernelize,step-allocate-memory' 2>&1 | filecheck %s --check-prefix=SPILL
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = #target.sn40l<{hbm_bytes = 12288 : i64}>} {/' %S/inputs/sn40l-tiny.mlir | step-opt -p 'step-kernelize,step-allocate-memory{hbm=64GiB}' 2>&1 | filecheck %s

// Seven symbols, 25600 B; by lifetime they share 16384 B (the live bytes of
// kernel 0: ld0, ld1, g.t0, ld2); g.t1 (kernels 1-3) reuses ld0's address.
// CHECK:      remark: step-allocate-memory: @g: 7 symbol(s), HBM 16384 B (without sharing 25600 B), DDR 0 B; 0 symbol(s) spilled
// CHECK:      step.graph @g_k0 attributes {{{.*}}sn40l.hbm_bytes = 16384 : i64, sn40l.ddr_bytes = 0 : i64}
// CHECK:        step.linear_offchip_load {name = "ld0", sn40l.tier = "hbm", sn40l.readonly, base_addr = [[LD0:[0-9]+]] : i64
// CHECK:      step.graph @g_k1
// CHECK:        step.linear_offchip_store %{{.*}} {name = "t1_st", sn40l.symbol = "g.t1", sn40l.tier = "hbm", base_addr = [[LD0]] : i64}

// With 12 KiB the smallest transfer footprints spill first: st0 (1 KiB
// moved), then ld0 (4 KiB). The same with the HBM of the module's
// `#target.sn40l<{hbm_bytes = 12288 : i64}>` (an option given wins: hbm=64GiB
// spills nothing, the first check above).
// SPILL: remark: step-allocate-memory: @g: 7 symbol(s), HBM 12288 B (without sharing 20480 B), DDR 4096 B; 2 symbol(s) spilled: st0, ld0
// MAP:      "graph": "g",
// MAP-NEXT: "hbm_bytes": 12288,
// MAP-NEXT: "ddr_bytes": 4096,
// MAP-NEXT: "spilled": [
// MAP-NEXT:  "st0",
// MAP-NEXT:  "ld0"
// SIM: kernels                4

// FULL: error: step-allocate-memory: the graph does not fit: 25600 B of symbols, HBM 4096 B + DDR 8192 B (after sharing: DDR needs {{[0-9]+}} B); largest symbols: ld0 (4096 B), ld1 (4096 B), g.t0 (4096 B)
// FULL: exit=1
// BAD:      step-opt: error: invalid options for pass 'step-allocate-memory': hbm must be a size like 64GiB or 4096, got 'lots'
// BAD-NEXT: exit=2
