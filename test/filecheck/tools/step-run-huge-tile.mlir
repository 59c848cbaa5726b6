// One tile of ~8e22 bytes (99999999999 x 99999999999 values at 8 bytes): the
// simulator refuses it before it starts, even with --force, instead of an
// OverflowError inside the HBM model.
// RUN: not step-run %S/inputs/step-huge-tile.mlir 2>&1 | filecheck %s
// RUN: not step-run %S/inputs/step-huge-tile.mlir --force 2>&1 | filecheck %s
// CHECK: step-huge-tile.mlir: error: simulation too large: one tile holds about ~1e22 bytes (limit 4,294,967,296 per tile)
