// RUN: step-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{sync.node inputs must be !sync.sigin, got i32}}
"sync.node"() <{sym_name = "n", function_type = (i32) -> ()}> ({
^bb0(%x: i32):
  "sync.halt"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{sync.node outputs must be !sync.sigout, got !sync.sigin<i32>}}
"sync.node"() <{sym_name = "n", function_type = () -> !sync.sigin<i32>}> ({
^bb0(%x: !sync.sigin<i32>):
  "sync.halt"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{sync.node entry block arguments must be the input then the output signals}}
"sync.node"() <{sym_name = "n", function_type = (!sync.sigin<i32>) -> ()}> ({
^bb0(%x: !sync.sigin<f32>):
  "sync.halt"() : () -> ()
}) : () -> ()

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  // expected-error @+1 {{sync.input result type f32 does not match the signal's element type i32}}
  %x = "sync.input"(%i) : (!sync.sigin<i32>) -> f32
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{sync.output value type f32 does not match the signal's element type i32}}
  %e = "sync.output"(%o, %f) : (!sync.sigout<i32>, f32) -> i32
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  %t = sync.tick() : i32
  %c = arith.constant 1 : i32
  // expected-error @+1 {{sync.sync results must have the types of its values}}
  %a = "sync.sync"(%t, %c) : (i32, i32) -> f32
  sync.halt
}

// -----

sync.node @n() -> () {
  // expected-error @+1 {{sync.inst instance id must be non-negative}}
  "sync.inst"() <{callee = @n, id = -1 : i64}> : () -> ()
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  %c = arith.constant 1 : i32
  // expected-error @+1 {{operand is used with type i1, but has been previously used or defined with type i32}}
  %s = sync.select %c %c %c : i32
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{operand is used with type i32, but has been previously used or defined with type f32}}
  %t = sync.tick(%c) : i32
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  // expected-error @+1 {{operand is used with type !sync.sigin<f32>, but has been previously used or defined with type !sync.sigin<i32>}}
  %x = sync.input(%i) : f32
  sync.halt
}

// -----

sync.node @n(%i: !sync.sigin<i32>) -> () {
  %x = sync.input(%i) : i32
  // expected-error @+1 {{sync.inst: no node named @missing}}
  %r = sync.inst @missing 1 (%x) : (i32) -> i32
  sync.halt
}

// -----

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
sync.node @n(%i: !sync.sigin<i32>) -> () {
  %x = sync.input(%i) : i32
  // expected-error @+1 {{sync.inst: @f is not a sync.node}}
  %r = sync.inst @f 1 (%x) : (i32) -> i32
  sync.halt
}

// -----

sync.node @id(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
  %x = sync.input(%i) : i32
  %e = sync.output(%o : %x) : i32
  %t = sync.tick(%e) : i32
  sync.halt
}
sync.node @n(%i: !sync.sigin<i32>) -> () {
  %x = sync.input(%i) : i32
  // expected-error @+1 {{sync.inst: operand types (i32, i32) do not match the inputs of @id (i32)}}
  %r = sync.inst @id 1 (%x, %x) : (i32, i32) -> i32
  sync.halt
}

// -----

sync.node @id(%i: !sync.sigin<i32>) -> (%o: !sync.sigout<i32>) {
  %x = sync.input(%i) : i32
  %e = sync.output(%o : %x) : i32
  %t = sync.tick(%e) : i32
  sync.halt
}
sync.node @n(%i: !sync.sigin<i32>) -> () {
  %x = sync.input(%i) : i32
  // expected-error @+1 {{sync.inst: result types (f32) do not match the outputs of @id (i32)}}
  %r = sync.inst @id 1 (%x) : (i32) -> f32
  sync.halt
}
