"""PyTorch -> STeP -> functional values -> cycles, for one zoo model (shared by the test and the bench).

- `export(model)`: the module, its inputs and `torch.export.export(module, args)`;
- `lower(model, ep, **over)`: `lower_exported(ep, **model.options | over)`;
- `run_functional(ep, low, args)`: every lowered part in the fabric's functional
  mode, in graph order (`steplus.tools.step_run_linalg.run_exported`), the MoE
  bound to the indices its lowered router computed; returns the output, the
  parts run and the ATen ops torch ran between them (views only, when the
  model reaches a whole graph; a dtype-changing cast named with its dtypes,
  `aten.to.dtype (int64 -> float32)`, so it is never taken for a view), and
  the routing used;
- `simulate(low, routing)`: each part on the fabric simulator (timing mode):
  cycles, off-chip bytes, on-chip peak. The parts are phases run one after
  another (cycles add up) and configured at once (on-chip peaks add up).

Example::

    from torch_zoo import ZOO
    from torch_zoo.harness import export, lower, run_functional, simulate
    module, args, ep = export(ZOO["mixtral_moe"])
    low = lower(ZOO["mixtral_moe"], ep)
    out, ran, torch_ops, routing = run_functional(ep, low, args)
    totals = simulate(low, routing)["total"]     # cycles, offchip_bytes, onchip_bytes
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch

from steplus.lowering.linalg_to_step.aten import lower_exported

VIEW_OPS = ("aten.view.default", "aten.reshape.default", "aten.transpose.int",
            "aten._unsafe_view.default", "aten.unsqueeze.default", "aten.squeeze.dim",
            "aten.contiguous.default", "aten.clone.default", "aten.permute.default",
            "aten.expand.default", "aten.to.dtype", "aten.flatten.using_ints",
            "aten.view_as.default", "aten.unflatten.int", "aten.select.int",
            "aten.dropout.default")
"""ATen ops that move no data: views of row-major memory, same-dtype casts, and dropout (the
zoo's modules run in eval mode, where dropout is the identity). A cast that changes the dtype
(`x.to(torch.float32)` of an integer tensor) computes: `run_functional` names it apart."""
CASTS = ("aten.to.dtype", "aten._to_copy.default")
ZERO_PAD = "aten.pad.default (all zero: a copy)"
"""How `run_functional` names an `nn.functional.pad` by zeros (HF Swin's `maybe_pad` when the
map is a multiple of the window): the same tensor, no data moved; any other pad computes."""
VIEW_OPS = (*VIEW_OPS, ZERO_PAD)


def zero_pad(node) -> bool:
    """`node` is `F.pad(x, (0, 0, ...))` (constant mode): its result is `x`."""
    pads = node.args[1] if str(node.target) == "aten.pad.default" and len(node.args) > 1 \
        else None
    mode = node.args[2] if len(node.args) > 2 else node.kwargs.get("mode", "constant")
    return isinstance(pads, (list, tuple)) and all(p == 0 for p in pads) and mode == "constant"


def _dtype(x):
    return getattr(getattr(x, "meta", {}).get("val"), "dtype", None)


def changes_dtype(node) -> bool:
    """`node` is a cast (`.to(dtype)`, `_to_copy`) whose result's dtype is not its input's."""
    return str(node.target) in CASTS and bool(node.args) and _dtype(node) != _dtype(node.args[0])


def is_view(node) -> bool:
    """`node` moves no data (VIEW_OPS, a cast only when it keeps the dtype, a pad by zeros)."""
    return str(node.target) in VIEW_OPS and not changes_dtype(node) or zero_pad(node)


def _cast_name(node) -> str:
    """A dtype-changing cast's name in the ops torch ran: never one of VIEW_OPS."""
    a, b = (str(_dtype(n)).removeprefix("torch.") for n in (node.args[0], node))
    return f"{node.target} ({a} -> {b})"


def export(model):
    module, args = model.build()
    return module, args, torch.export.export(module, args)


def lower(model, ep, **over):
    return lower_exported(ep, **{**model.options, **over})


def _router_routing(low, used: dict):
    """`routing(part, env)` for `run_exported`: an MoE part's (indices, weights) from its
    lowered router's outputs (or, with no router part, from torch's topk: a trace)."""
    def routing(part, env):
        if part.kind != "moe":
            return None
        routers = [p for p in low.graphs if p.role == "router"]
        if routers:
            weights, idx = (env[name] for name in routers[0].outputs)
        else:
            raise ValueError("the MoE router was not lowered (option dense)")
        idx = np.asarray(idx)
        if not np.array_equal(idx, np.round(idx)):
            raise ValueError("the lowered router's indices are not integers")
        used["routing"] = (idx.astype(np.int64), np.asarray(weights))
        return used["routing"]
    return routing


def run_functional(ep, low, args):
    from steplus.tools.step_run_linalg import run_exported

    from steplus.lowering.linalg_to_step.fx_graph import BOOKKEEPING, name_of

    used: dict = {}
    out, ran, torch_ops = run_exported(ep, low, args, routing=_router_routing(low, used))
    # the nodes torch ran, in graph order (outside every part), to name each cast by dtype
    parts = {n.name for p in low.graphs for n in p.covered} | {o for p in low.graphs
                                                              for o in p.outputs}
    nodes = [n for n in ep.graph.nodes if n.op == "call_function" and n.name not in parts
             and name_of(n) not in BOOKKEEPING]
    if [str(n.target) for n in nodes] != torch_ops:
        raise ValueError(f"torch ran {torch_ops}, not the uncovered ops {nodes}")
    torch_ops = [_cast_name(n) if changes_dtype(n) else ZERO_PAD if zero_pad(n) else op
                 for n, op in zip(nodes, torch_ops)]
    return out, ran, torch_ops, used.get("routing")


def _result(res) -> dict:
    return {"cycles": int(res.cycles), "offchip_bytes": int(res.offchip_read
                                                             + res.offchip_written),
            "onchip_bytes": int(res.onchip_peak)}


def simulate_part(part, routing=None, module=None) -> dict:
    """One part (or `module`, another design of it) on the fabric simulator."""
    from xdsl.context import Context

    from steplus.dialects.step import GraphOp
    from steplus.passes.step.specialize import StepSpecializePass
    from steplus.runtime.fabric.build import build_program

    module = (module or part.module).clone()
    if part.kind == "moe":
        if routing is None:
            raise ValueError("an MoE part needs the routing indices to simulate")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "routing.npz"
            np.savez(path, data=np.asarray(routing[0], np.int64))
            StepSpecializePass(routing=str(path), rewrite=True).apply(Context(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    return _result(build_program(graph).run())


def simulate(low, routing=None) -> dict:
    """Per part and in total (see the module doc)."""
    parts = [{"kind": p.kind, "role": p.role, **simulate_part(p, routing)} for p in low.graphs]
    total = {k: sum(p[k] for p in parts) for k in ("cycles", "offchip_bytes", "onchip_bytes")}
    return {"parts": parts, "total": total}


def dynamic_designs(part, routing=None) -> dict:
    """For an MoE part: static (as lowered) vs `step-dynamic-tiling`; for an attention
    part: static (interleaved) vs `step-dynamic-parallelize{factor=4}`."""
    from xdsl.context import Context

    from steplus.passes.step.dynamic_parallelize import StepDynamicParallelizePass
    from steplus.passes.step.dynamic_tiling import StepDynamicTilingPass

    dyn = part.module.clone()
    if part.kind == "moe":
        StepDynamicTilingPass().apply(Context(), dyn)
    else:
        StepDynamicParallelizePass(factor=4).apply(Context(), dyn)
    return {"static": simulate_part(part, routing),
            "dynamic": simulate_part(part, routing, module=dyn)}
