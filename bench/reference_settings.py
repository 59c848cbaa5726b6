"""The hardware settings of each reference experiment (reference spec §1.3, §3.2, §8).

One place for what the artifact's drivers set per experiment, so every bench
script simulates a workload the same way:

| experiment | preset | base depth | compute_bw (FLOPs/cycle) |
|---|---|---|---|
| `swiglu` (HDL validation, §8.1) | swiglu-hdl | 1 | 4096 |
| `moe` static tiling (§8.2) | step-eval | 2 | 4096 |
| `moe` dynamic tiling (§8.2) | step-eval | 2 | 6400, RetileRow accumulators 1024 |
| `timemux` (§8.3, static and dynamic) | step-eval | 2 | 1024 (every compute op) |
| `attention` (§8.4) | step-eval | 1 | 2048 (fixed-cost helpers: 1 cycle) |

Example:

```python
cfg = configure("moe", module, dynamic=True)   # also marks the retile accumulators
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


def configure(experiment: str, module: ModuleOp, dynamic: bool = False) -> HardwareConfig:
    """The configuration of `experiment` for `module` (annotating per-op `compute_bw`
    where the experiment sets one op apart)."""
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
