// step-run checks every --input against the type and shape of what runs, for
// every backend (one reader, tools/inputs.py): errors name the input, what it
// expects and what the file holds.  Bad data is exit 1, a bad flag exit 2.
// The node: @typed(%i: i32, %b: i1, %v: tensor<2xf32>) -> (i32, tensor<2xf32>).
// RUN: printf '5\n6\n' > %t.i.csv
// RUN: printf '1\n0\n' > %t.b.csv
// RUN: printf '1,2\n3,4\n' > %t.v.csv
// RUN: step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input b=%t.b.csv --input v=%t.v.csv | filecheck %s --check-prefix=OK
// OK:      tick 0: 5 [2., 4.]
// OK-NEXT: tick 1: 0 [6., 8.]

// A two-column CSV for a scalar input.
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.v.csv --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TWOCOL
// TWOCOL:      .v.csv: error: input 'i' expects i32 values, one per tick (shape [ticks]); got an array of shape [2, 2]
// TWOCOL-NEXT: exit=1

// A tensor of the wrong shape (was broadcast silently).
// RUN: python -c "import numpy as np; np.save('%t.v23.npy', np.ones((2, 3), np.float32))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input b=%t.b.csv --input v=%t.v23.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE:      .v23.npy: error: input 'v' expects tensor<2xf32> values, one per tick (shape [ticks, 2]); got an array of shape [2, 3]
// SHAPE-NEXT: exit=1

// The same check on the sync backend.
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --backend sync --ticks 2 --input i=%t.i.csv --input b=%t.b.csv --input v=%t.v23.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHAPE

// Values an i32 cannot hold (were cast with a numpy warning).
// RUN: python -c "import numpy as np; np.save('%t.frac.npy', np.array([5, 2.5]))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.frac.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FRAC
// FRAC:      .frac.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got 2.5 at index [1], not an integer
// FRAC-NEXT: exit=1
// RUN: python -c "import numpy as np; np.save('%t.nan.npy', np.array([np.nan, 1.0]))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.nan.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NAN
// NAN:      .nan.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got nan at index [0], not an integer
// NAN-NEXT: exit=1
// RUN: printf '1\n1e30\n' > %t.big.csv
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.big.csv --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BIG
// BIG:      .big.csv: error: input 'i' expects i32 values, one per tick (shape [ticks]); got 1e+30 at index [1], out of range for i32
// BIG-NEXT: exit=1
// RUN: python -c "import numpy as np; np.save('%t.i64.npy', np.array([1, 2**31]))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i64.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=WIDE
// WIDE:      .i64.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got 2147483648 at index [1], out of range for i32
// WIDE-NEXT: exit=1
// RUN: printf '1,1e39\n3,4\n' > %t.vbig.csv
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input b=%t.b.csv --input v=%t.vbig.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=F32
// F32:      .vbig.csv: error: input 'v' expects tensor<2xf32> values, one per tick (shape [ticks, 2]); got 1e+39 at index [0, 1], out of range for f32
// F32-NEXT: exit=1
// RUN: printf '1\n2\n' > %t.b2.csv
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input b=%t.b2.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BOOL
// BOOL:      .b2.csv: error: input 'b' expects i1 values, one per tick (shape [ticks]); got 2 at index [1], not 0 or 1
// BOOL-NEXT: exit=1

// Arrays that are not numbers.
// RUN: python -c "import numpy as np; np.save('%t.cplx.npy', np.array([1+2j, 3]))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.cplx.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CPLX
// CPLX:      .cplx.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got an array of complex numbers
// CPLX-NEXT: exit=1
// RUN: python -c "import numpy as np; np.save('%t.str.npy', np.array(['a', 'b']))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.str.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=STR
// STR:      .str.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got an array of strings
// STR-NEXT: exit=1
// RUN: python -c "import numpy as np; np.save('%t.zero.npy', np.array(5))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.zero.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO:      .zero.npy: error: input 'i' expects i32 values, one per tick (shape [ticks]); got a 0-d array (a single value)
// ZERO-NEXT: exit=1
// RUN: python -c "import numpy as np; np.save('%t.obj.npy', np.array([1, None], dtype=object))"
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.obj.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OBJ
// OBJ:      .obj.npy: error: cannot read input 'i': Object arrays cannot be loaded when allow_pickle=False
// OBJ-NEXT: exit=1
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.nope.npy --input b=%t.b.csv --input v=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE:      .nope.npy: error: cannot read input 'i': No such file or directory
// NOFILE-NEXT: exit=1

// Input flags: unknown, repeated, missing, malformed.
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input b=%t.b.csv --input v=%t.v.csv --input w=%t.v.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN:      step-run: error: --input: @typed has no input 'w' (inputs: 'i', 'b', 'v')
// UNKNOWN-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv --input i=%t.i.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE:      step-run: error: --input 'i' is given twice
// TWICE-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i=%t.i.csv; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING:      step-run: error: missing --input for @typed: b: i1 values, one per tick (shape [ticks]); v: tensor<2xf32> values, one per tick (shape [ticks, 2])
// MISSING-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/typed-inputs.mlir --ticks 2 --input i; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SPEC
// SPEC:      step-run: error: --input expects NAME=FILE, got 'i'
// SPEC-NEXT: exit=2

// A function's inputs (ila backend) have the shape of its argument types.
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.ones(4, np.float32))"
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir --backend ila --func @maxpool --input x=%t.x.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FUNC
// FUNC:      .x.npy: error: input 'x' expects a tensor<1x128x128x1xf32> (shape [1, 128, 128, 1]); got an array of shape [4]
// FUNC-NEXT: exit=1
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir --func @maxpool --input y=%t.x.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FUNCNAME
// FUNCNAME:      step-run: error: --input: @maxpool has no input 'y' (inputs: 'x')
// FUNCNAME-NEXT: exit=2
