"""Golden simulator cycle counts: every total the unit tests pin, in one place.

A total cycle count of a reference workload is the end of a long chain of the
timing rules of ../shared/spec/step-reference-workloads.md (§1-§4); none of the
totals below is derivable by hand, and the artifact's recorded CSVs are not
shipped with this repository, so every number here is a **regression pin of
our model**: it says "the simulator still does what it did when the number was
recorded", not "the simulator is right". What *is* derivable is checked beside
the tests that use these numbers: per-operator busy cycles by §3's roofline
rule and §8.1's timing table (test_fabric_swiglu), the total as the last memory
operator's clock + the end offset (§2.5), off-chip traffic by §5.5's closed
form, relations between runs (run order, value-independence, HBM models).

When a deliberate change of the model moves a number, update it here, say in
the commit which rule moved it, and update the copies that cannot import this
module (FileCheck files, listed in FILECHECK_COPIES; test/unit/tools/
test_golden_filecheck.py fails while a copy disagrees).

Example:

```python
from golden import SWIGLU_HDL_CYCLES
assert build_program(swiglu_graph(64, 256, 512, 32, 128), HDL).run().cycles == \\
    SWIGLU_HDL_CYCLES[(32, 128)]
```
"""

from __future__ import annotations

import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent

# -- §8.1 SwiGLU expert, HDL validation ("Figure 8") ---------------------------
# B=64, D=256, F=512, schedule mn_mk, f32, preset swiglu-hdl (8 HBM channels,
# PMU_BW 256, par_dispatch 4, depth 1, compute 4096), keyed (tm, tn).
# Regression pins of the model. Each total is the store's final clock + 2
# (§2.5), and the closed-form HBM model and the request-level controller agree
# on it (test_fabric_swiglu checks both on three rows; its per-operator busy
# cycles are §8.1's formulas). §11.1 expects these to equal the artifact's
# "cycles (STeP sim)" column exactly; that CSV is not in the repository, so they
# are not compared.
# Each is at least traffic / 256 (the HBM peak, §2.1): 0.8 % above that bound at
# (16, 16), the most memory-bound row, 60 % above it at (64, 256).
SWIGLU_HDL_CYCLES: dict[tuple[int, int], int] = {
    (16, 16): 33289, (16, 32): 29400, (16, 64): 27503, (16, 128): 26993, (16, 256): 27509,
    (32, 16): 21223, (32, 32): 17097, (32, 64): 15277, (32, 128): 14773, (32, 256): 15305,
    (64, 16): 15218, (64, 32): 11188, (64, 64): 9537, (64, 128): 9260, (64, 256): 11088,
}

# The same SwiGLU graph on other presets. Regression pins of the model.
# step-eval (32 channels, PMU_BW 64, depth 2), tm=32, tn=128: `step-run` of
# test/filecheck/tools/inputs/swiglu-tm32-tn128.mlir with no --preset.
SWIGLU_STEP_EVAL_CYCLES_32x128 = 25141
# sn40l preset with compute_bw 4096 and par_dispatch 1, tm=32, tn=64: PMU-bound
# like step-eval, its 40 HBM channels do not help (test_fabric_lowering).
SWIGLU_SN40L_CYCLES_32x64 = 27185

# -- §8.2 MoE layer, weight-stationary, batch 64 --------------------------------
# step-eval preset (32 channels, PMU_BW 64, par_dispatch 1, depth 2), mock bf16,
# tF = 64; static tiling compute 4096, dynamic tiling 6400 with the RetileRow
# accumulators at 1024 (§8.2, reference_settings). Keyed (model, batch, tile_N),
# tile_N None = dynamic. Traces: expert_routing/mixtral_b64/008_010.npz and the
# shipped Qwen B=64 trace (steplus.passes.step.traces.shipped_routing_trace).
# Regression pins of the model: §11.2 calls these graphs chaotic (a 0-3 cycle
# perturbation of one loader moves the total by 1-2 %) and expects only ~2 %
# agreement with the artifact. History: FlatPartition spending a memory tile's
# load time before dequeuing it (§4) moved Mixtral tn16 4644822 -> 4644451 and
# Qwen tn16 709160 -> 709864 (docs/fabric.md).
MOE_CYCLES: dict[tuple[str, int, int | None], int] = {
    ("mixtral", 64, 16): 4644451,
    ("mixtral", 64, None): 2823520,
    ("qwen", 64, 16): 709864,
}

# -- §8.3 configuration time-multiplexing ---------------------------------------
# No unit test simulates the time-multiplexed graphs (their pass is checked by
# op-for-op and metric equality with the builder's graph); bench/exp_timemux.py
# prints their cycles.

# -- §8.4 GQA decode attention ---------------------------------------------------
# step-eval with the attention settings (depth 1, compute 2048, total = last
# memory operator's clock + 3, §2.5), the 27 shipped Azure KV traces
# (azure_kv/b<B>/conv_stdev*_<start>_<end>.npy, keyed "<B>/<start>_<end>") x the
# three strategies. Regression pins of the model after issue 14's fidelity fixes
# (div write_back_mu, FlatPartition peek-spend-dequeue, +3); §11.1 expects the
# artifact's values within +-1. The numbers stay in attention_cycles.json because
# bench/exp_attention.py --check compares all 81 with the same file; this module
# is where the tests read them.
_ATTENTION = json.loads((_HERE / "runtime" / "fabric" / "attention_cycles.json").read_text())
ATTENTION_STRATEGIES: tuple[str, ...] = tuple(_ATTENTION["columns"])
ATTENTION_CYCLES: dict[str, dict[str, int]] = {
    key: dict(zip(ATTENTION_STRATEGIES, row)) for key, row in _ATTENTION["cycles"].items()}

# -- routing example (partition / reassemble) -----------------------------------
# test/filecheck/tools/inputs/step-route-2experts.mlir on swiglu-hdl, functional:
# 4 tokens, token 2 to both experts. Regression pin of the model (the part /
# e0 / e1 busy cycles under it are derived in test_fabric_lowering).
ROUTE_2EXPERTS_CYCLES = 146

# -- copies that cannot import this module ----------------------------------------
# (FileCheck file relative to the repository, the exact line, the golden value
# the line carries); test/unit/tools/test_golden_filecheck.py checks each.
FILECHECK_COPIES: list[tuple[str, str, int]] = [
    ("test/filecheck/tools/step-run-graph.mlir",
     "// CHECK-NEXT: cycles                 {}", SWIGLU_HDL_CYCLES[(32, 128)]),
    ("test/filecheck/tools/step-run-graph.mlir",
     '// JSON: "cycles": {},', SWIGLU_HDL_CYCLES[(32, 128)]),
    ("test/filecheck/tools/step-run-graph.mlir",
     "// EVAL-NEXT: cycles                 {}", SWIGLU_STEP_EVAL_CYCLES_32x128),
    ("test/filecheck/tools/step-run-graph.mlir",
     "// ROUTE: cycles                 {}", ROUTE_2EXPERTS_CYCLES),
]
