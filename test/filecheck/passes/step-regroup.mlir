// step.regroup through step-metrics, the fabric placement and step-run: no off-chip bytes,
// one block on chip (4 tiles of 2x3 f32 = 96 B; paper mode double-buffers: 192 B).
// RUN: step-opt %s -p 'step-metrics' -o /dev/null 2>&1 | filecheck %s
// RUN: step-opt %s -p 'step-metrics{onchip=paper}' -o /dev/null 2>&1 | filecheck %s --check-prefix=PAPER
// RUN: step-opt %s -p 'convert-step-to-runtime{preset=sn40l}' | filecheck %s --check-prefix=PLACED
// RUN: step-run %s --preset sn40l | filecheck %s --check-prefix=SIM

step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>, stride = array<i64: 4, 1>, tiled_out_shape = array<i64: 2, 4>} : () -> !step.stream<[2, 4], !step.tile<2x3xf32>>
  %t = step.regroup %x {dim = 0 : i64, axis = 0 : i64} : (!step.stream<[2, 4], !step.tile<2x3xf32>>) -> !step.stream<[2, 2], !step.tile<4x3xf32>>
  step.linear_offchip_store %t {base_addr = 4096 : i64} : !step.stream<[2, 2], !step.tile<4x3xf32>>
}

// CHECK: %t step.regroup   0   96   0   0
// CHECK: total offchip_bytes = 384
// PAPER: %t step.regroup   0   192   0   0
// PLACED: step.regroup %x {runtime.context = 1 : i64, dim = 0 : i64, axis = 0 : i64}
// SIM: off-chip traffic (B)   384
// SIM: regroup0   Regroup
