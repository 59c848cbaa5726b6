"""The STeP reference workloads as step graphs, built with the Python frontend.

Exactly the graphs of the reference-workload spec (`step-reference-workloads.md`
§8), in its construction order:

- `swiglu(tm, tn)`: the SwiGLU expert of the HDL validation (§8.1; B=64,
  D=256, F=512, f32 everywhere, X re-read per N tile, weights per M tile,
  `down` with `write_back_mu`), the project's one SwiGLU builder (the fabric
  tests and benches use it too); `swiglu_traffic` is its §5.5 closed form and
  `swiglu_reference` the numpy result;
- `moe(model, tile_n)`: the weight-stationary MoE layer (§8.2) for
  Mixtral-8x7B or Qwen3-30B-A3B, static tiling (`tile_n` tokens per tile,
  zero-padded) or dynamic tiling (`tile_n=None`: one tile of exactly the
  expert's tokens); weights and activations in bf16 ("mock bf16", 2 bytes),
  accumulators and the stored output in f32. The batch `B` and the
  per-expert token counts `B_0 .. B_{E-1}` are symbols: bind them to a
  routing trace with `step-specialize{routing=...}`;
- `moe_time_multiplexed(model, regions, tile_n)`: configuration
  time-multiplexing (§8.3): `regions` shared expert pipelines behind
  EagerMerges, weights fetched by RandomOffChipLoads addressed by the merge's
  selector (tile_F = 48).

    python examples/workloads/graphs.py   # (re)writes examples/step/{swiglu,moe}_*.mlir

The committed .mlir files are this script's output (a test checks they are
current).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


from xdsl.dialects.builtin import ModuleOp, UnitAttr, bf16, f32
from xdsl.ir import Operation

from steplus.examples.workloads import generated
from steplus.dialects.step.builder import Graph, Stream, TileType, eager_merge
from steplus.lowering.linalg_to_step.moe_graph import MoEShape, combine, group_tokens, moe_graph

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class MoEModel:
    name: str
    experts: int  # E
    top_k: int  # K
    hidden: int  # D
    inter: int  # F


MODELS = {
    "mixtral": MoEModel("mixtral", 8, 2, 4096, 14336),
    "qwen": MoEModel("qwen", 128, 8, 2048, 768),
}
TILE_F = 64
SWEEP_TM = (16, 32, 64)  # the §8.1 sweep, tm outer
SWEEP_TN = (16, 32, 64, 128, 256)


def swiglu(tm: int, tn: int, batch: int = 64, hidden: int = 256, inter: int = 512) -> ModuleOp:
    """SwiGLU expert, schedule "mn_mk" (§8.1): (SiLU(X Wg) * (X Wu)) Wd, f32."""
    B, D, F = batch, hidden, inter
    g = Graph(f"swiglu_tm{tm}_tn{tn}")
    m, n = B // tm, F // tn
    x = g.load((tm, D), f32, [m, n, 1], in_shape=[m, 1, 1], stride=[1, 0, 1], base_addr=0, name="X")
    wg = g.load((D, tn), f32, [m, n, 1], in_shape=[1, 1, n], stride=[0, 1, n], base_addr=1 << 24, name="Wg")
    xg, xu = x.broadcast(2, ["X_gate", "X_up"])
    gate = xg.accum("matmul", 1, wg, acc=TileType(tm, tn, f32), combine="add", name="gate")
    wu = g.load((D, tn), f32, [m, n, 1], in_shape=[1, 1, n], stride=[0, 1, n], base_addr=2 << 24, name="Wu")
    up = xu.accum("matmul", 1, wu, acc=TileType(tm, tn, f32), combine="add", name="up")
    act = gate.map("silu", name="silu")
    h = act.map("mul", up, name="mul")
    hr, pad = h.reshape(1, split_dim=1, name="reshape")
    pad.consume()
    wd = g.load((tn, D), f32, [m, 1, n], in_shape=[n, 1, 1], stride=[0, 1, 1], base_addr=3 << 24, name="Wd")
    down = hr.accum("matmul", 1, wd, acc=TileType(tm, D, f32), combine="add", name="down")
    accum = down.value.owner
    assert isinstance(accum, Operation)  # the builder's step.accum
    accum.attributes["write_back_mu"] = UnitAttr()  # §8.1 node 10
    down.store(base_addr=1 << 30)
    return g.module()


def swiglu_traffic(tm: int, tn: int, batch: int = 64, hidden: int = 256, inter: int = 512) -> int:
    """§5.5: the input re-read per N tile, the weights per M tile, f32 output (bytes)."""
    B, D, F = batch, hidden, inter
    return 4 * B * D * (F // tn) + 3 * 4 * D * F * (B // tm) + 4 * B * D


def swiglu_reference(X, Wg, Wu, Wd):
    """(SiLU(X Wg) * (X Wu)) Wd in numpy (float64 arrays in, array out)."""
    import numpy as np

    g = X @ Wg
    return ((g / (1.0 + np.exp(-g))) * (X @ Wu)) @ Wd


def moe(model: MoEModel, tile_n: int | None, tile_f: int = TILE_F) -> ModuleOp:
    """The weight-stationary MoE layer (§8.2); `tile_n=None` is dynamic tiling.

    The graph is `lowering.linalg_to_step.moe_graph`'s, the one a recognized
    PyTorch MoE layer lowers to (one builder for both)."""
    kind = f"tn{tile_n}" if tile_n is not None else "dyn"
    return moe_graph(_shape(model), tile_n, tile_f, name=f"moe_{model.name}_{kind}")


def _shape(model: MoEModel) -> MoEShape:
    return MoEShape(model.experts, model.top_k, model.hidden, model.inter)


def moe_time_multiplexed(model: MoEModel, regions: int, tile_n: int | None,
                         tile_f: int = 48) -> ModuleOp:
    """Configuration time-multiplexing (§8.3): `regions` shared expert pipelines.

    Experts are grouped contiguously (E/R per region); each region merges its
    experts' token tiles eagerly, fetches the chosen expert's weights with
    RandomOffChipLoads addressed by the merge's selector, and partitions its
    results back to the experts."""
    E, D, F = model.experts, model.hidden, model.inter
    if E % regions:
        raise ValueError(f"{E} experts do not split into {regions} regions")
    per = E // regions
    nf = F // tile_f
    kind = f"tn{tile_n}" if tile_n is not None else "dyn"
    g = Graph(f"moe_{model.name}_tm{regions}_{kind}")
    acc, w_sel, acc_tile = group_tokens(g, _shape(model), tile_n)
    wbytes = 2 * D * F

    def base(which: int, r: int) -> int:  # [up | gate | down] weights, expert-major
        return (1 << 32) + which * E * wbytes + r * per * wbytes

    reps, sels, addrs = [], [], []
    for r in range(regions):
        data, sel = eager_merge(acc[r * per:(r + 1) * per], [f"em{r}_data", f"em{r}_sel"])
        reps.append(data.repeat(nf, name=f"rep{r}").broadcast(2, [f"rep{r}_up", f"rep{r}_gate"]))
        sel_addr, sel_part = sel.broadcast(2, [f"sel{r}_addr", f"sel{r}_part"])
        sels.append(sel_part)
        addrs.append(sel_addr.expert_addr_gen(nf, name=f"addr{r}").broadcast(
            3, [f"addr{r}_up", f"addr{r}_gate", f"addr{r}_down"]))
    ups = [reps[r][0].map("matmul", g.random_load(addrs[r][0], (D, tile_f), bf16, [per * nf],
                                                  base(0, r), name=f"up_ld{r}"),
                          dtype=f32, name=f"up{r}") for r in range(regions)]
    gates = [reps[r][1].map("matmul", g.random_load(addrs[r][1], (D, tile_f), bf16, [per * nf],
                                                    base(1, r), name=f"gate_ld{r}"),
                            dtype=f32, name=f"gate{r}") for r in range(regions)]
    acts = [gt.map("silu", name=f"act{r}") for r, gt in enumerate(gates)]
    projs = [u.map("mul", a, name=f"proj{r}") for r, (u, a) in enumerate(zip(ups, acts))]
    rows: list[Stream] = []
    for r in range(regions):
        w = g.random_load(addrs[r][2], (tile_f, D), bf16, [per * nf], base(2, r),
                          name=f"down_ld{r}")
        down = projs[r].accum("matmul", 1, w, acc=acc_tile, combine="add", name=f"down{r}")
        for j, out in enumerate(down.partition(sels[r], [f"pres{r}_{j}" for j in range(per)])):
            rows.append(out.flat_map("retile_streamify", 0, name=f"rt{r * per + j}"))
    combine(g, _shape(model), rows, w_sel)
    return g.module()


def configurations() -> dict[str, ModuleOp]:
    """File stem -> graph, for every committed example."""
    out: dict[str, ModuleOp] = {}
    for name, model in MODELS.items():
        for tile_n in (16, 64, None):
            out[f"moe_{name}_{'dyn' if tile_n is None else f'tn{tile_n}'}"] = moe(model, tile_n)
    for tm in SWEEP_TM:
        for tn in SWEEP_TN:
            out[f"swiglu_tm{tm}_tn{tn}"] = swiglu(tm, tn)
    return out


GENERATOR = "examples/workloads/graphs.py"


def mlir_text(module: ModuleOp) -> str:
    """The committed text of one of this module's graphs."""
    return generated.mlir_text(module, GENERATOR)


def write_all(directory: Path = generated.OUT) -> list[Path]:
    """(Re)write every committed graph of this module."""
    return generated.write_graphs(configurations(), GENERATOR, directory)


if __name__ == "__main__":
    for p in write_all():
        print(p.relative_to(HERE.parent.parent), file=sys.stderr)
