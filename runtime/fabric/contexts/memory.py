"""Memory contexts: off-chip loads and stores (reference spec §2.6; the step dialect's
memory ops `linear_offchip_load/store`, `random_offchip_load/store`).

Each issues one tile at a time to the HBM model (`(HBM, n_req)` with
`n_req = rows * ceil(cols * nb / 64)`) and waits for all its responses.

- `LoadCtx` walks `tiled_out_shape` (row-major); with a `ref` input it is the
  reference-driven DynOffChipLoad (one full walk per ref element, the last tile
  of a walk gets level `len(shape) + L_ref`).
- `RandomLoadCtx` loads one tile per address element, with the address's level.
- `StoreCtx` peeks its input, writes it, then dequeues (the FIFO slot is held).
  Its requests follow the simulated tile (bf16 rows in the MoE graphs, as in
  the reference simulator, §1.2); the bytes it counts follow the declared
  element type of its input when known (`declared_nb`: f32 there, as §5.1
  counts stores), so the traffic metric equals step-metrics'.
- `RandomStoreCtx` writes the data tile at the peeked address and emits a 1x1 ack.

Functional mode: a load reads its tiles from a 2-D numpy tensor (tile at
flat index `sum(i_k * stride_k)` of `tiled_in_shape`); a store records the
tiles it writes in `stored`.

Example (what `runtime/fabric/build.py` builds for a load):

```python
LoadCtx("X", rows=16, cols=256, nb=4, shape=(4, 32, 1), stride=(1, 0, 1),
        in_shape=(4, 1), tensor=None)
```
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from steplus.runtime.fabric.channel import Channel, Element, Tile
from steplus.runtime.fabric.context import (
    DEQ, ENQ, HBM, PEEK, WAIT, Body, Command, Context, SimulationError,
)

Tensor = np.ndarray | Callable[[int], np.ndarray]
"""A functional-mode input: a 2-D array, or tile index -> tile (a sparse tensor)."""


def stop_level(index: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """Level of the element at `index` of a generated stream of `shape` (§1.2)."""
    n = len(shape)
    level = 0
    for d in range(n - 1, -1, -1):
        if index[d] == shape[d] - 1:
            level = n - d
        else:
            break
    return level


def walk_levels(shape: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
    """The row-major walk of `shape` with each element's stop level."""
    return [(ix, stop_level(ix, shape)) for ix in itertools.product(*(range(s) for s in shape))]


