// dense_resource blobs (dialects/resources.py): a splat stays a splat, a malformed
// blob is an error at the constant, and a chunk never sees another chunk's blobs.
// RUN: step-opt %s --split-input-file --verify-diagnostics
// RUN: step-opt %S/inputs/dense-resource-ok.mlir --split-input-file | filecheck %s

// CHECK-LABEL: func.func @splat
// A 4-byte blob for a 2 GiB tensor is one element, printed as MLIR's splat form.
// CHECK-NEXT:  arith.constant dense<1.000000e+00> : tensor<16384x32768xf32>
// CHECK:       // -----
// CHECK-LABEL: func.func @values
// CHECK-NEXT:  arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:       // -----
// The third chunk has no resources section: `w` of the second chunk is not its blob.
// CHECK-LABEL: func.func @no_section
// CHECK-NEXT:  arith.constant dense_resource<w> : tensor<2xf32>

func.func @bad_hex() -> tensor<2xf32> {
  // expected-error@+1 {{dense_resource<w>: the blob is not hexadecimal (character 'Z')}}
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x04000000000080ZZ0000803F" } }
#-}

// -----

func.func @odd_length() -> tensor<2xf32> {
  // expected-error@+1 {{dense_resource<w>: the blob has an odd number of hex digits (17)}}
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x040000000000803F0" } }
#-}

// -----

func.func @wrong_size() -> tensor<2xf32> {
  // expected-error@+1 {{dense_resource<w>: the blob has 5 bytes, tensor<2xf32> needs 8}}
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x040000000000803F00" } }
#-}

// -----

func.func @bad_alignment() -> tensor<2xf32> {
  // expected-error@+1 {{dense_resource<w>: the blob's alignment word is 3, not a power of two at most 65536}}
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x030000000000803F0000803F" } }
#-}

// -----

func.func @no_alignment_word() -> tensor<1xi8> {
  // expected-error@+1 {{dense_resource<w>: the blob has 2 bytes, fewer than its 4-byte alignment word}}
  %c = arith.constant dense_resource<w> : tensor<1xi8>
  func.return %c : tensor<1xi8>
}
{-#
  dialect_resources: { builtin: { w: "0x0400" } }
#-}

// -----

func.func @too_large() -> tensor<16384x32769xf32> {
  // expected-error@+1 {{dense_resource<w>: tensor<16384x32769xf32> needs 2147549184 bytes, more than the limit of 2147483648}}
  %c = arith.constant dense_resource<w> : tensor<16384x32769xf32>
  func.return %c : tensor<16384x32769xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x040000000000803F" } }
#-}
// CHECK:       // -----
// CHECK-LABEL: func.func @bf16
// CHECK-NEXT:  arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
