lus.node @sum(%x: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %n : i32
  %n = arith.addi %s, %x : i32
  lus.yield (%n : i32)
}
lus.node @f(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %r = lus.instance @sum(%w) : (i32) -> (i32)
  %nc = lus.when not %c %x : i32
  %m = lus.merge %c %r %nc : i32
  lus.yield (%m : i32)
}
