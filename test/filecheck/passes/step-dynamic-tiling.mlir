// RUN: step-opt %s -p step-dynamic-tiling --split-input-file --verify-diagnostics | filecheck %s

// One expert's tokens [N], statically tiled by 4 (zero-padded, padding flags
// dropped) and stacked into 4x8 tiles, become one ?x8 tile (none if N = 0);
// everything downstream is re-typed.
// CHECK-LABEL: step.graph @expert {
// CHECK:         %rs = step.promote %flat : (!step.stream<[N], !step.tile<1x8xbf16>>) -> !step.stream<["Min(1, N)", N], !step.tile<1x8xbf16>>
// CHECK-NEXT:    %acc = step.accum %rs {rank = 1 : i64} : !step.stream<["Min(1, N)", N], !step.tile<1x8xbf16>> -> !step.stream<["Min(1, N)"], !step.tile<?x8xf32>> update {
// CHECK-NEXT:    ^bb0(%{{.*}}: !step.tile<1x8xbf16>, %{{.*}}: !step.tile<?x8xf32>):
// CHECK-NEXT:      %{{.*}} = step.apply "retile_row"(%{{.*}}, %{{.*}}) : (!step.tile<?x8xf32>, !step.tile<1x8xbf16>) -> !step.tile<?x8xf32>
// CHECK:           %{{.*}} = step.apply "zero"() : () -> !step.tile<?x8xf32>
// CHECK:         %act = step.map %acc : !step.stream<["Min(1, N)"], !step.tile<?x8xf32>> -> !step.stream<["Min(1, N)"], !step.tile<?x8xf32>> {
// CHECK:           %{{.*}} = step.apply "silu"(%{{.*}}) : (!step.tile<?x8xf32>) -> !step.tile<?x8xf32>
// CHECK:         step.linear_offchip_store %act {base_addr = 0 : i64} : !step.stream<["Min(1, N)"], !step.tile<?x8xf32>>
// CHECK-NOT:     step.reshape
  step.graph @expert {
  ^bb0(%tok_ref: !step.stream<[N], !step.tile<1x1xi64>>):
    %tok = step.linear_offchip_load %tok_ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[N], !step.tile<1x1xi64>>) -> !step.stream<[N, 1], !step.tile<1x8xbf16>>
    %flat = step.flatten %tok {min = 0 : i64, max = 1 : i64} : (!step.stream<[N, 1], !step.tile<1x8xbf16>>) -> !step.stream<[N], !step.tile<1x8xbf16>>
    %rs, %0 = step.reshape %flat {split_dim = 0 : i64, chunk_size = 4 : i64} : (!step.stream<[N], !step.tile<1x8xbf16>>) -> (!step.stream<["ceiling(N/4)", 4], !step.tile<1x8xbf16>>, !step.stream<["ceiling(N/4)", 4], i1>)
    step.consume %0 : !step.stream<["ceiling(N/4)", 4], i1>
    %acc = step.accum %rs {rank = 1 : i64} : !step.stream<["ceiling(N/4)", 4], !step.tile<1x8xbf16>> -> !step.stream<["ceiling(N/4)"], !step.tile<4x8xf32>> update {
    ^bb0(%1: !step.tile<1x8xbf16>, %2: !step.tile<4x8xf32>):
      %3 = step.apply "retile_row"(%2, %1) : (!step.tile<4x8xf32>, !step.tile<1x8xbf16>) -> !step.tile<4x8xf32>
      step.yield %3 : !step.tile<4x8xf32>
    } init {
      %4 = step.apply "zero"() : () -> !step.tile<4x8xf32>
      step.yield %4 : !step.tile<4x8xf32>
    }
    %act = step.map %acc : !step.stream<["ceiling(N/4)"], !step.tile<4x8xf32>> -> !step.stream<["ceiling(N/4)"], !step.tile<4x8xf32>> {
    ^bb0(%5: !step.tile<4x8xf32>):
      %6 = step.apply "silu"(%5) : (!step.tile<4x8xf32>) -> !step.tile<4x8xf32>
      step.yield %6 : !step.tile<4x8xf32>
    }
    step.linear_offchip_store %act {base_addr = 0 : i64} : !step.stream<["ceiling(N/4)"], !step.tile<4x8xf32>>
  }

// -----

// Nothing to tile dynamically: left alone, with a remark.
// CHECK-LABEL: step.graph @plain {
// expected-remark @+1 {{step-dynamic-tiling: nothing to do: no retile_row accumulator over a step.reshape whose padding is dropped}}
step.graph @plain {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<16x16xf32>>
  step.linear_offchip_store %x {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<16x16xf32>>
}
