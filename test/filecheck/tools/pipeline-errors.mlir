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
// OPTION:      step-opt: error: invalid options for pass 'isel': unknown option 'nodelimit' (options: targets, mode, iterations, node-limit, time-limit, lstm, offload)
// OPTION-NEXT: exit=2
// RUN: sh -c 'step-opt %s -p "isel{node-limit=x}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE:      step-opt: error: invalid options for pass 'isel': option 'node-limit' expects an integer, got 'x'
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

// A pass option of the wrong simple type names the option and the type it
// expects (xDSL's own message named neither), `true` is not an integer, and an
// integer is a number for a float option.
// RUN: not step-opt %s -p 'step-metrics{bind=5}' 2>&1 | filecheck %s --check-prefix=TYPESTR
// TYPESTR: step-opt: error: invalid options for pass 'step-metrics': option 'bind' expects a string, got 5 (quote it: bind="...")
// RUN: not step-opt %s -p 'isel{iterations=true}' 2>&1 | filecheck %s --check-prefix=TYPEBOOL
// TYPEBOOL: step-opt: error: invalid options for pass 'isel': option 'iterations' expects an integer, got True
// RUN: not step-opt %s -p 'isel{iterations=2.5}' 2>&1 | filecheck %s --check-prefix=TYPEINT
// TYPEINT: step-opt: error: invalid options for pass 'isel': option 'iterations' expects an integer, got 2.5
// RUN: step-opt %s -p 'isel{time-limit=3}' | filecheck %s --check-prefix=FLOAT
// FLOAT: builtin.module
