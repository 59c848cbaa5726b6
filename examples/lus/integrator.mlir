// The integrator of the lus seed: the running sum of its input.
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
