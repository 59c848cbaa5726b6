// step-run picks the entry point of a file that has exactly one, refuses
// ambiguous or contradictory flags, and bounds --ticks (--max-ticks).
// RUN: step-run %S/inputs/counter.mlir --ticks 3 | filecheck %s --check-prefix=NODE
// NODE:      tick 0: 0
// NODE-NEXT: tick 1: 1
// NODE-NEXT: tick 2: 2

// The only step.graph of a file is simulated.
// RUN: step-run %S/inputs/step-small-matmul.mlir | filecheck %s --check-prefix=GRAPH
// GRAPH: hardware               step-eval

// The only function is a tensor program: lowered with --lower (convert-linalg-to-step)
// or run on the ila backend (which needs its inputs); without either, step-run says so.
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FUNC
// FUNC:      step-run: error: {{.*}}maxpool128.mlir is a tensor program (func.func on tensors), not a step graph: lower it with --lower 'tile="MxN[xK]" schedule="mn_mk"' (convert-linalg-to-step options; --lower '' for the defaults); or run it on the ILA accelerators with --backend ila (--input NAME=FILE or --random SEED)
// FUNC-NEXT: exit=2

// RUN: sh -c 'step-run %S/inputs/two-funcs.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS:      step-run: error: {{.*}}two-funcs.mlir has 2 entry points (func.func @f, func.func @g); choose one with --graph @name, --node @name or --func @name
// AMBIGUOUS-NEXT: exit=2

// RUN: sh -c 'step-run %S/inputs/counter.mlir --ticks 1000000000000; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HUGE
// HUGE:      step-run: error: --ticks 1000000000000 is above the limit of 10000000 ticks; raise it with --max-ticks N
// HUGE-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/counter.mlir --ticks 4 --max-ticks 3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LIMIT
// LIMIT:      step-run: error: --ticks 4 is above the limit of 3 ticks; raise it with --max-ticks N
// LIMIT-NEXT: exit=2
// RUN: step-run %S/inputs/counter.mlir --ticks 4 --max-ticks 4 | filecheck %s --check-prefix=RAISED
// RAISED: tick 3: 3

// RUN: sh -c 'step-run %S/inputs/counter.mlir --ticks -1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NEG
// NEG:      step-run: error: --ticks must be non-negative
// NEG-NEXT: exit=2
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir --random -1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SEED
// SEED:      step-run: error: --random expects a non-negative seed, got -1
// SEED-NEXT: exit=2

// Flags that do not fit the entry point.
// RUN: sh -c 'step-run %S/inputs/counter.mlir --ticks 1 --node @count --graph @g; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TWO
// TWO:      step-run: error: give only one of --graph, --node, --func (got --graph, --node)
// TWO-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/counter.mlir --func @count --backend sync; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FUNCBACKEND
// FUNCBACKEND:      step-run: error: --func runs a function with --backend ila
// FUNCBACKEND-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/step-small-matmul.mlir --ticks 3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=GRAPHTICKS
// GRAPHTICKS:      step-run: error: --ticks applies to lus and sync nodes, not to a step.graph
// GRAPHTICKS-NEXT: exit=2
// A graph's --input names one of its off-chip loads (tools/graph_io.py).
// RUN: sh -c 'step-run %S/inputs/step-small-matmul.mlir --input nope=%t.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=GRAPHINPUT
// GRAPHINPUT:      step-run: error: --input: @g has no off-chip load 'nope' (loads: x (base_addr 0))
// GRAPHINPUT-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/step-small-matmul.mlir --random 3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=GRAPHRANDOM
// GRAPHRANDOM:      step-run: error: --random and --pipeline apply to functions (--backend ila)
// GRAPHRANDOM-NEXT: exit=2
// RUN: sh -c 'step-run %S/inputs/counter.mlir --node @nope --ticks 1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NONODE
// NONODE:      counter.mlir: error: no lus.node or sync.node @nope (nodes: @count)
// NONODE-NEXT: exit=1

// --allow-unregistered-dialect, as in step-opt.
// RUN: sh -c 'step-run %S/inputs/unregistered.mlir --ticks 1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNREG
// UNREG:      unregistered.mlir:2:13: error: Operation other.meta is not registered
// UNREG:      exit=1
// RUN: step-run %S/inputs/unregistered.mlir --ticks 1 --allow-unregistered-dialect | filecheck %s --check-prefix=ALLOW
// ALLOW: tick 0: 0

// A program on stdin is read once, even when the backend parses it twice.
// RUN: cat %S/inputs/counter.mlir | step-run - --ticks 2 --backend sync | filecheck %s --check-prefix=STDIN
// STDIN:      tick 0: 0
// STDIN-NEXT: tick 1: 1
