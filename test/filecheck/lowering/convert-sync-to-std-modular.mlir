// RUN: step-opt %s -p 'convert-sync-to-std{target=modular}' | filecheck %s --check-prefix=MOD

// An instance: set the callee's instance once, then per reaction its inputs,
// `inst`, and read its outputs.
// MOD-LABEL: func.func @outer(%inst: i32) {
// MOD-NEXT:    %[[K:.*]] = arith.constant 3 : i32
// MOD-NEXT:    %[[F:.*]] = arith.constant 0 : i32
// MOD-NEXT:    func.call @sch_set_instance(%[[K]], %[[F]]) : (i32, i32) -> ()
// MOD:         %[[K2:.*]] = arith.constant 3 : i32
// MOD-NEXT:    %[[P:.*]] = arith.constant 0 : i32
// MOD-NEXT:    func.call @sch_set_io_f32(%[[K2]], %[[P]], %x) : (i32, i32, f32) -> ()
// MOD-NEXT:    func.call @inst(%[[K2]]) : (i32) -> ()
// MOD-NEXT:    %[[P1:.*]] = arith.constant 1 : i32
// MOD-NEXT:    %y = func.call @sch_get_io_f32(%[[K2]], %[[P1]]) : (i32, i32) -> f32
sync.node @id(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  scf.while () : () -> () {
    %true = arith.constant true
    scf.condition(%true)
  } do {
    %x = sync.input(%i) : f32
    %e = sync.output(%o : %x) : f32
    %t = sync.tick(%e) : i32
    scf.yield
  }
  sync.halt
}
sync.node @outer(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  scf.while () : () -> () {
    %true = arith.constant true
    scf.condition(%true)
  } do {
    %x = sync.input(%i) : f32
    %y = sync.inst @id 3 (%x) : (f32) -> f32
    %e = sync.output(%o : %y) : f32
    %t = sync.tick(%e) : i32
    scf.yield
  }
  sync.halt
}
