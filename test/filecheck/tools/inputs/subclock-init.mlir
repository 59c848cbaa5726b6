lus.node @f(%x: i32, %c: i1) -> (i32) {
  %w = lus.when %c %x : i32
  %f = lus.fby %w %n : i32
  %n = arith.addi %f, %w : i32
  lus.yield (%x : i32)
}
