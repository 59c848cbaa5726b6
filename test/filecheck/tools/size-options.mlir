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
