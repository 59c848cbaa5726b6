"""The hardware settings of each reference experiment (reference spec §1.3, §3.2, §8).

One place for what the artifact's drivers set per experiment, so every bench
script simulates a workload the same way:

| experiment | preset | base depth | compute_bw (FLOPs/cycle) |
|---|---|---|---|
| `swiglu` (HDL validation, §8.1) | swiglu-hdl | 1 | 4096 |
| `moe` static tiling (§8.2) | step-eval | 2 (Qwen B=1024: 1024) | 4096 |
| `moe` dynamic tiling (§8.2) | step-eval | 2 (Qwen B=1024: 1024) | 6400, RetileRow accumulators 1024 |
| `timemux` (§8.3, static and dynamic) | step-eval | 2 | 1024 (every compute op) |
| `attention` (§8.4) | step-eval | 1 | 2048 (fixed-cost helpers: 1 cycle) |

Example:

```python
cfg = configure("moe", module, dynamic=True, depth=moe_depth("qwen", 1024))
result = build_program(module, cfg).run()
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from steplus.dialects import step_ops as so
from steplus.runtime.fabric.config import HardwareConfig, get_preset

EXPERIMENTS = ("swiglu", "moe", "timemux", "attention")


def _retile_accums(module: ModuleOp):
    for op in module.walk():
        if isinstance(op, so.AccumOp) and any(
                isinstance(a, so.ApplyOp) and a.fn.data == "retile_row" for a in op.update.walk()):
            yield op


def moe_depth(model: str, batch: int) -> int:
    """The base channel depth of an MoE run: 2, but 1024 for Qwen at B=1024 —
    the newest driver's setting (reference spec §1.3, §11.3); at depth 2 its
    static-tiling graphs deadlock (a rare expert waits for tile_N tokens while
    the token partition is blocked by a busy expert whose outputs wait for the
    reassembly of an earlier token), which the simulator reports."""
    return 1024 if (model, batch) == ("qwen", 1024) else 2


def configure(experiment: str, module: ModuleOp, dynamic: bool = False,
              depth: int | None = None) -> HardwareConfig:
    """The configuration of `experiment` for `module` (annotating per-op `compute_bw`
    where the experiment sets one op apart); `depth` overrides the base
    channel depth (`moe_depth` for the MoE runs)."""
    cfg = _configure(experiment, module, dynamic)
    return cfg if depth is None else cfg.with_(base_depth=depth)


def _configure(experiment: str, module: ModuleOp, dynamic: bool) -> HardwareConfig:
    if experiment == "swiglu":
        return get_preset("swiglu-hdl")
    if experiment == "attention":
        return get_preset("step-eval").with_(compute_bw=2048, base_depth=1)
    if experiment == "moe":
        if not dynamic:
            return get_preset("step-eval").with_(compute_bw=4096)
        for op in _retile_accums(module):
            op.attributes["compute_bw"] = IntegerAttr(1024, 64)
        return get_preset("step-eval").with_(compute_bw=6400)
    if experiment == "timemux":
        return get_preset("step-eval").with_(compute_bw=1024)
    raise ValueError(f"experiment must be one of {', '.join(EXPERIMENTS)}, got {experiment!r}")
