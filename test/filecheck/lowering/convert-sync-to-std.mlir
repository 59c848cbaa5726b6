// RUN: step-opt %s -p convert-sync-to-std | filecheck %s --check-prefix=STEP
// RUN: step-opt %s -p 'convert-sync-to-std{target=modular}' | filecheck %s --check-prefix=MOD
// RUN: step-opt %s -p 'convert-sync-to-std{target=modular}' --print-op-generic | step-opt | filecheck %s --check-prefix=MOD

// step-functions: the prelude is @n_reset, one loop iteration is @n_step
// (state and inputs in, next state and outputs out); sync.undef is a zero,
// sync.select is arith.select.
// STEP:      func.func @integr_reset() -> i32 {
// STEP-NEXT:   %c0 = arith.constant 0 : i32
// STEP-NEXT:   func.return %c0 : i32
// STEP-NEXT: }
// STEP-NEXT: func.func @integr_step(%s: i32, %i: i32, %c: i1) -> (i32, i32) {
// STEP-NEXT:   %n = arith.addi %s, %i : i32
// STEP-NEXT:   %u = arith.constant 0 : i32
// STEP-NEXT:   %sel = arith.select %c, %n, %u : i32
// STEP-NEXT:   func.return %n, %sel : i32, i32
// STEP-NEXT: }

// modular: a function of the instance number that loops forever over
// runtime calls; the runtime's functions are declared private.
// MOD:      func.func @integr(%inst: i32) {
// MOD-NEXT:   %c0 = arith.constant 0 : i32
// MOD-NEXT:   %{{.*}} = scf.while (%{{.*}} = %c0) : (i32) -> i32 {
// MOD:        } do {
// MOD-NEXT:   ^bb0(%s: i32):
// MOD-NEXT:     %[[P0:.*]] = arith.constant 0 : i32
// MOD-NEXT:     %x = func.call @sch_input_i32(%inst, %[[P0]]) : (i32, i32) -> i32
// MOD-NEXT:     %[[P1:.*]] = arith.constant 1 : i32
// MOD-NEXT:     %ck = func.call @sch_input_i1(%inst, %[[P1]]) : (i32, i32) -> i1
// MOD-NEXT:     %n = arith.addi %s, %x : i32
// MOD-NEXT:     %u = arith.constant 0 : i32
// MOD-NEXT:     %sel = arith.select %ck, %n, %u : i32
// MOD-NEXT:     %[[Q:.*]] = arith.constant 0 : i32
// MOD-NEXT:     func.call @sch_output_i32(%inst, %[[Q]], %sel) : (i32, i32, i32) -> ()
// MOD-NEXT:     func.call @tick() : () -> ()
// MOD-NEXT:     scf.yield %n : i32
// MOD-NEXT:   }
// MOD-NEXT:   func.return
// MOD-NEXT: }
// MOD-NEXT: func.func private @sch_input_i32(i32, i32) -> i32
// MOD-NEXT: func.func private @sch_input_i1(i32, i32) -> i1
// MOD-NEXT: func.func private @sch_output_i32(i32, i32, i32) -> ()
// MOD-NEXT: func.func private @tick() -> ()
sync.node @integr(%i: !sync.sigin<i32>, %c: !sync.sigin<i1>) -> (%o: !sync.sigout<i32>) {
  %c0 = arith.constant 0 : i32
  %r = scf.while (%s0 = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %s0 : i32
  } do {
  ^bb0(%s: i32):
    %x = sync.input(%i) : i32
    %ck = sync.input(%c) : i1
    %n = arith.addi %s, %x : i32
    %u = sync.undef : i32
    %sel = sync.select %ck %n %u : i32
    %e = sync.output(%o : %sel) : i32
    %t = sync.tick(%e) : i32
    %n2 = sync.sync(%t, %n : i32)
    scf.yield %n2 : i32
  }
  sync.halt
}
