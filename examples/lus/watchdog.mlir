// A watchdog: counts the ticks since the last heartbeat and raises the alarm
// once more than 4 ticks have passed without one. The count only advances on
// the ticks where the watchdog is armed (a sub-clock), and is held otherwise.
lus.node @watchdog(%heartbeat: i1, %armed: i1) -> (i1, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %limit = arith.constant 4 : i32
  %since = lus.fby %c0 %count : i32
  %beat_on = lus.when %armed %heartbeat : i1
  %since_on = lus.when %armed %since : i32
  %next_on = arith.addi %since_on, %c1 : i32
  %count_on = arith.select %beat_on, %c0, %next_on : i32
  %held = lus.when not %armed %since : i32
  %count = lus.merge %armed %count_on %held : i32
  %alarm = arith.cmpi sgt, %count, %limit : i32
  lus.yield (%alarm : i1, %count : i32)
}
