"""A minimal SwiGLU expert graph (reference spec §8.1) for validating the simulator.

`swiglu_graph(B, D, F, tm, tn)` builds the HDL-validation graph in the
reference node order (readers X, Wg, Wu, Wd; writer store; the Broadcast of X
last): gate/up are MapAccums over `zip(X, W)` with a one-step K reduction,
`down` accumulates `F/tn` steps with `write_back_mu`. `swiglu_traffic` is the
closed form of §5.5 and `swiglu_reference` the numpy result. (The official
workload builders live under examples/step/; this one only serves tests and
benchmarks of the fabric.)

Example:

```python
module = swiglu_graph(64, 256, 512, 16, 64)
m = build_program(module, get_preset("swiglu-hdl")).run()
assert m.offchip_traffic == swiglu_traffic(64, 256, 512, 16, 64)
```
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, UnitAttr, f32, i64,
)
from xdsl.ir import Block, Region

from steplus.dialects import step_ops as so
from steplus.dialects import step_routing as sr
from steplus.dialects.step import GraphOp
from steplus.dialects.step_types import StreamType, TileType, TupleType

SWEEP_TM = (16, 32, 64)
SWEEP_TN = (16, 32, 64, 128, 256)


def _arr(v):
    return DenseArrayBase.from_list(i64, list(v))


def _load(name, rows, cols, in_shape, out_shape, stride, base):
    t = StreamType(list(out_shape), TileType(rows, cols, f32))
    op = so.LinearOffChipLoadOp.create(result_types=[t], properties={
        "base_addr": IntegerAttr(base, i64), "tiled_in_shape": _arr(in_shape),
        "stride": _arr(stride), "tiled_out_shape": _arr(out_shape)})
    op.attributes["name"] = StringAttr(name)
    return op


def _region(arg_types, body):
    block = Block(arg_types=arg_types)
    ops, res = body(block.args)
    block.add_ops([*ops, so.YieldOp.create(operands=[res])])
    return Region(block)


def _apply(fn, args, rt):
    return so.ApplyOp.create(operands=list(args), result_types=[rt],
                             properties={"fn": StringAttr(fn)})


def _zip(a, b):
    ta, tb = a.type, b.type
    return sr.ZipOp.create(operands=[a, b], result_types=[
        StreamType(ta.dims, TupleType([ta.element, tb.element]))])


def _matmul_accum(name, zipped, acc_t, out_dims, write_back=False):
    el = zipped.results[0].type.element.elements.data

    def upd(args):
        mm = _apply("matmul", args[:2], acc_t)
        add = _apply("add", [args[2], mm.results[0]], acc_t)
        return [mm, add], add.results[0]

    def init(_):
        z = _apply("zero", [], acc_t)
        return [z], z.results[0]

    op = so.AccumOp.create(
        operands=[zipped.results[0]], result_types=[StreamType(out_dims, acc_t)],
        regions=[_region([*el, acc_t], upd), _region([], init)],
        properties={"rank": IntegerAttr(1, i64)})
    op.attributes["name"] = StringAttr(name)
    if write_back:
        op.attributes["write_back_mu"] = UnitAttr()
    return op


def _map(name, fn, inp, out_t, dims):
    el = inp.type.element
    args = list(el.elements.data) if isinstance(el, TupleType) else [el]

    def body(a):
        ap = _apply(fn, a, out_t)
        return [ap], ap.results[0]

    op = so.MapOp.create(operands=[inp], result_types=[StreamType(dims, out_t)],
                         regions=[_region(args, body)])
    op.attributes["name"] = StringAttr(name)
    return op


def swiglu_graph(B: int, D: int, F: int, tm: int, tn: int) -> ModuleOp:
    """The §8.1 SwiGLU graph ("mn_mk" schedule, f32, K of gate/up and N of down untiled)."""
    if B % tm or F % tn:
        raise ValueError("tm must divide B and tn must divide F")
    M, N = B // tm, F // tn
    ops = []
    X = _load("X", tm, D, (M, 1, 1), (M, N, 1), (1, 0, 1), 0)
    Wg = _load("Wg", D, tn, (1, 1, N), (M, N, 1), (0, 1, N), 1 << 24)
    Wu = _load("Wu", D, tn, (1, 1, N), (M, N, 1), (0, 1, N), 2 << 24)
    Wd = _load("Wd", tn, D, (N, 1, 1), (M, 1, N), (0, 1, 1), 3 << 24)
    xt = X.results[0].type
    bc = sr.BroadcastOp.create(operands=[X.results[0]], result_types=[xt, xt])
    t_mn = TileType(tm, tn, f32)
    zg = _zip(bc.results[0], Wg.results[0])
    gate = _matmul_accum("gate", zg, t_mn, [M, N])
    zu = _zip(bc.results[1], Wu.results[0])
    up = _matmul_accum("up", zu, t_mn, [M, N])
    silu = _map("silu", "silu", gate.results[0], t_mn, [M, N])
    zm = _zip(silu.results[0], up.results[0])
    mul = _map("mul", "mul", zm.results[0], t_mn, [M, N])
    from xdsl.dialects.builtin import i1

    reshape = sr.ReshapeOp.create(
        operands=[mul.results[0]],
        result_types=[StreamType([M, 1, N], t_mn), StreamType([M, 1, N], i1)],
        properties={"split_dim": IntegerAttr(1, i64), "chunk_size": IntegerAttr(1, i64)})
    reshape.attributes["name"] = StringAttr("reshape")
    zd = _zip(reshape.results[0], Wd.results[0])
    down = _matmul_accum("down", zd, TileType(tm, D, f32), [M, 1], write_back=True)
    store = so.LinearOffChipStoreOp.create(
        operands=[down.results[0]], properties={"base_addr": IntegerAttr(4 << 24, i64)})
    store.attributes["name"] = StringAttr("store")
    ops = [X, Wg, zg, gate, Wu, zu, up, silu, zm, mul, reshape, Wd, zd, down, store, bc]
    g = GraphOp(f"swiglu_tm{tm}_tn{tn}", Region(Block(ops)))
    m = ModuleOp([g])
    m.verify()
    return m


def swiglu_traffic(B: int, D: int, F: int, tm: int, tn: int) -> int:
    """§5.5: input re-read per N tile, weights per M tile, f32 output."""
    return 4 * B * D * (F // tn) + 3 * 4 * D * F * (B // tm) + 4 * B * D


def swiglu_reference(X, Wg, Wu, Wd) -> np.ndarray:
    g = X @ Wg
    return ((g / (1.0 + np.exp(-g))) * (X @ Wu)) @ Wd
