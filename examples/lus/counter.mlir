// A resettable counter: n = if reset then 0 else (0 fby n) + 1.
lus.node @counter(%reset: i1) -> (i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %prev = lus.fby %c0 %n : i32
  %inc = arith.addi %prev, %c1 : i32
  %n = arith.select %reset, %c0, %inc : i32
  lus.yield (%n : i32)
}
