// step-run --explain: every SN40L parameter with its source.
// RUN: step-run --preset sn40l --explain | filecheck %s --check-prefix=EXPLAIN
// EXPLAIN:      hardware preset sn40l
// EXPLAIN:      pcus {{ +}}1040 {{.*}} seed {{.*}}§I, §IV
// EXPLAIN:      socket_tflops {{ +}}638 {{.*}} seed
// EXPLAIN:      clock_ghz {{ +}}1.6 {{.*}} assumed
// EXPLAIN:      launch_so_us {{ +}}15 {{.*}} assumed
// EXPLAIN:      pcu_flops {{ +}}383 {{.*}} derived
// RUN: step-run --preset step-eval --explain | filecheck %s --check-prefix=OTHER
// OTHER: hardware preset step-eval: no seed/assumed table
// RUN: sh -c 'step-run --preset sn40l; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE:      step-run: error: the following arguments are required: input_file
// NOFILE-NEXT: exit=2

// Kernels run one after the other; --orchestration charges a launch each
// (so: 15 us = 24000 cycles, ho: 1 us = 1600 cycles at the assumed 1.6 GHz).
// RUN: step-opt %S/../passes/inputs/sn40l-tiny.mlir -p 'step-kernelize{mode=unfused}' | step-run - --preset sn40l --orchestration so | filecheck %s --check-prefix=SO
// SO:      orchestration          so
// SO-NEXT: kernels                4
// SO:      launch cycles          96000 (24000 per kernel)
// SO:      g_k0
// SO:      g_k3
// RUN: step-run %S/../passes/inputs/sn40l-tiny.mlir --preset sn40l --orchestration ho --json | filecheck %s --check-prefix=HO
// HO: "launch_cycles": 1600,
// HO: "kernels": 1,
// RUN: sh -c 'step-run %S/../passes/inputs/sn40l-tiny.mlir --orchestration xx; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADORCH
// BADORCH: step-run: error: argument --orchestration: invalid choice: 'xx'
// BADORCH-NEXT: exit=2

// Functional kernels: values flow from each kernel's stores to the next one's loads.
// RUN: step-opt %S/../passes/inputs/sn40l-tiny.mlir -p 'step-kernelize' | step-run - --preset sn40l --functional --orchestration so | filecheck %s --check-prefix=FUNC
// FUNC: kernels                4
// FUNC: launch cycles          96000 (24000 per kernel)
