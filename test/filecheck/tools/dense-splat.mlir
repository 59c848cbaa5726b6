// A splat `dense<v>` literal stays one element when its type is large (xDSL 0.74 builds every
// element first: a 60-byte line took 2 GiB, or died with "internal error: MemoryError"), so
// step-opt's own output of a large splat reads back; a type past 2 GiB is a located error.
// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %S/inputs/dense-splat-ok.mlir | step-opt - | filecheck %s

// CHECK:      arith.constant dense<1.000000e+00> : tensor<16384x32768xf32>
// CHECK-NEXT: arith.constant dense<-3> : tensor<1024x1024xi32>
// CHECK-NEXT: arith.constant dense<1.000000e+00> : tensor<1024x1024xf32>
// CHECK-NEXT: arith.constant dense<true> : tensor<4096x4096xi1>
// CHECK-NEXT: arith.constant dense<[1, 2]> : tensor<2xi32>
// CHECK-NEXT: arith.constant dense<7> : tensor<4xi32>

// expected-error@+1 {{dense literal of type tensor<1000000x1000000xf32> needs 4000000000000 bytes, more than the limit of 2147483648}}
%0 = arith.constant dense<1.0> : tensor<1000000x1000000xf32>

// -----

// expected-error@+1 {{dense literal of type tensor<16384x32769xf32> needs 2147549184 bytes, more than the limit of 2147483648}}
%0 = arith.constant dense<"0x0000803F"> : tensor<16384x32769xf32>
