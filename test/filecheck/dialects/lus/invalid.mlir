// RUN: step-opt %s --split-input-file --verify-diagnostics

lus.node @n(%a: i32) -> (i32) {
  %c = arith.constant 0 : i64
  // expected-error @+1 {{operand is used with type i32, but has been previously used or defined with type i64}}
  %r = lus.fby %a %c : i32
  lus.yield (%r : i32)
}

// -----

lus.node @n(%a: i32) -> (i32) {
  // expected-error @+1 {{lus.yield outputs must match the node's output types: expected (i32), got (i32, i32)}}
  lus.yield (%a : i32, %a : i32)
}

// -----

lus.node @n state(%s: i32) (%a: i32) -> (i32) {
  // expected-error @+1 {{lus.yield state must match the node's 1 state argument(s): expected (i32), got ()}}
  lus.yield (%a : i32)
}

// -----

// expected-error @+1 {{a lus.node body must end with lus.yield}}
lus.node @n(%a: i32) -> (i32) {
  %c = arith.constant 0 : i32
  sync.halt
}

// -----

lus.node @n(%a: f32) -> (f32) {
  // expected-error @+1 {{invalid k-periodic word '1(2)'}}
  %w = lus.when "1(2)" %a : f32
  lus.yield (%w : f32)
}

// -----

lus.node @n(%a: f32) -> (f32) {
  // expected-error @+1 {{invalid k-periodic word '01'}}
  %b = lus.kperiodic "01" : i1
  lus.yield (%a : f32)
}

// -----

lus.node @n(%a: f32) -> (f32) {
  // expected-error @+1 {{invalid k-periodic word '1()'}}
  %m = lus.merge "1()" %a %a : f32
  lus.yield (%m : f32)
}

// -----

lus.node @n(%a: f32, %c: i32) -> (f32) {
  // expected-error @+1 {{operand is used with type i1, but has been previously used or defined with type i32}}
  %w = lus.when %c %a : f32
  lus.yield (%w : f32)
}

// -----

lus.node @n(%a: f32, %c: i1) -> (f32) {
  // expected-error @+1 {{lus.merge does not take 'not'}}
  %m = lus.merge not %c %a %a : f32
  lus.yield (%m : f32)
}

// -----

lus.node @n(%a: i32) -> (i32) {
  // expected-error @+1 {{lus.instance: no node named @missing}}
  %r = lus.instance @missing(%a) : (i32) -> i32
  lus.yield (%r : i32)
}

// -----

lus.node @callee(%x: f32) -> (f32) {
  lus.yield (%x : f32)
}
lus.node @n(%a: i32) -> (i32) {
  // expected-error @+1 {{lus.instance: operand types (i32) do not match the inputs of @callee (f32)}}
  %r = lus.instance @callee(%a) : (i32) -> f32
  lus.yield (%a : i32)
}

// -----

lus.node @callee(%x: f32) -> (f32) {
  lus.yield (%x : f32)
}
lus.node @n(%a: f32) -> (i32) {
  // expected-error @+1 {{lus.instance: result types (i32) do not match the outputs of @callee (f32)}}
  %r = lus.instance @callee(%a) : (f32) -> i32
  lus.yield (%r : i32)
}

// -----

func.func @notanode(%x: f32) -> f32 {
  func.return %x : f32
}
lus.node @n(%a: f32) -> (f32) {
  // expected-error @+1 {{lus.instance: @notanode is not a lus.node}}
  %r = lus.instance @notanode(%a) : (f32) -> f32
  lus.yield (%r : f32)
}

// -----

func.func @f(%a: i32) -> i32 {
  // expected-error @+1 {{'lus.yield' expects parent op 'lus.node'}}
  lus.yield (%a : i32)
}

// -----

// expected-error @+1 {{node block arguments must be the static parameters, the state arguments, then the inputs of the function type}}
"lus.node"() <{sym_name = "g", function_type = (i32) -> f32, num_static = 0 : i64, num_state = 0 : i64}> ({
^bb0(%x: f32):
  "lus.yield"(%x) <{operandSegmentSizes = array<i32: 0, 1>}> : (f32) -> ()
}) : () -> ()

// -----

lus.node @n(%a: f32, %c: i1) -> (f32) {
  // expected-error @+1 {{lus.when needs exactly one of a condition operand or a k-periodic word}}
  %w = "lus.when"(%c, %a) <{word = "1(0)", operandSegmentSizes = array<i32: 1, 1>}> : (i1, f32) -> f32
  lus.yield (%w : f32)
}

// -----

lus.node @n(%a: f32, %c: i1) -> (i32) {
  // expected-error @+1 {{lus.when result type must equal the input type}}
  %w = "lus.when"(%c, %a) <{operandSegmentSizes = array<i32: 1, 1>}> : (i1, f32) -> i32
  lus.yield (%w : i32)
}

// -----

func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'lus.fby' expects parent op 'lus.node'}}
  %s = lus.fby %c0 %a : i32
  func.return %s : i32
}

// -----

func.func @f(%a: i32) -> i32 {
  // expected-error @+1 {{'lus.pre' expects parent op 'lus.node'}}
  %p = lus.pre %a : i32
  func.return %p : i32
}

// -----

func.func @f(%a: i32, %c: i1) -> i32 {
  // expected-error @+1 {{'lus.when' expects parent op 'lus.node'}}
  %w = lus.when %c %a : i32
  func.return %w : i32
}

// -----

func.func @f(%a: i32, %b: i32, %c: i1) -> i32 {
  // expected-error @+1 {{'lus.merge' expects parent op 'lus.node'}}
  %m = lus.merge %c %a %b : i32
  func.return %m : i32
}

// -----

func.func @f() -> i1 {
  // expected-error @+1 {{'lus.kperiodic' expects parent op 'lus.node'}}
  %k = lus.kperiodic "1(0)" : i1
  func.return %k : i1
}

// -----

lus.node @id(%x: i32) -> (i32) {
  lus.yield (%x : i32)
}
func.func @f(%a: i32) -> i32 {
  // expected-error @+1 {{'lus.instance' expects parent op 'lus.node'}}
  %r = lus.instance @id(%a) : (i32) -> i32
  func.return %r : i32
}

// -----

// expected-error @+1 {{lus.node has 2 static parameter(s) but its function type has only 1 input(s)}}
"lus.node"() <{sym_name = "g", function_type = (i32) -> i32, num_static = 2 : i64, num_state = 0 : i64}> ({
^bb0(%x: i32):
  "lus.yield"(%x) <{operandSegmentSizes = array<i32: 0, 1>}> : (i32) -> ()
}) : () -> ()

// -----

// expected-error @+1 {{lus.node has 3 state argument(s) but its block has 1 argument(s) beyond the function type's inputs}}
"lus.node"() <{sym_name = "g", function_type = (i32) -> i32, num_static = 0 : i64, num_state = 3 : i64}> ({
^bb0(%s: i32, %x: i32):
  "lus.yield"(%x) <{operandSegmentSizes = array<i32: 0, 1>}> : (i32) -> ()
}) : () -> ()

// -----

lus.node @callee(%x: i32) -> (i32) {
  lus.yield (%x : i32)
}
lus.node @caller(%x: i32) -> (i32) {
  // expected-error @+1 {{lus.instance: operand types (i32, i32) do not match the inputs of @callee (i32)}}
  %r = lus.instance @callee(%x, %x) : (i32, i32) -> i32
  lus.yield (%r : i32)
}
