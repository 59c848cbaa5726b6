// step-opt reads a Kind 2 program with --const NAME=VALUE (free constants) and
// --set-capacity K (set and map slots), checked as step-run and lus-translate check them.

// A[i] = x + i over N = 3 elements: three i32 results, x + 0, x + 1, x + 2.
// RUN: step-opt %S/inputs/kind2-free-const.lus --const N=3 | filecheck %s --check-prefix=N3
// N3:      lus.node @Ramp(%x: i32) -> (i32, i32, i32) attributes {lustre.outputs = ["A[0]", "A[1]", "A[2]"]} {
// N3:      lus.yield
// N3-SAME: : i32, {{.*}} : i32, {{.*}} : i32)

// The same program on stdin, --format lustre, N = 2.
// RUN: step-opt --format lustre --const N=2 < %S/inputs/kind2-free-const.lus | filecheck %s --check-prefix=N2
// N2: lus.node @Ramp(%x: i32) -> (i32, i32) attributes {lustre.outputs = ["A[0]", "A[1]"]} {

// Without a value the array has no size: located, exit 1.
// RUN: sh -c 'step-opt %S/inputs/kind2-free-const.lus; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOVAL
// NOVAL:      kind2-free-const.lus:4:35: error: unsupported construct: arrays sized by a free constant without a value (step-run --const NAME=VALUE gives one) or by an input ('N')
// NOVAL-NEXT: {{^}}node Ramp(x: int) returns (A: int^N);
// NOVAL:      exit=1

// A value outside the constant's subrange type: located at its declaration, exit 1.
// RUN: sh -c 'step-opt %S/inputs/kind2-free-const.lus --const N=0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SUB
// SUB:      kind2-free-const.lus:3:7: error: --const N=0: outside the subrange type of 'N'
// SUB:      exit=1

// --set-capacity 2: the set is its header and two slots (has, key), and its
// capacity property says 2 elements; the default is 8 slots.
// RUN: step-opt %S/inputs/kind2-set.lus --set-capacity 2 | filecheck %s --check-prefix=K2
// K2:      lus.node @S(%x: i32) -> (i32, i1, i32, i1, i32) attributes {lustre.outputs = ["s", "s.has0", "s.key0", "s.has1", "s.key1"], lustre.collections =
// K2-SAME: ["set", 2 : i64,
// K2: "capacity of set 's' (2 elements)"
// RUN: step-opt %S/inputs/kind2-set.lus | filecheck %s --check-prefix=K8
// K8:      lus.node @S(%x: i32) -> (i32, i1, i32, i1, i32, i1, i32, i1, i32, i1, i32, i1, i32, i1, i32, i1, i32) attributes {lustre.outputs = ["s", "s.has0", "s.key0", {{.*}} "s.has7", "s.key7"],
// K8-SAME: ["set", 8 : i64,

// Bad values and MLIR input are one-line usage errors, exit 2.
// RUN: sh -c 'step-opt %S/inputs/kind2-set.lus --set-capacity 0; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CAP0
// CAP0:      step-opt: error: --set-capacity: the set capacity must be 1 to 64, not 0
// CAP0-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/kind2-set.lus --set-capacity 65; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CAP65
// CAP65:      step-opt: error: --set-capacity: the set capacity must be 1 to 64, not 65
// CAP65-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/kind2-set.lus --set-capacity 0x8; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CAPX
// CAPX:      step-opt: error: argument --set-capacity: invalid integer value: '0x8' (expected decimal digits)
// CAPX-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/kind2-free-const.lus --const N; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOEQ
// NOEQ:      step-opt: error: --const: 'N' is not NAME=VALUE
// NOEQ-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/kind2-free-const.lus --const N=3x; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADV
// BADV:      step-opt: error: --const: N: '3x' is not an integer, true, false or a decimal real
// BADV-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/kind2-free-const.lus --const N=2 --const N=3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE:      step-opt: error: --const: N is given twice
// TWICE-NEXT: exit=2
// RUN: sh -c 'step-opt %S/inputs/counter.mlir --const N=3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MLIR
// MLIR:      step-opt: error: --const: only for Lustre input (a .lus or .ept file, or --format lustre, lustre-v6 or heptagon)
// MLIR-NEXT: exit=2
// RUN: sh -c 'step-opt --format mlir %S/inputs/kind2-set.lus --set-capacity 4; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MLIRK
// MLIRK:      step-opt: error: --set-capacity: only for Lustre input (a .lus or .ept file, or --format lustre, lustre-v6 or heptagon)
// MLIRK-NEXT: exit=2
