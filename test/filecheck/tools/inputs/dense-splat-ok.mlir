// Input of dense-splat.mlir: splats of 2 GiB (the limit), 4 MiB and 16 MiB stay one element;
// a list and a small splat are as xDSL parses them.
%0 = arith.constant dense<1.0> : tensor<16384x32768xf32>
%1 = arith.constant dense<-3> : tensor<1024x1024xi32>
%2 = arith.constant dense<"0x0000803F"> : tensor<1024x1024xf32>
%3 = arith.constant dense<true> : tensor<4096x4096xi1>
%4 = arith.constant dense<[1, 2]> : tensor<2xi32>
%5 = arith.constant dense<7> : tensor<4xi32>