def n_requests(rows: int, cols: int, nb: int, req_bytes: int = 64) -> int:
    return rows * -(-(cols * nb) // req_bytes)


class MemCtx(Context):
    """A context that moves tiles through the HBM model, one tile at a time."""

    is_memory = True
    __slots__ = ("req_bytes", "max_tile_bytes", "tiles")

    def __init__(self, name: str, req_bytes: int = 64):
        super().__init__(name)
        self.req_bytes = req_bytes
        self.max_tile_bytes = 0
        self.tiles = 0

    def _transfer(self, tile: Tile, counted_nb: int | None = None) -> Command:
        self.tiles += 1
        self.firings += 1
        if tile.nbytes > self.max_tile_bytes:
            self.max_tile_bytes = tile.nbytes
        nbytes = tile.nbytes if counted_nb is None else tile.rows * tile.cols * counted_nb
        if self.hbm_role == "r":
            self.bytes_read += nbytes
        else:
            self.bytes_written += nbytes
        return (HBM, n_requests(tile.rows, tile.cols, tile.nb, self.req_bytes))


class LoadCtx(MemCtx):
    """OffChipLoad / DynOffChipLoad (see module doc)."""

    hbm_role = "r"
    __slots__ = ("rows", "cols", "nb", "shape", "stride", "in_shape", "tensor", "walk", "ref",
                 "out")

    def __init__(self, name: str, rows: int, cols: int, nb: int, shape: Sequence[int],
                 stride: Sequence[int] | None = None, in_shape: Sequence[int] | None = None,
                 tensor: Tensor | None = None, req_bytes: int = 64):
        super().__init__(name, req_bytes)
        self.rows, self.cols, self.nb = rows, cols, nb
        self.shape = tuple(shape)
        self.stride = tuple(stride) if stride is not None else None
        self.in_shape = tuple(in_shape) if in_shape is not None else self.shape
        self.tensor = tensor
        self.walk = walk_levels(self.shape)
        self.ref: Channel | None = None  # set for DynOffChipLoad
        self.out: Channel | None = None

    def _value(self, ix: tuple[int, ...]) -> np.ndarray | None:
        t = self.tensor
        if t is None:
            return None
        if not isinstance(t, np.ndarray):
            raise SimulationError(f"{self.name}: a linear load reads a 2-D tensor, "
                                  "not a tile function")
        stride = self.stride or tuple(
            int(np.prod(self.shape[k + 1:])) for k in range(len(self.shape)))
        lin = sum(i * s for i, s in zip(ix, stride))
        inner = self.in_shape[-1] if len(self.in_shape) >= 2 else 1
        bi, bj = divmod(lin, inner)
        r, c = self.rows, self.cols
        return t[bi * r:(bi + 1) * r, bj * c:(bj + 1) * c]

    def _one_walk(self, extra_level: int | None) -> Body:
        n = len(self.shape)
        last = len(self.walk) - 1
        for k, (ix, level) in enumerate(self.walk):
            tile = Tile(self.rows, self.cols, self.nb, True, value=self._value(ix))
            yield self._transfer(tile)
            if k == last and extra_level:
                level = n + extra_level
            if self.out is not None:
                oel = Element(tile, level)
                if not self.enq_now(self.out, oel, self.clock):
                    yield (ENQ, self.out, oel, self.clock)

    def body(self) -> Body:
        ref = self.ref
        if ref is None:
            yield from self._one_walk(None)
            return
        while True:
            el = self.deq_now(ref)
            if el is WAIT:
                el = yield (DEQ, ref)
            if el is None:
                return
            yield from self._one_walk(el.level)


class RandomLoadCtx(MemCtx):
    """RandomOffChipLoad: one tile per address element, with the address's level."""

    hbm_role = "r"
    __slots__ = ("rows", "cols", "nb", "tensor", "in_shape", "addr", "out")

    def __init__(self, name: str, rows: int, cols: int, nb: int, tensor: Tensor | None = None,
                 in_shape: Sequence[int] | None = None, req_bytes: int = 64):
        super().__init__(name, req_bytes)
        self.rows, self.cols, self.nb = rows, cols, nb
        self.tensor = tensor
        self.in_shape = tuple(in_shape) if in_shape else None
        self.addr: Channel | None = None
        self.out: Channel | None = None

    def body(self) -> Body:
        while True:
            a = yield (DEQ, self.addr)
            if a is None:
                return
            value = None
            if callable(self.tensor):  # a sparse tensor: tile index -> tile
                value = self.tensor(int(np.asarray(a.data.value).reshape(-1)[0]))
            elif self.tensor is not None:
                idx = int(np.asarray(a.data.value).reshape(-1)[0]) if a.data.value is not None else 0
                inner = self.in_shape[-1] if self.in_shape and len(self.in_shape) >= 2 else 1
                bi, bj = divmod(idx, inner)
                value = self.tensor[bi * self.rows:(bi + 1) * self.rows,
                                    bj * self.cols:(bj + 1) * self.cols]
            tile = Tile(self.rows, self.cols, self.nb, True, value=value)
            yield self._transfer(tile)
            if self.out is not None:
                yield (ENQ, self.out, Element(tile, a.level), self.clock)


class StoreCtx(MemCtx):
    """OffChipStore: peek the input tile, write it, then dequeue it."""

    hbm_role = "w"
    __slots__ = ("inp", "declared_nb", "stored")

    def __init__(self, name: str, req_bytes: int = 64, declared_nb: int | None = None):
        super().__init__(name, req_bytes)
        self.inp: Channel | None = None
        self.declared_nb = declared_nb  # bytes/element counted in the traffic metric
        self.stored: list[np.ndarray | None] = []

    def body(self) -> Body:
        inp = self.inp
        assert inp is not None
        while True:
            el = self.peek_now(inp)
            if el is WAIT:
                el = yield (PEEK, inp)
            if el is None:
                return
            tile = el.data
            if not isinstance(tile, Tile):
                raise SimulationError(f"{self.name}: can only store tiles, got {tile!r}")
            yield self._transfer(tile, self.declared_nb)
            self.stored.append(tile.value)
            if self.deq_now(inp) is WAIT:
                yield (DEQ, inp)


class RandomStoreCtx(MemCtx):
    """RandomOffChipStore: write the data tile at the address, emit a 1x1 ack."""

    hbm_role = "w"
    __slots__ = ("addr", "data", "out", "buffer_depth", "stored")

    def __init__(self, name: str, buffer_depth: int = 1, req_bytes: int = 64):
        super().__init__(name, req_bytes)
        self.addr: Channel | None = None
        self.data: Channel | None = None
        self.out: Channel | None = None
        self.buffer_depth = buffer_depth
        self.stored: list[tuple[object, object]] = []

    def body(self) -> Body:
        while True:
            a = yield (PEEK, self.addr)
            d = yield (PEEK, self.data)
            if a is None or d is None:
                return
            yield self._transfer(d.data)
            self.stored.append((a.data.value, d.data.value))
            if self.out is not None:
                yield (ENQ, self.out, Element(Tile(1, 1, 8), a.level), self.clock)
            yield (DEQ, self.addr)
            yield (DEQ, self.data)
