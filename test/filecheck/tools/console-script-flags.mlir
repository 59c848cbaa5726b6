// The flags of the other console scripts that no other test exercises (issue 28):
// lus-translate's -o, --no-lus-checks and --print-op-generic; pim-orchestrate's
// --simulate and --emit-mlir.

// --no-lus-checks: the clock error (x + (x when c)) is not reported; without it, it is.
// RUN: lus-translate --import-lustre %S/../lowering/inputs/lustre-clock-error.lus --no-lus-checks | filecheck %s --check-prefix=NOCHECK
// NOCHECK: lus.node @f(%x: i32, %c: i1) -> (i32)
// NOCHECK: %0 = lus.when %c %x : i32
// RUN: not lus-translate --import-lustre %S/../lowering/inputs/lustre-clock-error.lus 2>&1 | filecheck %s --check-prefix=CHECKS
// CHECKS: lustre-clock-error.lus:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}clock

// --print-op-generic, and -o writes the program to a file (nothing on stdout).
// RUN: lus-translate --import-lustre %S/../lowering/inputs/lustre-watchdog.lus --print-op-generic | filecheck %s --check-prefix=GENERIC
// GENERIC: "lus.node"() <{sym_name = "edge", function_type = (i1) -> i1
// RUN: lus-translate --import-lustre %S/../lowering/inputs/lustre-watchdog.lus -o %t.lus.mlir > %t.stdout
// RUN: test ! -s %t.stdout
// RUN: step-opt %t.lus.mlir | filecheck %s --check-prefix=OFILE
// OFILE: lus.node @watchdog(

// pim-orchestrate --simulate runs the phase programs on the NoC simulator and says
// how far that is from eq. 12's latency; --emit-mlir writes the schedule as pim IR
// that step-opt reads back.
// RUN: pim-orchestrate --model swin-t --img 224 --simulate --emit-mlir %t.pim.mlir | filecheck %s --check-prefix=SIM
// SIM: latency {{[0-9.]+}} ms = compute
// SIM: simulated latency {{[0-9.]+}} ms (phase programs on the NoC simulator) vs eq. 12 {{[0-9.]+}} ms
// RUN: step-opt %t.pim.mlir | filecheck %s --check-prefix=EMIT
// EMIT: "pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}>
// EMIT: "pim.stage"() <{index = 1 : i64, branches = 64 : i64, blocks = 2 : i64
