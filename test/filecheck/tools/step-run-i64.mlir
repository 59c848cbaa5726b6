// i64 inputs are read exactly: 2**53 + 1 does not round to 2**53 through a
// float64, from a CSV file or from --stream.
// RUN: step-run %S/inputs/id-i64.mlir --ticks 2 --input i=%S/inputs/i64-big.csv | filecheck %s
// RUN: step-run %S/inputs/id-i64.mlir --stream < %S/inputs/i64-big.csv | filecheck %s
// CHECK:      tick 0: 9007199254740993
// CHECK-NEXT: tick 1: -9223372036854775808
