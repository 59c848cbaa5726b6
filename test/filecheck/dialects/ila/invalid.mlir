// RUN: step-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{ila.invoke: unknown accelerator function 'flexasr.conv' (known: flexasr.attention, flexasr.layernorm, flexasr.linear, flexasr.lstm, flexasr.maxpool, flexasr.meanpool, hlscnn.conv2d, vta.dense)}}
  %y = ila.invoke "flexasr.conv"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{ila.invoke: 'flexasr.linear' takes 3 operands, got 1}}
  %y = ila.invoke "flexasr.linear"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{ila.store: the stored tensor type must match the !ila.acc tensor type}}
  %h = ila.store %x : tensor<16xf32> -> !ila.acc<"flexasr", tensor<32xf32>>
  func.return
}

// -----

func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{!ila.acc: unknown target 'gpu'}}
  %h = "ila.store"(%x) : (tensor<16xf32>) -> !ila.acc<"gpu", tensor<16xf32>>
  func.return
}

// -----

func.func @f(%h: !ila.acc<"vta", tensor<16x16xf32>>) {
  // expected-error @+1 {{ila.compute: 'flexasr.maxpool' operates on flexasr data, got !ila.acc<"vta", tensor<16x16xf32>>}}
  %p = ila.compute "flexasr.maxpool"(%h) : (!ila.acc<"vta", tensor<16x16xf32>>) -> !ila.acc<"vta", tensor<8x16xf32>>
  func.return
}

// -----

func.func @f(%h: !ila.acc<"flexasr", tensor<16xf32>>) {
  // expected-error @+1 {{ila.load: the result type must match the !ila.acc tensor type}}
  %y = ila.load %h : !ila.acc<"flexasr", tensor<16xf32>> -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<2xf32>) {
  // expected-error @+1 {{ila.fragment: yielded types must match the results}}
  %y = ila.fragment "flexasr"(%x) : (tensor<2xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2xf32>):
    ila.yield %a : tensor<2xf32>
  }
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{'ila.wait_irq' expects parent op 'ila.fragment'}}
  ila.wait_irq
  func.return
}

// -----

func.func @f(%x: tensor<2xf32>) {
  %y = ila.fragment "flexasr"(%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    // expected-error @+1 {{ila.write expects a 32-bit address and 128-bit data}}
    ila.write 0x133000020, 0x1
    ila.yield %a : tensor<2xf32>
  }
  func.return
}
