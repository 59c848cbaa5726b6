// The identity on i64: input values come back exactly.
lus.node @id(%i: i64) -> (i64) {
  lus.yield (%i : i64)
}
