// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{solver=greedy}' 2>&1 | filecheck %s
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{pcus=2 solver=greedy}' 2>&1 | filecheck %s --check-prefix=SECT
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-allocate-units{pcus=2}' | step-run - --preset sn40l --orchestration ho | filecheck %s --check-prefix=EXEC
// RUN: step-opt %S/inputs/sn40l-tiny.mlir -p 'step-kernelize,step-allocate-units' 2>&1 | filecheck %s --check-prefix=KERN
// RUN: sh -c 'step-opt %S/inputs/sn40l-tiny.mlir -p "step-allocate-units{pcus=-1}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 2 : i64}>} {/' %S/inputs/sn40l-tiny.mlir | step-opt -p 'step-allocate-units{solver=greedy}' 2>&1 | filecheck %s --check-prefix=TSECT
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 2 : i64}>} {/' %S/inputs/sn40l-tiny.mlir | step-opt -p 'step-allocate-units{pcus=1040 solver=greedy}' 2>&1 | filecheck %s
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = #target.sn40l<{pcus = 520 : i64, clock_ghz = 1.6 : f64}>} {/' %S/inputs/sn40l-tiny.mlir | step-opt -p 'step-allocate-units{solver=greedy}' 2>&1 | filecheck %s --check-prefix=HALF
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.sn40l = 3 : i64} {/' %S/inputs/sn40l-tiny.mlir | sh -c 'step-opt -p "step-allocate-units"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOTARGET
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

// The same cut with the chip of the module's `#target.sn40l<{pcus = 2 : i64}>`,
// whose two PCUs share the socket's 638 TFLOP/s: pcu_flops is derived,
// floor(638e12 / (2 x 1.6e9)) = 199375. An option given wins over the
// attribute: pcus=1040 gives the one section of the first check.
// TSECT:      remark: step-allocate-units: @g: 2 section(s); section 0: 2/2 PCUs, {{.*}}; section 1: 2/2 PCUs
// TSECT:      step.graph @g_k0 attributes {sn40l.kernel = 0 : i64, sn40l.kernels = 2 : i64, sn40l.source = "g", sn40l.pcus_used = 2 : i64
// TSECT:        %y = step.map %{{.*}} {compute_bw = 199375 : i64, sn40l.pcus = 1 : i64

// EXEC:     kernels                2
// EXEC:     launch cycles          3200 (1600 per kernel)

// Kernels (already cut) each get the whole chip.
// KERN: remark: step-allocate-units: @g_k0: {{[0-9]+}}/1040 PCUs
// KERN: remark: step-allocate-units: @g_k3: {{[0-9]+}}/1040 PCUs

// Half the PCUs of the seed's socket: each PCU does twice the FLOPs/cycle
// (pcu_flops is derived: floor(638e12 / (520 x 1.6e9)) = 766), so every
// operator's compute_bw is its PCUs x 766 (437 x 766 = 334742, 55 x 766 =
// 42130): the same bandwidths as 1040 PCUs of 383 (874 x 383 = 334742).
// HALF:      remark: step-allocate-units: @g: 1 section(s); section 0: 520/520 PCUs, 1040/1040 PMUs (greedy)
// HALF:        %y = step.map %{{.*}} {compute_bw = 334742 : i64, sn40l.pcus = 437 : i64
// HALF:        %e = step.map %y {compute_bw = 42130 : i64, sn40l.pcus = 55 : i64}

// NOTARGET:      error: step-allocate-units: 'target.sn40l' must be a #target.sn40l attribute
// NOTARGET:      exit=1

// ZERO:      step-opt: error: invalid options for pass 'step-allocate-units': pcus must be a positive integer or 0 (the target's), got -1
// ZERO-NEXT: exit=2
// SOLVER:      step-opt: error: invalid options for pass 'step-allocate-units': unknown solver 'cplex' (choose from milp, greedy)
// SOLVER-NEXT: exit=2
// FULL:      error: step-allocate-units: step.map and its inputs need more units than the chip has: no sectioning fits it
// FULL:      exit=1
