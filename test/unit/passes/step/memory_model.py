"""A memory model for functional simulation tests: the tile at byte address `a`
holds small integers drawn from a generator seeded by `a`, so every load reads
the same numbers whichever graph, load operator or address stream reaches that
tile (`bind_memory`); `written` runs a graph functionally and returns what its
stores wrote."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.dialects.step.types import StreamType, TileType
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.contexts import RandomStoreCtx, StoreCtx


def tile_at(addr: int, rows: int, cols: int) -> np.ndarray:
    rng = np.random.default_rng(addr % (1 << 63))
    return rng.integers(-2, 3, (rows, cols)).astype(np.float64)


def bind_memory(graph: GraphOp) -> dict:
    """Name every load `ld<k>` and give it its view of the memory model."""
    tensors = {}
    stores = [op for op in graph.body.block.ops if isinstance(op, so.RandomOffChipStoreOp)]
    for k, op in enumerate(stores):  # the written tensor (its base) names the store
        op.attributes["name"] = StringAttr(f"st{op.base_addr.value.data}_{k}")
    loads = [op for op in graph.body.block.ops
             if isinstance(op, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp)]
    for k, op in enumerate(loads):
        name = f"ld{k}"
        op.attributes["name"] = StringAttr(name)
        t = op.output.type
        assert isinstance(t, StreamType) and isinstance(t.element, TileType)
        rows, cols = t.element.rows.data, t.element.cols.data
        nbytes = rows * cols * t.element.bytes_per_scalar()
        base = op.base_addr.value.data
        if isinstance(op, so.RandomOffChipLoadOp):
            tensors[name] = lambda i, b=base, r=rows, c=cols, n=nbytes: tile_at(b + i * n, r, c)
            continue
        in_shape = [int(x) for x in op.tiled_in_shape.get_values()]
        ref = op.ref
        if ref is not None and ref.owner is graph.body.block:  # a bound reference argument
            in_shape = [int(d) for d in ref.type.dims] + in_shape
        total = int(np.prod(in_shape))
        inner = in_shape[-1] if len(in_shape) >= 2 else 1
        dense = np.zeros((-(-total // inner) * rows, inner * cols))
        for lin in range(total):
            bi, bj = divmod(lin, inner)
            dense[bi * rows:(bi + 1) * rows, bj * cols:(bj + 1) * cols] = \
                tile_at(base + lin * nbytes, rows, cols)
        tensors[name] = dense
    return tensors


def written(module: ModuleOp) -> tuple[dict, list]:
    """Run functionally; (random stores: address -> tile, linear stores' tiles in order)."""
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    prog = build_program(graph, functional=True, tensors=bind_memory(graph))
    prog.run()
    by_addr, ordered = {}, []
    for ctx in prog.sim.contexts:
        if isinstance(ctx, RandomStoreCtx):
            for a, v in ctx.stored:
                key = (ctx.name.split("_")[0], int(np.ravel(a)[0]))
                by_addr[key] = np.asarray(v)
        elif isinstance(ctx, StoreCtx):
            ordered.extend(np.asarray(v) for v in ctx.stored)
    return by_addr, ordered


def assert_same_writes(a: ModuleOp, b: ModuleOp) -> int:
    (ra, la), (rb, lb) = written(a), written(b)
    assert ra.keys() == rb.keys()
    for k in ra:
        np.testing.assert_allclose(ra[k], rb[k], rtol=1e-9, err_msg=str(k))
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(x, y, rtol=1e-9)
    return len(ra) + len(la)
