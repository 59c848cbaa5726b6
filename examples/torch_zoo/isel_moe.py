"""An MoE layer on the ILA accelerators (issue 26 item 6): the expert FFNs through isel, by recognition.

torch-mlir cannot export a sparse MoE to linalg (`torch.where` gives a
data-dependent size, `index_add` / `scatter_add` of it does not legalize), so the
isel route stops at the whole layer. This takes it apart with the same
`torch.export` recognition as the STeP route (`moe_match.MoEMatch`): the router
and the combine run on the host (numpy, as isel's host ops do), and each expert's
SwiGLU FFN — its own weights, whichever form the module wrote them in (stacked
`[E, ...]` or an `nn.ModuleList` of `nn.Linear`s) — is exported by torch-mlir at
its token count (`fx.export_and_import`, linalg-on-tensors), compiled with the
isel pipeline step-run's ILA backend uses (flexible isel onto FlexASR, HLSCNN,
VTA; store/load cancellation; commands) and run on the ILA simulators on the
tokens the router sent to it.

Example::

    from torch_zoo import ZOO
    from torch_zoo.isel_moe import moe_on_ilas
    module, args = ZOO["mixtral_moe"].build()
    r = moe_on_ilas(torch.export.export(module, args), args)
    r.output, r.invocations        # [8, 32] (the MoE output rows), {"flexasr": ...}
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from steplus.lowering.linalg_to_step.fx_graph import is_op
from steplus.lowering.linalg_to_step.moe_match import MoEMatch
from steplus.runtime.ila.host import run_function
from steplus.tools.loading import load_module

PIPELINE = ("isel{targets=flexasr,hlscnn,vta mode=flexible},ila-cancel-store-load,"
            "convert-ila-to-commands")


class SwiGLUExpert(nn.Module):
    """One expert as its own program: `(silu(h @ w_gate) * (h @ w_up)) @ w_down`."""

    def __init__(self, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray):
        super().__init__()
        self.gate = nn.Linear(*w_gate.shape, bias=False)
        self.up = nn.Linear(*w_up.shape, bias=False)
        self.down = nn.Linear(*w_down.shape, bias=False)
        with torch.no_grad():
            for lin, w in ((self.gate, w_gate), (self.up, w_up), (self.down, w_down)):
                lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T, np.float32)))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(h)) * self.up(h))


@dataclass
class IlaMoE:
    """The layer's output rows, the expert token counts, the ILA invocations and the
    relative error of each expert's ILA output against its float32 host run."""

    output: np.ndarray
    tokens: list[int]
    invocations: Counter = field(default_factory=Counter)
    expert_errors: list[float] = field(default_factory=list)


def _program_values(ep, args) -> dict:
    """Every node's value (torch, the whole exported program: the host's part)."""
    state = {**ep.state_dict, **getattr(ep, "constants", {})}
    values, user = [], list(args)
    for spec in ep.graph_signature.input_specs:
        values.append(state[spec.target] if spec.target is not None else user.pop(0))
    env: dict = {}

    class Record(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            env[n.name] = out
            return out

    with torch.no_grad():
        Record(ep.graph_module).run(*values)
    return env


def _export(expert: nn.Module, h: np.ndarray):
    from torch_mlir import fx

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        mod = fx.export_and_import(expert.eval(), torch.from_numpy(h), func_name="forward",
                                   output_type="linalg-on-tensors")
    return load_module("<expert>", PIPELINE, source=("<expert>", str(mod)))


def moe_on_ilas(ep, args) -> IlaMoE:
    """The first top-k MoE layer of `ep` run with its experts on the ILA simulators."""
    topk = next((n for n in ep.graph.nodes if is_op(n, "aten.topk.default")), None)
    if topk is None:
        raise ValueError("no top-k MoE layer (no aten.topk) in the program")
    m = MoEMatch(topk)
    shape, _B, _out, inputs = m.run()
    env = _program_values(ep, args)

    def arr(name):
        v = env[name] if name in env else None
        return None if v is None else v.detach().float().numpy()

    numpy_env = {k: v.detach().float().numpy() for k, v in env.items()
                 if isinstance(v, torch.Tensor)}
    stacked = {r: (m.derive[inputs[r]](numpy_env) if inputs[r] in m.derive else arr(inputs[r]))
               for r in ("w_gate", "w_up", "w_down")}
    x, idx, weights = arr(m.x.name), arr(m.idx.name), arr(m.weights.name)
    assert x is not None and idx is not None and weights is not None
    out = np.zeros_like(x, np.float64)
    res = IlaMoE(out, [])
    for e in range(shape.experts):
        tok, slot = np.nonzero(idx.astype(np.int64) == e)
        res.tokens.append(len(tok))
        if not len(tok):
            continue
        expert = SwiGLUExpert(stacked["w_gate"][e], stacked["w_up"][e], stacked["w_down"][e])
        h = np.ascontiguousarray(x[tok], np.float32)
        compiled = _export(expert, h)
        (y,), stats = run_function(compiled, "forward", [h], backend="ila")
        ref = expert(torch.from_numpy(h)).detach().numpy()
        res.expert_errors.append(float(np.linalg.norm(y - ref) / np.linalg.norm(ref)))
        res.invocations.update(stats.invocations)
        np.add.at(out, tok, np.asarray(y, np.float64) * weights[tok, slot][:, None])
    res.output = out
    return res


__all__ = ["IlaMoE", "SwiGLUExpert", "moe_on_ilas"]
