// RUN: step-opt %s --split-input-file -p step-infer-shapes --verify-diagnostics
// Contradictions between written and inferred dims name the dimension.

step.graph @reshape {
^bb0(%x: !step.stream<[B], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 0 of result #0: inferred ceiling(B/16), written B/8}}
  %d, %p = step.reshape %x {split_dim = 0 : i64, chunk_size = 16 : i64} : (!step.stream<[B], !step.tile<1x64xf32>>) -> (!step.stream<["B/8", 16], !step.tile<1x64xf32>>, !step.stream<[_, _], i1>)
  step.consume %d : !step.stream<["B/8", 16], !step.tile<1x64xf32>>
  step.consume %p : !step.stream<[_, _], i1>
}

// -----

step.graph @flatten {
^bb0(%x: !step.stream<[B, 8], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 0 of result: inferred 8*B, written 4*B}}
  %f = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[B, 8], !step.tile<1x64xf32>>) -> !step.stream<["4*B"], !step.tile<1x64xf32>>
  step.consume %f : !step.stream<["4*B"], !step.tile<1x64xf32>>
}

// -----

// Promote's new dim is 1 only for a non-empty stream.
step.graph @promote {
^bb0(%x: !step.stream<[N], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 0 of result: inferred Min(1, N), written 1}}
  %p = step.promote %x : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[1, N], !step.tile<1x64xf32>>
  step.consume %p : !step.stream<[1, N], !step.tile<1x64xf32>>
}

// -----

// A ragged dim is not a regular one.
step.graph @ragged {
^bb0(%r: !step.stream<[B, ?L], !step.tile<1x1xi64>>):
  // expected-error @+1 {{dimension 1 of result: inferred ?L, written L}}
  %t = step.random_offchip_load %r {base_addr = 0 : i64, tiled_in_shape = array<i64: 8, 1>} : (!step.stream<[B, ?L], !step.tile<1x1xi64>>) -> !step.stream<[B, L], !step.tile<32x64xbf16>>
  step.consume %t : !step.stream<[B, L], !step.tile<32x64xbf16>>
}

// -----

step.graph @eager_merge {
^bb0(%a: !step.stream<[B_0, 4], !step.tile<1x64xf32>>, %b: !step.stream<[B_1, 4], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 0 of result #1: inferred B_0 + B_1, written B}}
  %d, %s = step.eager_merge %a, %b : (!step.stream<[B_0, 4], !step.tile<1x64xf32>>, !step.stream<[B_1, 4], !step.tile<1x64xf32>>) -> (!step.stream<[_, 4], !step.tile<1x64xf32>>, !step.stream<[B], !step.selector<2>>)
  step.consume %d : !step.stream<[_, 4], !step.tile<1x64xf32>>
  step.consume %s : !step.stream<[B], !step.selector<2>>
}

// -----

// Operands that contradict each other.
step.graph @partition_sel {
^bb0(%x: !step.stream<[B, 4], !step.tile<1x64xf32>>, %s: !step.stream<[C], !step.selector<2>>):
  // expected-error @+1 {{dimension 0 of sel is C but dimension 0 of input is B}}
  %a, %b = step.partition %x, %s : (!step.stream<[B, 4], !step.tile<1x64xf32>>, !step.stream<[C], !step.selector<2>>) -> (!step.stream<[_, 4], !step.tile<1x64xf32>>, !step.stream<[_, 4], !step.tile<1x64xf32>>)
  step.consume %a : !step.stream<[_, 4], !step.tile<1x64xf32>>
  step.consume %b : !step.stream<[_, 4], !step.tile<1x64xf32>>
}

// -----

step.graph @zip {
^bb0(%a: !step.stream<[N], !step.tile<1x64xf32>>, %b: !step.stream<[M], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 0 of rhs is M but dimension 0 of lhs is N}}
  %z = step.zip %a, %b : (!step.stream<[N], !step.tile<1x64xf32>>, !step.stream<[M], !step.tile<1x64xf32>>) -> !step.stream<[_], !step.tuple<!step.tile<1x64xf32>, !step.tile<1x64xf32>>>
  step.consume %z : !step.stream<[_], !step.tuple<!step.tile<1x64xf32>, !step.tile<1x64xf32>>>
}

// -----

step.graph @expand {
^bb0(%q: !step.stream<[B, K], !step.tile<8x64xf32>>, %k: !step.stream<[B, ?L], !step.tile<32x64xf32>>):
  // expected-error @+1 {{dimension 1 of input must be 1 to expand, got K}}
  %e = step.expand %q, %k {rank = 1 : i64} : (!step.stream<[B, K], !step.tile<8x64xf32>>, !step.stream<[B, ?L], !step.tile<32x64xf32>>) -> !step.stream<[_, _], !step.tile<8x64xf32>>
  step.consume %e : !step.stream<[_, _], !step.tile<8x64xf32>>
}

// -----

step.graph @bufferize {
^bb0(%x: !step.stream<[4, B, 8], !step.tile<16x16xf32>>):
  // expected-error @+1 {{dimension 0 of result buffer: inferred B, written 2*B}}
  %b = step.bufferize %x {rank = 2 : i64} : (!step.stream<[4, B, 8], !step.tile<16x16xf32>>) -> !step.stream<[_], !step.buffer<["2*B", _], !step.tile<16x16xf32>>>
  step.consume %b : !step.stream<[_], !step.buffer<["2*B", _], !step.tile<16x16xf32>>>
}

// -----

// The placeholder stands for a whole dimension.
step.graph @partial {
^bb0(%x: !step.stream<[N], !step.tile<1x64xf32>>):
  // expected-error @+1 {{dimension 1 of result: the placeholder _ must be a whole dimension}}
  %r = step.repeat %x {count = 4 : i64} : (!step.stream<[N], !step.tile<1x64xf32>>) -> !step.stream<[N, "_ + 1"], !step.tile<1x64xf32>>
  step.consume %r : !step.stream<[N, "_ + 1"], !step.tile<1x64xf32>>
}

// -----

// A cycle through which nothing is known stays unknown.
step.graph @cycle {
  // expected-error @+1 {{cannot infer dimension 0 of result #0: it depends on values whose dimensions are unknown}}
  %a, %b = step.broadcast %b : (!step.stream<[_], !step.tile<1x64xf32>>) -> (!step.stream<[_], !step.tile<1x64xf32>>, !step.stream<[_], !step.tile<1x64xf32>>)
  step.consume %a : !step.stream<[_], !step.tile<1x64xf32>>
}

// -----

// Graph arguments are the program's inputs.
// expected-error @+1 {{graph argument #0 has a placeholder dimension}}
step.graph @argument {
^bb0(%x: !step.stream<[_], !step.tile<1x64xf32>>):
  step.consume %x : !step.stream<[_], !step.tile<1x64xf32>>
}
