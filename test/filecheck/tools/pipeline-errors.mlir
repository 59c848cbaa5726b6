// Every malformed pass pipeline is a one-line usage error (exit 2), never a
// traceback (xDSL's ArgSpecParseError is a BaseException).
// RUN: sh -c 'step-opt %s -p ","; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=COMMA
// COMMA:      step-opt: error: invalid pass pipeline at column 1: Expected pass name here
// COMMA-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "step-metrics{"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OPEN
// OPEN:      step-opt: error: invalid pass pipeline at column 14: Expected argument name here
// OPEN-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "step-metrics{bind=}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EMPTY
// EMPTY:      step-opt: error: invalid pass pipeline at column 19: Unknown argument value, wrap argument in quotes to pass arbitrary string values
// EMPTY-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "step-specialize{routing=/nonexistent}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PATH
// PATH:      step-opt: error: invalid pass pipeline at column 25: Unknown token
// PATH-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "isel{targets=}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGETS
// TARGETS:      step-opt: error: invalid pass pipeline at column 14: Unknown argument value, wrap argument in quotes to pass arbitrary string values
// TARGETS-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "step-hierarchical-tiling{tile=-16x16}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TILE
// TILE:      step-opt: error: invalid pass pipeline at column 34: Malformed pass arguments, expected either a space or `}` here
// TILE-NEXT: exit=2
// RUN: sh -c "step-opt %s -p 'step-metrics{bind=\"B=64}'; echo \"exit=\$?\"" 2>&1 | filecheck %s --check-prefix=QUOTE
// QUOTE:      step-opt: error: invalid pass pipeline at column 19: Unknown token
// QUOTE-NEXT: exit=2

// Options a pass rejects while it is built name the pass.
// RUN: sh -c "step-opt %s -p 'step-hierarchical-tiling{tile=\"-16x16\"}'; echo \"exit=\$?\"" 2>&1 | filecheck %s --check-prefix=VALUE
// VALUE:      step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be {{.*}}, got '-16x16'
// VALUE-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "isel{nodelimit=3}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION:      step-opt: error: invalid options for pass 'isel': Provided arguments ["nodelimit"] not found in expected arguments ["targets", "mode", "iterations", "node_limit", "time_limit"]
// OPTION-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "isel{node-limit=x}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE:      step-opt: error: invalid options for pass 'isel': Incompatible types: given ('x',), expected <class 'int'>
// TYPE-NEXT: exit=2

// The same in step-run's --pipeline, and in the pipeline --bind builds.
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir --func @maxpool --random 0 --pipeline ","; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RUNCOMMA
// RUNCOMMA:      step-run: error: invalid pass pipeline at column 1: Expected pass name here
// RUNCOMMA-NEXT: exit=2
// RUN: sh -c 'step-run %examples/isel/maxpool128.mlir --func @maxpool --random 0 --pipeline "isel{targets=}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RUNTARGETS
// RUNTARGETS:      step-run: error: invalid pass pipeline at column 14: Unknown argument value, wrap argument in quotes to pass arbitrary string values
// RUNTARGETS-NEXT: exit=2
// RUN: sh -c "step-run %S/inputs/step-small-matmul.mlir --bind 'B=64\\'; echo \"exit=\$?\"" 2>&1 | filecheck %s --check-prefix=BIND
// BIND:      step-run: error: --bind value cannot contain '"' or '\': B=64\
// BIND-NEXT: exit=2
