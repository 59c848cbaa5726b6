// An unknown step.apply function names the library's closest functions (difflib)
// and the generated library page (issue 28 item 3).
// RUN: step-opt %s --split-input-file --verify-diagnostics
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<16x64xf32>>
  %y = step.map %x : !step.stream<[4, 1], !step.tile<16x64xf32>> -> !step.stream<[4, 1], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    // expected-error @+1 {{step.apply: unknown function 'relu'; did you mean 'gelu', 'silu'? (the library: docs/dialects/step-functions.md)}}
    %e = step.apply "relu"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  step.consume %y : !step.stream<[4, 1], !step.tile<16x64xf32>>
}
// -----
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<16x64xf32>>
  %y = step.map %x : !step.stream<[4, 1], !step.tile<16x64xf32>> -> !step.stream<[4, 1], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    // expected-error @+1 {{unknown function 'mul_scaler[2.0]'; did you mean 'mul_scalar[...]', 'lt_scalar[...]', 'le_scalar[...]', 'sub_scalar[...]'}}
    %e = step.apply "mul_scaler[2.0]"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  step.consume %y : !step.stream<[4, 1], !step.tile<16x64xf32>>
}
// -----
step.graph @g {
  %x = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4, 1>, stride = array<i64: 1, 1>, tiled_out_shape = array<i64: 4, 1>} : () -> !step.stream<[4, 1], !step.tile<16x64xf32>>
  %y = step.map %x : !step.stream<[4, 1], !step.tile<16x64xf32>> -> !step.stream<[4, 1], !step.tile<16x64xf32>> {
  ^bb0(%t: !step.tile<16x64xf32>):
    // expected-error @+1 {{unknown function 'qqqqqqq' (the library: docs/dialects/step-functions.md)}}
    %e = step.apply "qqqqqqq"(%t) : (!step.tile<16x64xf32>) -> !step.tile<16x64xf32>
    step.yield %e : !step.tile<16x64xf32>
  }
  step.consume %y : !step.stream<[4, 1], !step.tile<16x64xf32>>
}
