// Input of dense-resource.mlir: chunks whose blobs are well formed.
func.func @splat() -> tensor<16384x32768xf32> {
  %c = arith.constant dense_resource<w> : tensor<16384x32768xf32>
  func.return %c : tensor<16384x32768xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x040000000000803F" } }
#-}

// -----

func.func @values() -> tensor<2xf32> {
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
{-#
  dialect_resources: { builtin: { w: "0x040000000000803F00000040" } }
#-}

// -----

func.func @no_section() -> tensor<2xf32> {
  %c = arith.constant dense_resource<w> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// bf16 (no numpy type) is materialized from its bytes too: 0x3F80 = 1.0, 0x4000 = 2.0.
func.func @bf16() -> tensor<2xbf16> {
  %c = arith.constant dense_resource<w> : tensor<2xbf16>
  func.return %c : tensor<2xbf16>
}
{-#
  dialect_resources: { builtin: { w: "0x04000000803F0040" } }
#-}
