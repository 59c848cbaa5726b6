// RUN: step-opt %s -p convert-sync-to-std --split-input-file --verify-diagnostics
// RUN: not step-opt %s -p 'convert-sync-to-std{target=wasm}' 2>&1 | filecheck %s --check-prefix=TARGET

// TARGET: step-opt: error: invalid options for pass 'convert-sync-to-std': unknown target 'wasm' (expected step-functions or modular)

sync.node @id(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  scf.while () : () -> () {
    %true = arith.constant true
    scf.condition(%true)
  } do {
    %x = sync.input(%i) : f32
    // expected-error @+1 {{convert-sync-to-std{target=step-functions}: sync.inst is not supported (non-modular target); run lus-inline-instances before convert-lus-to-sync}}
    %y = sync.inst @id 1 (%x) : (f32) -> f32
    %e = sync.output(%o : %y) : f32
    %t = sync.tick(%e) : i32
    scf.yield
  }
  sync.halt
}

// -----

// expected-error @+1 {{convert-sync-to-std: a sync.node needs exactly one scf.while main loop in its entry block (as produced by convert-lus-to-sync)}}
sync.node @noloop(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  %x = sync.input(%i) : f32
  %e = sync.output(%o : %x) : f32
  sync.halt
}

// -----

sync.node @twice(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  scf.while () : () -> () {
    %true = arith.constant true
    scf.condition(%true)
  } do {
    %x = sync.input(%i) : f32
    %c = arith.constant true
    scf.if %c {
      // expected-error @+1 {{convert-sync-to-std: sync.output must be in the main loop body, not nested}}
      %e = sync.output(%o : %x) : f32
      scf.yield
    }
    %t = sync.tick() : i32
    scf.yield
  }
  sync.halt
}
