// A feedback edge through an eager_merge with no seed: the merge waits for the
// partition it selects for (docs/rationale/step.md). step-run reports the deadlock.
step.graph @work_stealing {
  %req = step.linear_offchip_load {base_addr = 0 : i64, tiled_in_shape = array<i64: 4>, stride = array<i64: 1>, tiled_out_shape = array<i64: 4>} : () -> !step.stream<[4], !step.tile<1x64xf32>>
  %r0, %r1 = step.partition %req, %who : (!step.stream<[4], !step.tile<1x64xf32>>, !step.stream<[4], !step.selector<2>>) -> (!step.stream<[2], !step.tile<1x64xf32>>, !step.stream<[2], !step.tile<1x64xf32>>)
  %y0 = step.map %r0 : !step.stream<[2], !step.tile<1x64xf32>> -> !step.stream<[2], !step.tile<1x64xf32>> {
  ^bb0(%t: !step.tile<1x64xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<1x64xf32>) -> !step.tile<1x64xf32>
    step.yield %e : !step.tile<1x64xf32>
  }
  %y1 = step.map %r1 : !step.stream<[2], !step.tile<1x64xf32>> -> !step.stream<[2], !step.tile<1x64xf32>> {
  ^bb0(%t: !step.tile<1x64xf32>):
    %e = step.apply "exp"(%t) : (!step.tile<1x64xf32>) -> !step.tile<1x64xf32>
    step.yield %e : !step.tile<1x64xf32>
  }
  %done, %who = step.eager_merge %y0, %y1 : (!step.stream<[2], !step.tile<1x64xf32>>, !step.stream<[2], !step.tile<1x64xf32>>) -> (!step.stream<[4], !step.tile<1x64xf32>>, !step.stream<[4], !step.selector<2>>)
  step.linear_offchip_store %done {base_addr = 4096 : i64} : !step.stream<[4], !step.tile<1x64xf32>>
}
