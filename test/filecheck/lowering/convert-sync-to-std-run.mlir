// RUN: step-opt %s -p convert-lus-to-sync,convert-sync-to-std | filecheck %s

// @acc_run: N ticks of @acc_step in one call. Streams have the tick as their
// leading dimension (the i1 stream as i8); the tensor state is carried in one
// flat buffer of two values (read slot t mod 2, write slot t+1 mod 2) so the
// loop yields the buffer it was given; the final state is slot N mod 2.
// CHECK:      func.func @acc_run(%s_state: tensor<2xf32>, %x: tensor<?x2xf32>, %r: tensor<?xi8>) -> (tensor<2xf32>, tensor<?x2xf32>, tensor<?xi8>) {
// CHECK:        %ticks = tensor.dim %x, %[[C0:.*]] : tensor<?x2xf32>
// CHECK:        %[[OX:.*]] = tensor.empty(%ticks) : tensor<?x2xf32>
// CHECK:        %[[OR:.*]] = tensor.empty(%ticks) : tensor<?xi8>
// CHECK:        %[[BUF:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:        %[[INIT:.*]] = tensor.insert_slice %s_state into %[[BUF]][%{{.*}}] [2] [1] : tensor<2xf32> into tensor<4xf32>
// CHECK:        %[[L:.*]], %{{.*}}, %{{.*}} = scf.for %t = %[[C0]] to %ticks step %{{.*}} iter_args(%[[S:.*]] = %[[INIT]], %[[O1:.*]] = %[[OX]], %[[O2:.*]] = %[[OR]])
// CHECK:          %[[RD:.*]] = arith.remui %t, %{{.*}} : index
// CHECK:          %[[WR:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK:          %[[RO:.*]] = arith.muli %[[RD]], %{{.*}} : index
// CHECK:          %[[PREV:.*]] = tensor.extract_slice %[[S]][%[[RO]]] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK:          %[[XT:.*]] = tensor.extract_slice %x[%t, 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<2xf32>
// CHECK:          %[[RT:.*]] = tensor.extract %r[%t] : tensor<?xi8>
// CHECK:          %[[RB:.*]] = arith.cmpi ne, %[[RT]], %{{.*}} : i8
// CHECK:          %a = arith.addf %[[PREV]], %[[XT]] : tensor<2xf32>
// CHECK:          %n = arith.select %[[RB]], %z, %a : tensor<2xf32>
// CHECK:          %[[W1:.*]] = tensor.insert_slice %n into %[[O1]][%t, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<?x2xf32>
// CHECK:          %[[E:.*]] = arith.extui %[[RB]] : i1 to i8
// CHECK:          %[[W2:.*]] = tensor.insert %[[E]] into %[[O2]][%t] : tensor<?xi8>
// CHECK:          %[[WO:.*]] = arith.muli %[[WR]], %{{.*}} : index
// CHECK:          %[[NS:.*]] = tensor.insert_slice %n into %[[S]][%[[WO]]] [2] [1] : tensor<2xf32> into tensor<4xf32>
// CHECK:          scf.yield %[[NS]], %[[W1]], %[[W2]] : tensor<4xf32>, tensor<?x2xf32>, tensor<?xi8>
// CHECK:        %[[LAST:.*]] = arith.remui %ticks, %{{.*}} : index
// CHECK:        %[[LO:.*]] = arith.muli %[[LAST]], %{{.*}} : index
// CHECK:        %[[FINAL:.*]] = tensor.extract_slice %[[L]][%[[LO]]] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK:        func.return %[[FINAL]], %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<?x2xf32>, tensor<?xi8>
lus.node @acc(%x: tensor<2xf32>, %r: i1) -> (tensor<2xf32>, i1) {
  %z = arith.constant dense<0.0> : tensor<2xf32>
  %s = lus.fby %z %n : tensor<2xf32>
  %a = arith.addf %s, %x : tensor<2xf32>
  %n = arith.select %r, %z, %a : tensor<2xf32>
  lus.yield (%n : tensor<2xf32>, %r : i1)
}

// A node without inputs takes the number of ticks as its last argument; a
// scalar state is a plain loop-carried value.
// CHECK:      func.func @count_run(%p_state: i32, %ticks: index) -> (i32, tensor<?xi32>) {
// CHECK:        %[[O:.*]] = tensor.empty(%ticks) : tensor<?xi32>
// CHECK:        %{{.*}}, %{{.*}} = scf.for %t = %{{.*}} to %ticks step %{{.*}} iter_args(%{{.*}} = %p_state, %{{.*}} = %[[O]]) -> (i32, tensor<?xi32>) {
lus.node @count() -> (i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %p = lus.fby %c0 %n : i32
  %n = arith.addi %p, %c1 : i32
  lus.yield (%n : i32)
}
