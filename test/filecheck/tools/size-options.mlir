// Size options parse strictly, the whole text (utils/sizes.py): spaces, digit separators and
// text past 64 characters are usage errors, not 1 byte or a truncated number (issue 24).
// RUN: sh -c 'step-opt %S/../passes/inputs/sn40l-tiny.mlir -p "step-kernelize,step-allocate-memory{hbm=\"1   TiB\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SPACES
// RUN: sh -c 'step-opt %S/../passes/inputs/sn40l-tiny.mlir -p "step-kernelize,step-allocate-memory{ddr=1_000}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNDERSCORE
// RUN: sh -c 'step-opt %S/../passes/inputs/sn40l-tiny.mlir -p "step-kernelize,step-allocate-memory{hbm=00000000000000000000000000000000000000000000000000000000000000012KiB}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LONG
// RUN: step-opt %S/../passes/inputs/sn40l-tiny.mlir -p "step-kernelize,step-allocate-memory{hbm=0000000000000000000000000000000000000000000000000000000000012KiB}" -o /dev/null 2>&1 | filecheck %s --check-prefix=PADDED

// SPACES:      step-opt: error: invalid options for pass 'step-allocate-memory': hbm must be a size like 64GiB or 4096 (no spaces), got '1   TiB'
// SPACES-NEXT: exit=2
// UNDERSCORE:      step-opt: error: invalid options for pass 'step-allocate-memory': ddr must be a size like 64GiB or 4096, got '1_000'
// UNDERSCORE-NEXT: exit=2
// LONG:      step-opt: error: invalid options for pass 'step-allocate-memory': hbm must be a size like 64GiB or 4096 of at most 64 characters, got 68 characters ('0000000000000000000000000000000000000...')
// LONG-NEXT: exit=2
// 64 characters are read whole: 12 KiB, as `hbm=12KiB` (two symbols spill).
// PADDED: remark: step-allocate-memory: @g: 7 symbol(s), HBM 12288 B (without sharing 20480 B), DDR 4096 B; 2 symbol(s) spilled: st0, ld0

// Integers in other pass options are ASCII decimal too (Python's int() and `\d` also read
// Arabic-Indic digits, `1_024` and `0b101`).
// RUN: sh -c 'step-opt %S/../lowering/convert-linalg-to-step.mlir -p "convert-linalg-to-step{tile=\"٤x١٦x٨\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TILE
// RUN: sh -c 'step-opt %S/../lowering/convert-linalg-to-step.mlir -p "convert-linalg-to-step{memory=\"align=1_024\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MEMORY
// RUN: sh -c 'step-opt %S/../lowering/convert-linalg-to-step.mlir -p "convert-linalg-to-step{tile=\"4x16x8;²=4x16\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OVERRIDE
// RUN: sh -c 'step-opt %S/../../../examples/step/swiglu_tm32_tn128.mlir -p "step-hierarchical-tiling{tile=\"١٦x١٦\"}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=HTILE
// TILE:      step-opt: error: invalid options for pass 'convert-linalg-to-step': tile: expected MxN or MxNxK, got '٤x١٦x٨'
// TILE-NEXT: exit=2
// MEMORY:      step-opt: error: invalid options for pass 'convert-linalg-to-step': memory: '1_024' is not an integer address
// MEMORY-NEXT: exit=2
// OVERRIDE:      step-opt: error: invalid options for pass 'convert-linalg-to-step': tile: expected an override I=MxN[xK], got '²=4x16'
// OVERRIDE-NEXT: exit=2
// HTILE:      step-opt: error: invalid options for pass 'step-hierarchical-tiling': tile must be RxC with integers in [1, 65536] (e.g. 16x16), got '١٦x١٦'
// HTILE-NEXT: exit=2
