// A lus node without inputs: 0, 1, 2, ...
lus.node @count() -> (i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = lus.fby %c0 %next : i32
  %next = arith.addi %n, %c1 : i32
  lus.yield (%n : i32)
}
