// A two-rate pipeline on k-periodic clocks: a fast stage scales every input;
// a slow stage, on the clock "(01)" (every second tick), accumulates the
// scaled samples it sees; a third stage, on "0(001)" of the slow clock,
// takes a difference of the slow accumulator. Between their ticks the slow
// results are held, so every output is on the base clock.
lus.node @two_rate(%x: i32) -> (i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %fast = arith.muli %x, %c3 : i32
  %xs = lus.when "(01)" %fast : i32
  %acc_prev = lus.fby %c0 %acc : i32
  %ps = lus.when "(01)" %acc_prev : i32
  %sum = arith.addi %ps, %xs : i32
  %keep = lus.when not "(01)" %acc_prev : i32
  %acc = lus.merge "(01)" %sum %keep : i32
  %sub = lus.when "0(001)" %sum : i32
  %diff_prev = lus.fby %c0 %diff : i32
  %dp = lus.when "(01)" %diff_prev : i32
  %dps = lus.when "0(001)" %dp : i32
  %delta = arith.subi %sub, %dps : i32
  %dp_keep = lus.when not "0(001)" %dp : i32
  %d_slow = lus.merge "0(001)" %delta %dp_keep : i32
  %dkeep = lus.when not "(01)" %diff_prev : i32
  %diff = lus.merge "(01)" %d_slow %dkeep : i32
  lus.yield (%fast : i32, %acc : i32, %diff : i32)
}
