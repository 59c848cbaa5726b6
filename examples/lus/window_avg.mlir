// A sliding-window average over the last 4 inputs (missing ones count as 0).
lus.node @window_avg(%x: f32) -> (f32) {
  %f0 = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %x1 = lus.fby %f0 %x : f32
  %x2 = lus.fby %f0 %x1 : f32
  %x3 = lus.fby %f0 %x2 : f32
  %s1 = arith.addf %x, %x1 : f32
  %s2 = arith.addf %s1, %x2 : f32
  %s3 = arith.addf %s2, %x3 : f32
  %avg = arith.mulf %s3, %quarter : f32
  lus.yield (%avg : f32)
}
