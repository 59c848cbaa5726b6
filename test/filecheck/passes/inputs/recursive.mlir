// Input of lus-inline-instances.mlir: mutually recursive nodes.
lus.node @a(%x: i32) -> (i32) {
  %r = lus.instance @b(%x) : (i32) -> i32
  lus.yield (%r : i32)
}
lus.node @b(%x: i32) -> (i32) {
  // expected-error @+1 {{recursive instance: @a -> @b -> @a}}
  %r = lus.instance @a(%x) : (i32) -> i32
  lus.yield (%r : i32)
}
