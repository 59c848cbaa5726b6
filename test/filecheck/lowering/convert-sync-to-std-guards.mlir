// RUN: step-opt %s -p convert-lus-to-sync,convert-sync-to-std | filecheck %s
// RUN: step-opt %s -p 'convert-lus-to-sync,convert-sync-to-std{target=modular}' | filecheck %s --check-prefix=MOD

// Integer division on IREE follows dialects/semantics/integers.py (lowering/arith_guards.py):
// a zero divisor fails a cf.assert naming the op and its location, the divisor is made 1 at
// zero and at INT_MIN / -1 (no trap is left), unsigned ops need no overflow check, and
// fptosi converts an integral value (IREE's VM rounds to nearest).
lus.node @d(%a: i32, %b: i32, %r: f32) -> (i32, i32, i32) {
  %q = arith.divsi %a, %b : i32
  %m = arith.remui %a, %b : i32
  %t = arith.fptosi %r : f32 to i32
  lus.yield (%q : i32, %m : i32, %t : i32)
}

// CHECK-LABEL: func.func @d_step(%a: i32, %b: i32, %r: f32) -> (i32, i32, i32) {
// CHECK-NEXT:    %zero = arith.constant 0 : i32
// CHECK-NEXT:    %one = arith.constant 1 : i32
// CHECK-NEXT:    %is_zero = arith.cmpi eq, %b, %zero : i32
// CHECK-NEXT:    %nonzero = arith.cmpi ne, %b, %zero : i32
// CHECK-NEXT:    cf.assert %nonzero, "integer division by zero (arith.divsi at {{.*}}convert-sync-to-std-guards.mlir:9:3)"
// CHECK-NEXT:    %int_min = arith.constant -2147483648 : i32
// CHECK-NEXT:    %minus_one = arith.constant -1 : i32
// CHECK-NEXT:    %a_is_min = arith.cmpi eq, %a, %int_min : i32
// CHECK-NEXT:    %b_is_minus_one = arith.cmpi eq, %b, %minus_one : i32
// CHECK-NEXT:    %overflow = arith.andi %a_is_min, %b_is_minus_one : i1
// CHECK-NEXT:    %bad_divisor = arith.ori %is_zero, %overflow : i1
// CHECK-NEXT:    %divisor = arith.select %bad_divisor, %one, %b : i32
// CHECK-NEXT:    %q = arith.divsi %a, %divisor : i32
// CHECK:         cf.assert %nonzero_1, "integer division by zero (arith.remui at {{.*}}convert-sync-to-std-guards.mlir:10:3)"
// CHECK-NEXT:    %divisor_1 = arith.select %is_zero_1, %one_1, %b : i32
// CHECK-NEXT:    %m = arith.remui %a, %divisor_1 : i32
// CHECK-NEXT:    %zero_2 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %down = math.floor %r : f32
// CHECK-NEXT:    %up = math.ceil %r : f32
// CHECK-NEXT:    %negative = arith.cmpf olt, %r, %zero_2 : f32
// CHECK-NEXT:    %truncated = arith.select %negative, %up, %down : f32
// CHECK-NEXT:    %t = arith.fptosi %truncated : f32 to i32
// CHECK-NEXT:    func.return %q, %m, %t : i32, i32, i32

// @d_run cannot assert inside its one dispatch: it returns the first failing tick (-1: none),
// found by a min over the ticks (a reduction LLVM vectorizes).
// CHECK-LABEL: func.func @d_run(%a: tensor<?xi32>, %b: tensor<?xi32>, %r: tensor<?xf32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, i64) {
// CHECK:         %[[NONE:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %[[LOOP:.*]] = scf.for %t = {{.*}} iter_args({{.*}}, %failed = %[[NONE]]) -> (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, i64) {
// CHECK-NOT:       cf.assert
// CHECK:           %[[OK:.*]] = arith.andi %nonzero, %nonzero_1 : i1
// CHECK:           %[[NO:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:           %[[T:.*]] = arith.index_cast %t : index to i64
// CHECK:           %[[HERE:.*]] = arith.select %[[OK]], %[[NO]], %[[T]] : i64
// CHECK:           %[[UPD:.*]] = arith.minsi %failed, %[[HERE]] : i64
// CHECK:           scf.yield {{.*}}, %[[UPD]] : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, i64
// CHECK:         %[[IS_NONE:.*]] = arith.cmpi eq, %[[LOOP]], %{{.*}} : i64
// CHECK:         %[[FIRST:.*]] = arith.select %[[IS_NONE]], %{{.*}}, %[[LOOP]] : i64
// CHECK:         func.return {{.*}}, %[[FIRST]] : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, i64

// MOD-LABEL: func.func @d(%inst: i32) {
// MOD:         cf.assert %nonzero, "integer division by zero (arith.divsi at {{.*}}convert-sync-to-std-guards.mlir:9:3)"
// MOD:         %q = arith.divsi %{{.*}}, %divisor : i32
// MOD:         %t = arith.fptosi %truncated : f32 to i32

// A shift by the width or more gives 0 (shli, shrui) or the sign (shrsi: by width - 1).
lus.node @sh(%a: i32, %k: i32) -> (i32, i32) {
  %l = arith.shli %a, %k : i32
  %r = arith.shrsi %a, %k : i32
  lus.yield (%l : i32, %r : i32)
}
// CHECK-LABEL: func.func @sh_step(%a: i32, %k: i32) -> (i32, i32) {
// CHECK-NEXT:    %width = arith.constant 32 : i32
// CHECK-NEXT:    %top_bit = arith.constant 31 : i32
// CHECK-NEXT:    %too_far = arith.cmpi uge, %k, %width : i32
// CHECK-NEXT:    %amount = arith.select %too_far, %top_bit, %k : i32
// CHECK-NEXT:    %shifted = arith.shli %a, %amount : i32
// CHECK-NEXT:    %zero = arith.constant 0 : i32
// CHECK-NEXT:    %l = arith.select %too_far, %zero, %shifted : i32
// CHECK:         %amount_1 = arith.select %too_far_1, %top_bit_1, %k : i32
// CHECK-NEXT:    %r = arith.shrsi %a, %amount_1 : i32
// CHECK-NEXT:    func.return %l, %r : i32, i32
