// RUN: step-opt %s | filecheck %s
// RUN: step-opt %s | step-opt | filecheck %s
// RUN: step-opt %s --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC
// RUN: step-opt %s --print-op-generic | step-opt | filecheck %s

// CHECK-LABEL: sync.node @integr(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
// CHECK-GENERIC-LABEL: "sync.node"() <{sym_name = "integr", function_type = (!sync.sigin<i32>) -> !sync.sigout<i32>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%i: !sync.sigin<i32>, %o: !sync.sigout<i32>):
sync.node @integr(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
  %c0 = arith.constant 0 : i32
  %r = scf.while (%s = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %s : i32
  } do {
  ^bb0(%s2: i32):
    // CHECK:      %x = sync.input(%i) : i32
    // CHECK-GENERIC: %x = "sync.input"(%i) : (!sync.sigin<i32>) -> i32
    %x = sync.input(%i) : i32
    %n = arith.addi %s2, %x : i32
    // CHECK:      %e = sync.output(%o : %n) : i32
    // CHECK-GENERIC: %e = "sync.output"(%o, %n) : (!sync.sigout<i32>, i32) -> i32
    %e = sync.output(%o : %n) : i32
    // CHECK-NEXT: %t = sync.tick(%e) : i32
    // CHECK-GENERIC: %t = "sync.tick"(%e) : (i32) -> i32
    %t = sync.tick(%e) : i32
    // CHECK-NEXT: %n2 = sync.sync(%t, %n : i32)
    // CHECK-GENERIC: %n2 = "sync.sync"(%t, %n) : (i32, i32) -> i32
    %n2 = sync.sync(%t, %n : i32)
    // CHECK-NEXT: %u = sync.undef : f32
    // CHECK-GENERIC: %u = "sync.undef"() : () -> f32
    %u = sync.undef : f32
    %c = arith.constant true
    // CHECK:      %sel = sync.select %c %n2 %n : i32
    // CHECK-GENERIC: %sel = "sync.select"(%c, %n2, %n) : (i1, i32, i32) -> i32
    %sel = sync.select %c %n2 %n : i32
    // CHECK-NEXT: %q = sync.inst @integr 2 (%sel) : (i32) -> i32
    // CHECK-GENERIC: %q = "sync.inst"(%sel) <{callee = @integr, id = 2 : i64}> : (i32) -> i32
    %q = sync.inst @integr 2 (%sel) : (i32) -> i32
    // CHECK-NEXT: %t0 = sync.tick() : i32
    %t0 = sync.tick() : i32
    // CHECK-NEXT: %a, %b = sync.sync(%t0, %n : i32, %u : f32)
    %a, %b = sync.sync(%t0, %n : i32, %u : f32)
    scf.yield %q : i32
  }
  // CHECK: sync.halt
  // CHECK-GENERIC: "sync.halt"() : () -> ()
  sync.halt
}
