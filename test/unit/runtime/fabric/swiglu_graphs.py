"""The §8.1 SwiGLU graphs for the fabric tests: examples/workloads/graphs.py's
builder (the project's one), each single-result op named after its SSA name so
the simulator's contexts carry the reference names (X, Wg, gate, ..., down).

Example:

```python
m = build_program(swiglu_graph(64, 256, 512, 16, 64), HDL).run()
assert m.offchip_traffic == swiglu_traffic(64, 256, 512, 16, 64)
```
"""

from __future__ import annotations


from xdsl.dialects.builtin import ModuleOp, StringAttr


from steplus.examples.workloads import graphs as workloads

SWEEP_TM, SWEEP_TN = workloads.SWEEP_TM, workloads.SWEEP_TN
swiglu_reference = workloads.swiglu_reference


def swiglu_graph(B: int, D: int, F: int, tm: int, tn: int) -> ModuleOp:
    module = workloads.swiglu(tm, tn, B, D, F)
    for op in module.walk():
        if len(op.results) == 1 and op.results[0].name_hint and "name" not in op.attributes:
            op.attributes["name"] = StringAttr(op.results[0].name_hint)
    return module


def swiglu_traffic(B: int, D: int, F: int, tm: int, tn: int) -> int:
    return workloads.swiglu_traffic(tm, tn, B, D, F)
