// RUN: step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}' %s | filecheck %s
// RUN: step-opt -p 'convert-step-to-runtime{depth=3}' %s | filecheck %s --check-prefix=DEPTH
// RUN: sh -c 'step-opt -p "convert-step-to-runtime{preset=bad}" %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: step-opt -p 'convert-step-to-runtime{preset=swiglu-hdl}' %s | step-opt -p 'convert-step-to-runtime' | filecheck %s
// RUN: sed 's/^builtin.module {/builtin.module attributes {target.fabric = #target.fabric<"step-eval", {base_depth = 4 : i64}>} {/' %s | step-opt -p 'convert-step-to-runtime' | filecheck %s --check-prefix=ATTR

// Contexts are numbered in graph order; the zip is fused into the map.
// The module records the fabric it was placed for; placing it again without a
// preset reads that attribute (the second RUN line: same depth, same contexts).
// CHECK:      builtin.module attributes {target.fabric = #target.fabric<"swiglu-hdl">} {
// CHECK-NEXT: step.graph @g attributes {runtime.depth = 1 : i64} {
// CHECK-NEXT:   %x = step.linear_offchip_load {name = "x", runtime.context = 0 : i64
// CHECK-NEXT:   %a, %b = step.broadcast %x {runtime.context = 1 : i64}
// CHECK-NEXT:   %z = step.zip %a, %b :
// CHECK-NEXT:   %y = step.map %z {name = "mm", compute_bw = 64 : i64, runtime.context = 2 : i64}
// CHECK:        step.linear_offchip_store %y {name = "st", runtime.context = 3 : i64

// DEPTH:      builtin.module attributes {target.fabric = #target.fabric<"step-eval">} {
// DEPTH-NEXT: step.graph @g attributes {runtime.depth = 3 : i64}

// Without a preset option, the module's #target.fabric (its changed base depth too).
// ATTR:      builtin.module attributes {target.fabric = #target.fabric<"step-eval", {base_depth = 4 : i64}>} {
// ATTR-NEXT: step.graph @g attributes {runtime.depth = 4 : i64}

// BAD: step-opt: error: invalid options for pass 'convert-step-to-runtime': unknown hardware preset 'bad' (choose from sn40l, step-eval, swiglu-hdl)
// BAD-NEXT: exit=2

builtin.module {
  step.graph @g {
    %x = step.linear_offchip_load {name = "x", base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
    %a, %b = step.broadcast %x : (!step.stream<[4], !step.tile<16x16xf32>>) -> (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>)
    %z = step.zip %a, %b : (!step.stream<[4], !step.tile<16x16xf32>>, !step.stream<[4], !step.tile<16x16xf32>>) -> !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>>
    %y = step.map %z {name = "mm", compute_bw = 64 : i64} : !step.stream<[4], !step.tuple<!step.tile<16x16xf32>, !step.tile<16x16xf32>>> -> !step.stream<[4], !step.tile<16x16xf32>> {
    ^bb0(%p: !step.tile<16x16xf32>, %q: !step.tile<16x16xf32>):
      %s = step.apply "matmul"(%p, %q) : (!step.tile<16x16xf32>, !step.tile<16x16xf32>) -> !step.tile<16x16xf32>
      step.yield %s : !step.tile<16x16xf32>
    }
    step.linear_offchip_store %y {name = "st", base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
  }
}
