// Input of test_step_run_stream.py: inputs whose runtime dtype is not their declared type
// (f16 as float16, index as float32, ui8 as the bits of an int8).
lus.node @n(%a: f16, %b: index, %c: ui8) -> (f16, index, ui8) {
  lus.yield (%a : f16, %b : index, %c : ui8)
}
