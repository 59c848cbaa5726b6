// convert-ila-to-commands (the lowering after isel) bounds what a type can make it emit: a pooled
// tensor needs at most 1024 chunks of 255 vectors, and one chunk fits FlexASR's 1 MiB global buffer
// (⌈T/16⌉·16·16·vectors bytes) with a 16-bit timestep count.  Errors are at the ila.invoke.
// RUN: step-opt %s --split-input-file --verify-diagnostics -p convert-ila-to-commands
// RUN: sh -c 'step-opt %s --split-input-file -p convert-ila-to-commands -o /dev/null; echo "exit=$?"' 2>&1 | filecheck %s
// CHECK: isel-commands-limits.mlir:11:3: error: flexasr pool: hidden size 68719476736 needs 16843010 chunks of at most 255 vectors, more than 1024
// CHECK: exit=1

func.func @wide(%x: tensor<2x68719476736xf32>) -> tensor<1x68719476736xf32> {
  // expected-error @+1 {{flexasr pool: hidden size 68719476736 needs 16843010 chunks of at most 255 vectors, more than 1024}}
  %y = ila.invoke "flexasr.maxpool"(%x) : (tensor<2x68719476736xf32>) -> tensor<1x68719476736xf32>
  func.return %y : tensor<1x68719476736xf32>
}
// -----
func.func @long(%x: tensor<131072x16xf32>) -> tensor<65536x16xf32> {
  // expected-error @+1 {{flexasr pool: 131072 timesteps of 16 values exceed the 1 MiB global buffer (or the 16-bit timestep count)}}
  %y = ila.invoke "flexasr.maxpool"(%x) : (tensor<131072x16xf32>) -> tensor<65536x16xf32>
  func.return %y : tensor<65536x16xf32>
}
// -----
// 4096 timesteps of 255 vectors: ⌈4096/16⌉·16·16·255 = 16 711 680 bytes > 1 MiB.
func.func @deep(%x: tensor<4096x4080xf32>) -> tensor<2048x4080xf32> {
  // expected-error @+1 {{flexasr pool: 4096 timesteps of 4080 values exceed the 1 MiB global buffer (or the 16-bit timestep count)}}
  %y = ila.invoke "flexasr.maxpool"(%x) : (tensor<4096x4080xf32>) -> tensor<2048x4080xf32>
  func.return %y : tensor<2048x4080xf32>
}
// -----
// 256 timesteps of 255 vectors: 256·16·255 = 1 044 480 bytes ≤ 1 MiB: lowered.
func.func @fits(%x: tensor<256x4080xf32>) -> tensor<128x4080xf32> {
  %y = ila.invoke "flexasr.maxpool"(%x) : (tensor<256x4080xf32>) -> tensor<128x4080xf32>
  func.return %y : tensor<128x4080xf32>
}
