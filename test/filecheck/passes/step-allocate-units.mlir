// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{solver=greedy}' 2>&1 | filecheck %s
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{pcus=2 solver=greedy}' 2>&1 | filecheck %s --check-prefix=SECT
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{pcus=2}' | step-run - --preset sn40l --orchestration ho | filecheck %s --check-prefix=EXEC
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize,step-allocate-units' 2>&1 | filecheck %s --check-prefix=KERN
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-allocate-units{pcus=0}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-allocate-units{solver=cplex}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SOLVER
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-allocate-units{pmus=1}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FULL

// One section on a whole socket: the greedy spends all 1040 PCUs, the
// matmul (8x the FLOPs of exp, 32x the add's and the mul's) gets the most.
// CHECK:      remark: step-allocate-units: @g: 1 section(s); section 0: 1040/1040 PCUs, 1040/1040 PMUs (greedy)
// CHECK:      step.graph @g attributes {sn40l.pcus_used = 1040 : i64, sn40l.pmus_used = 1040 : i64, sn40l.sections = 1 : i64}
// CHECK:        %y = step.map %{{.*}} {compute_bw = [[BW:[0-9]+]] : i64, sn40l.pcus = {{[89][0-9][0-9]}} : i64, pmu_bw = {{[0-9]+}} : i64, sn40l.pmus = {{[0-9]+}} : i64}
// CHECK:        %e = step.map %y {compute_bw = {{[0-9]+}} : i64, sn40l.pcus = {{1[0-9][0-9]}} : i64}

// Two PCUs for four operators: two sections (kernels) of two operators.
// SECT:      remark: step-allocate-units: @g: 2 section(s); section 0: 2/2 PCUs, {{.*}}; section 1: 2/2 PCUs
// SECT:      step.graph @g_k0 attributes {sn40l.kernel = 0 : i64, sn40l.kernels = 2 : i64, sn40l.source = "g", sn40l.pcus_used = 2 : i64
// SECT:        %y = step.map %{{.*}} {compute_bw = 383 : i64, sn40l.pcus = 1 : i64
// SECT:      step.graph @g_k1 attributes {sn40l.kernel = 1 : i64

// EXEC:     kernels                2
// EXEC:     launch cycles          3200 (1600 per kernel)

// Kernels (already cut) each get the whole chip.
// KERN: remark: step-allocate-units: @g_k0: {{[0-9]+}}/1040 PCUs
// KERN: remark: step-allocate-units: @g_k3: {{[0-9]+}}/1040 PCUs

// ZERO:      step-opt: error: invalid options for pass 'step-allocate-units': pcus must be a positive integer, got 0
// ZERO-NEXT: exit=2
// SOLVER:      step-opt: error: invalid options for pass 'step-allocate-units': unknown solver 'cplex' (choose from milp, greedy)
// SOLVER-NEXT: exit=2
// FULL:      error: step-allocate-units: step.map and its inputs need more units than the chip has: no sectioning fits it
// FULL:      exit=1
