// The DOT goes to stderr or to the file `out` names; stdout is the IR alone.
// RUN: step-opt %s -p step-print-dot -o /dev/null 2>&1 | filecheck %s
// RUN: rm -f %t.dot
// RUN: step-opt %s -p 'step-print-dot{out="%t.dot"}' 2>&1 | step-opt | filecheck %s --check-prefix=IR
// RUN: filecheck %s < %t.dot
// RUN: sh -c 'step-opt %s -p "step-print-dot{out=\"%t.dir/none/g.dot\"}" -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BADOUT

// CHECK:      digraph "g" {
// CHECK-NEXT:   rankdir=TB;
// CHECK-NEXT:   node [shape=box, fontname=monospace];
// CHECK-NEXT:   a0 [label="%ref", shape=ellipse];
// CHECK-NEXT:   n0 [label="%x\nlinear_offchip_load"];
// CHECK-NEXT:   n1 [label="%s\nselect_gen"];
// CHECK-NEXT:   n2 [label="%p\npartition"];
// CHECK-NEXT:   n3 [label="consume"];
// CHECK-NEXT:   n4 [label="linear_offchip_store"];
// CHECK-NEXT:   a0 -> n0 [label="[B] 1x1xi64"];
// CHECK-NEXT:   n0 -> n2 [label="[B] 16x64xbf16"];
// CHECK-NEXT:   n1 -> n2 [label="[B] sel<2>"];
// CHECK-NEXT:   n2 -> n3 [label="[B_0] 16x64xbf16"];
// CHECK-NEXT:   n2 -> n4 [label="[B_1] 16x64xbf16"];
// CHECK-NEXT: }
// IR:      step.graph @g {
// IR-NOT:  digraph
// IR:      step.linear_offchip_store %q

// BADOUT:      step-print-dot.mlir:1:1: error: step-print-dot: cannot write report '{{.*}}none/g.dot': No such file or directory
// BADOUT-NEXT: // The DOT goes to stderr
// BADOUT-NEXT: ^
// BADOUT-NEXT: exit=1
step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B], !step.tile<16x64xbf16>>
  %s = step.select_gen {choices = 2 : i64} : !step.stream<[B], !step.selector<2>>
  %p, %q = step.partition %x, %s : (!step.stream<[B], !step.tile<16x64xbf16>>, !step.stream<[B], !step.selector<2>>) -> (!step.stream<[B_0], !step.tile<16x64xbf16>>, !step.stream<[B_1], !step.tile<16x64xbf16>>)
  step.consume %p : !step.stream<[B_0], !step.tile<16x64xbf16>>
  step.linear_offchip_store %q {base_addr = 4096 : i64} : !step.stream<[B_1], !step.tile<16x64xbf16>>
}
