// Command-line behaviour of step-opt and step-run beyond diagnostics.

// Only the targets steplus supports (xDSL's others printed nothing, exit 0).
// RUN: sh -c 'step-opt %s --target wgsl; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET:      step-opt: error: argument -t/--target: invalid choice: 'wgsl' (choose from mlir)
// TARGET-NEXT: exit=2
// RUN: step-opt --help | filecheck %s --check-prefix=HELP
// HELP: Available targets are: mlir
// RUN: step-opt %s --target mlir | filecheck %s --check-prefix=MLIR
// MLIR: builtin.module

// --gen-dialect-doc needs a directory.
// RUN: echo > %t.file
// RUN: sh -c 'step-opt --gen-dialect-doc %t.file; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DOC
// DOC:      step-opt: error: --gen-dialect-doc: '{{.*}}.file' is not a directory
// DOC-NEXT: exit=2

// stdout carries only IR: reports go to stderr, so the output parses again.
// RUN: step-opt %examples/step/swiglu_tm16_tn16.mlir -p step-infer-shapes,step-metrics 2>%t.metrics | step-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: filecheck %s --check-prefix=METRICS < %t.metrics
// RUN: step-opt %examples/step/swiglu_tm16_tn16.mlir -p step-print-dot 2>%t.dot | step-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: filecheck %s --check-prefix=DOT < %t.dot
// ROUNDTRIP: step.graph @swiglu_tm16_tn16
// METRICS: step-metrics @swiglu_tm16_tn16
// DOT: digraph "swiglu_tm16_tn16" {

// A reader that goes away (`| head`) ends the tool quietly, as Unix tools do
// (exit 141 = 128 + SIGPIPE), with nothing on stderr.
// RUN: python -c "print(''.join('func.func @f%%d() {\n  func.return\n}\n' %% i for i in range(4000)))" > %t.big.mlir
// RUN: sh -c '{ step-opt %t.big.mlir 2>%t.opt.err; echo "exit=$?" > %t.opt.code; } | head -n 1'
// RUN: test ! -s %t.opt.err
// RUN: filecheck %s --check-prefix=PIPE < %t.opt.code
// RUN: sh -c '{ step-run %S/inputs/counter.mlir --ticks 30000 2>%t.run.err; echo "exit=$?" > %t.run.code; } | head -n 1'
// RUN: test ! -s %t.run.err
// RUN: filecheck %s --check-prefix=PIPE < %t.run.code
// PIPE: exit=141
