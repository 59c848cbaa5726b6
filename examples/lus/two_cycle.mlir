// The seed's two-cycle program:
//   c = 0 fby ((c + 1) % 2); ck = c <> 0;
//   y = 0.0 fby (merge ck (x when ck) (y whennot ck))
lus.node @two_cycle(%x: f32) -> (f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %f0 = arith.constant 0.0 : f32
  %c = lus.fby %c0 %cn : i32
  %cp = arith.addi %c, %c1 : i32
  %cn = arith.remsi %cp, %c2 : i32
  %ck = arith.cmpi ne, %c, %c0 : i32
  %fx = lus.when %ck %x : f32
  %hold = lus.when not %ck %y : f32
  %m = lus.merge %ck %fx %hold : f32
  %y = lus.fby %f0 %m : f32
  lus.yield (%y : f32)
}
