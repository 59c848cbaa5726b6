// Every lus example lowered to step functions compiles with iree-compile for
// a generic CPU; the modular target parses and verifies in upstream MLIR.
// (Execution and agreement: test/unit/runtime/reactive/test_lus_agreement.py.)

// RUN: step-opt %examples/lus/integrator.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.integr.vmfb
// RUN: step-opt %examples/lus/two_cycle.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.two_cycle.vmfb
// RUN: step-opt %examples/lus/counter.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.counter.vmfb
// RUN: step-opt %examples/lus/watchdog.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.watchdog.vmfb
// RUN: step-opt %examples/lus/window_avg.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.window_avg.vmfb
// RUN: step-opt %examples/lus/two_rate.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.two_rate.vmfb
// RUN: step-opt %examples/lus/lstm.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.lstm.vmfb
// RUN: step-opt %examples/lus/subsampled.mlir -p lus-inline-instances,convert-lus-to-sync,convert-sync-to-std --print-op-generic | iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic - -o %t.subsampled.vmfb
// RUN: step-opt %examples/lus/subsampled.mlir -p 'convert-lus-to-sync,convert-sync-to-std{target=modular}' --print-op-generic | iree-opt --allow-unregistered-dialect | filecheck %s
// CHECK: func.func @subsampled(%arg0: i32)
// CHECK: call @inst(
