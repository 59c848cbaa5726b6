"""Compute contexts (the step dialect's compute ops: map, accum, scan, flat_map) with
the roofline rule of reference spec §3, and the re-tiling forms of flat_map and
accum (`retile_streamify`, `split_tiles`, `join_tiles`) that spend no cycles.

Per element (or aligned tuple of elements) an operator spends

    max(load, comp, store)
    load  = sum over inputs with read_from_mu of ceil(tile_bytes / PMU_BW)
    comp  = ceil(FLOPs / compute_bw)      (or the function's fixed cost)
    store = ceil(out_bytes / PMU_BW) if write_back_mu else 0

Channel order (back-pressure matters): Map peeks every input, works,
enqueues, then dequeues the inputs; Accum / MapAccum (rank r) peeks, works
(`max(load, comp)`), dequeues, and when the level reaches r also pays the
store term of the freshly re-initialised accumulator and emits the result
with level `L - r`. Scan emits the running value for every element.

A `Kernel` is the function of a map/accum region as data: a list of library
calls (`steplus.dialects.step.functions`) over argument slots. Its FLOPs are
the sum of its calls', except that the accumulating `add` of a region that
also computes something else (MapAccum: `acc + a @ b`) is fused and free.

Example:

```python
k = Kernel(n_args=3, calls=[("matmul", [0, 1]), ("add", [2, 3])], acc_slot=2)
AccumCtx("gate", k, rank=1, init_shape=(16, 64), compute_bw=4096, pmu_bw=256)
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from steplus.dialects.semantics.fusion import fused_add_calls
from steplus.dialects.step.functions import StepFunction, get_function
from steplus.runtime.fabric.channel import Channel, Element, Tile
from steplus.runtime.fabric.context import (
    DEQ, ENQ, PEEK, WAIT, Body, Context, SimulationError, StreamCtx,
)


class Kernel:
    """A region as data: `calls[i] = (fn, arg slots)` defines slot `n_args + i`."""

    __slots__ = ("n_args", "calls", "result", "acc_slot", "_cache", "_slots", "free_calls",
                 "retile")

    def __init__(self, n_args: int, calls: list[tuple[str, list[int]]],
                 result: int | None = None, acc_slot: int | None = None):
        self.n_args = n_args
        self.calls: list[tuple[StepFunction, list[int]]] = []
        for name, args in calls:
            f = get_function(name)
            if f is None:
                raise SimulationError(f"unknown step function '{name}'")
            self.calls.append((f, list(args)))
        self.result = result if result is not None else n_args + len(calls) - 1
        self.acc_slot = acc_slot
        self._cache: dict[tuple, tuple[int, int | None, tuple[int, int]]] = {}
        self._slots: dict[tuple, list[tuple[int, int]]] = {}
        self.free_calls = set(fused_add_calls([(f.name, a) for f, a in self.calls], acc_slot))
        self.retile = any(f.name == "retile_row" for f, _ in self.calls)

    def cost(self, shapes: tuple[tuple[int, int], ...]) -> tuple[int, int | None, tuple[int, int]]:
        """(FLOPs, fixed cycles or None, output shape) for argument tile shapes."""
        got = self._cache.get(shapes)
        if got is not None:
            return got
        slot = list(shapes)
        flops = 0
        fixed = None
        for i, (f, args) in enumerate(self.calls):
            ins = [slot[a] for a in args]
            if f.name == "zero":
                out = slot[self.acc_slot] if self.acc_slot is not None else (1, 1)
            else:
                out = f.out_shape(ins)
            if i not in self.free_calls:
                flops += f.flops(ins)
                if f.fixed_cycles is not None:
                    fixed = (fixed or 0) + f.fixed_cycles
            slot.append(out)
        got = (flops, fixed, slot[self.result])
        self._cache[shapes] = got
        self._slots[shapes] = slot
        return got

    def run(self, values: list[Any], shapes: tuple[tuple[int, int], ...] | None = None
            ) -> np.ndarray:
        """The region on the argument tiles' values (numpy arrays, functional mode).
        `shapes`: the argument tiles' declared `(rows, cols)` (their types), which
        tell a partially filled tile from a broadcast one in an accumulating add."""
        slot = list(values)
        declared: list[tuple[int, int]] | None = None
        if shapes is not None:
            self.cost(shapes)
            declared = self._slots[shapes]
        for f, args in self.calls:
            ins = [slot[a] for a in args]
            if f.name == "add" and self.acc_slot in args:
                ins = _fill_to_acc(ins, None if declared is None else [declared[a] for a in args])
            slot.append(f.numpy(*ins))
        return slot[self.result]


def _fill_to_acc(ins: list[np.ndarray], declared: list[tuple[int, int]] | None
                 ) -> list[np.ndarray]:
    """A partially filled tile (a KV tile's valid rows, so fewer score columns;
    a dynamic accumulator that starts with 0 rows) adds into the top-left
    block: its value is zero-filled to the largest value's shape. An operand
    broadcasts along an axis only where its declared tile dim (`declared`, the
    types' shapes) is 1: a `[1, 9]` value of a `[1, 32]` score tile, or a
    `[g, 1]` value of a `[g, 32]` one, is partly filled, not a row or column to
    broadcast. Without `declared`, a value with a dim of 1 is taken for a broadcast."""
    shapes = [np.shape(v) for v in ins]
    if any(len(s) != 2 for s in shapes) or len(set(shapes)) == 1:
        return ins
    rows, cols = max(s[0] for s in shapes), max(s[1] for s in shapes)
    out = []
    for k, (v, s) in enumerate(zip(ins, shapes)):
        if declared is None:
            pad = s[0] != 1 and s[1] != 1
            fill_r, fill_c = (rows - s[0], cols - s[1]) if pad else (0, 0)
        else:
            d = declared[k]
            fill_r = 0 if d[0] == 1 and s[0] == 1 else rows - s[0]
            fill_c = 0 if d[1] == 1 and s[1] == 1 else cols - s[1]
        if fill_r or fill_c:
            v = np.pad(v, ((0, fill_r), (0, fill_c)))
        out.append(v)
    return out


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class ComputeCtx(Context):
    """A map/accum/scan: a kernel over the aligned elements of `inputs`."""

    __slots__ = ("kernel", "compute_bw", "pmu_bw", "write_back", "functional", "inputs", "out",
                 "misaligned")

    def __init__(self, name: str, kernel: Kernel, compute_bw: int, pmu_bw: int,
                 write_back: bool = False, functional: bool = False):
        super().__init__(name)
        self.kernel = kernel
        self.compute_bw = compute_bw
        self.pmu_bw = pmu_bw
        self.write_back = write_back
        self.functional = functional
        self.inputs: list[Channel | None] = []
        self.out: Channel | None = None
        self.misaligned = 0

    def _load(self, tiles: Sequence[Tile]) -> int:
        bw = self.pmu_bw
        return sum(_ceil(t.nbytes, bw) for t in tiles if t.mu)

    def _comp(self, flops: int, fixed: int | None) -> int:
        self.flops += flops
        if fixed is not None:
            return fixed
        if not flops:
            return 0
        if self.compute_bw <= 0:
            raise SimulationError(f"{self.name}: compute_bw must be positive")
        return _ceil(flops, self.compute_bw)

    def _check_aligned(self, els: Sequence[Element]) -> None:
        """The reference assumes aligned inputs and does not check; the first
        input's level is the one used (counted in `misaligned` for diagnosis)."""
        if len(els) > 1 and any(e.level != els[0].level for e in els):
            self.misaligned += 1


def _valid_rows(tiles: Sequence[Tile], rows: int) -> int:
    """Padding rows stay padding through row-wise compute: a result with the
    rows of its first input keeps that input's count of valid rows (a
    statically tiled expert's padded tokens are dropped by RetileStreamify)."""
    t = tiles[0]
    return min(t.valid, rows) if t.rows == rows else rows


class MapCtx(ComputeCtx):
    """UnaryMap / BinaryMap (n-ary): peek all, work, enqueue, dequeue all."""

    __slots__ = ()

    def body(self) -> Body:
        inputs = self.inputs
        while True:
            # peek every input (each may block), then stop if one has ended
            els: list[Element] = []
            ended = False
            for ch in inputs:
                assert ch is not None
                el = self.peek_now(ch)
                if el is WAIT:
                    el = yield (PEEK, ch)
                if el is None:
                    ended = True
                else:
                    els.append(el)
            if ended:
                return
            self._check_aligned(els)
            tiles: list[Tile] = [e.data for e in els]
            flops, fixed, (r, c) = self.kernel.cost(tuple((t.rows, t.cols) for t in tiles))
            out = Tile(r, c, tiles[0].nb, self.write_back, valid=_valid_rows(tiles, r))
            store = _ceil(out.nbytes, self.pmu_bw) if self.write_back else 0
            self.work(max(self._load(tiles), self._comp(flops, fixed), store))
            self.firings += 1
            if self.functional:
                out.value = self.kernel.run([t.value for t in tiles],
                                            tuple((t.rows, t.cols) for t in tiles))
            if self.out is not None:
                oel = Element(out, els[0].level)
                if not self.enq_now(self.out, oel, self.clock):
                    yield (ENQ, self.out, oel, self.clock)
            for ch in inputs:
                assert ch is not None
                if self.deq_now(ch) is WAIT:
                    yield (DEQ, ch)


class AccumCtx(ComputeCtx):
    """Accum / MapAccum (rank r), or Scan with `scan=True` (see module doc)."""

    __slots__ = ("rank", "init_shape", "scan", "init")

    def __init__(self, name: str, kernel: Kernel, rank: int, init_shape: tuple[int, int],
                 compute_bw: int, pmu_bw: int, write_back: bool = False,
                 functional: bool = False, scan: bool = False,
                 init: Callable[[], np.ndarray] | None = None):
        super().__init__(name, kernel, compute_bw, pmu_bw, write_back, functional)
        self.rank = rank
        self.init_shape = init_shape
        self.scan = scan
        self.init = init  # callable () -> np.ndarray in functional mode

    def _fresh(self, nb: int) -> Tile:
        r, c = self.init_shape
        value = None
        if self.functional:
            # a retile accumulator starts empty: its rows are the ones it stacks
            value = self.init() if self.init else np.zeros((0 if self.kernel.retile else r, c))
        return Tile(r, c, nb, self.write_back, valid=0 if self.kernel.retile else r, value=value)

    def body(self) -> Body:
        acc: Tile | None = None
        r = self.rank
        inputs = self.inputs
        while True:
            # peek every input (each may block), then stop if one has ended
            els: list[Element] = []
            ended = False
            for ch in inputs:
                assert ch is not None
                el = self.peek_now(ch)
                if el is WAIT:
                    el = yield (PEEK, ch)
                if el is None:
                    ended = True
                else:
                    els.append(el)
            if ended:
                return
            self._check_aligned(els)
            tiles: list[Tile] = [e.data for e in els]
            if acc is None:
                acc = self._fresh(tiles[0].nb)
            flops, fixed, (rr, cc) = self.kernel.cost(
                (*((t.rows, t.cols) for t in tiles), (acc.rows, acc.cols)))
            cost = max(self._load(tiles), self._comp(flops, fixed))
            level = els[0].level
            emit = level >= r or self.scan
            if self.kernel.retile:  # RetileRow: rows stack, flag of the last input
                valid = acc.valid + tiles[0].valid
                # A static accumulator keeps its capacity (tile_N rows, the rest
                # padding); a dynamic one (`?` rows) grows with what it stacks.
                rows = rr if self.init_shape[0] > 0 else valid
                new = Tile(rows, cc, tiles[0].nb, tiles[0].mu, valid=valid)
            else:
                new = Tile(rr, cc, tiles[0].nb, self.write_back, valid=_valid_rows(tiles, rr))
            if self.functional:
                new.value = self.kernel.run([*(t.value for t in tiles), acc.value],
                                            (*((t.rows, t.cols) for t in tiles),
                                             (acc.rows, acc.cols)))
            if emit and self.write_back:
                ir, ic = self.init_shape
                cost = max(cost, _ceil(ir * ic * tiles[0].nb, self.pmu_bw))
            self.work(cost)
            self.firings += 1
            for ch in inputs:
                assert ch is not None
                if self.deq_now(ch) is WAIT:
                    yield (DEQ, ch)
            if level >= r:
                out_level = level - r
                acc = None
            else:
                out_level = level if self.scan else 0
                acc = new
            if emit:
                if new.rows > self.max_rows:
                    self.max_rows = new.rows
                if self.out is not None:
                    oel = Element(new, out_level)
                    if not self.enq_now(self.out, oel, self.clock):
                        yield (ENQ, self.out, oel, self.clock)


class RetileStreamifyCtx(StreamCtx):
    """RetileStreamify: one 1-row tile per valid row, the last with the input's level."""

    __slots__ = ()

    def body(self) -> Body:
        inp = self.inp
        assert inp is not None
        while True:
            el = self.deq_now(inp)
            if el is WAIT:
                el = yield (DEQ, inp)
            if el is None:
                return
            t = el.data
            for k in range(t.valid):
                v = t.value[k:k + 1] if t.value is not None else None
                row = Tile(1, t.cols, t.nb, t.mu, value=v)
                self.firings += 1
                if self.out is not None:
                    oel = Element(row, el.level if k == t.valid - 1 else 0)
                    if not self.enq_now(self.out, oel, self.clock):
                        yield (ENQ, self.out, oel, self.clock)


class SplitTilesCtx(StreamCtx):
    """SplitTiles (flat_map "split_tiles", step-hierarchical-tiling): each input
    tile becomes its `rows/r x cols/c` physical `r x c` tiles, row-major.

    With `rank` 2 the tiles form two new dims (the end of a row of tiles has
    level 1, the last tile level 2 + the input's); with `rank` 1 one dim (the
    last tile level 1 + the input's). Like RetileStreamify it spends no
    cycles; a physical tile keeps the valid rows of its part of the input."""

    __slots__ = ("r", "c", "rank")

    def __init__(self, name: str, r: int, c: int, rank: int):
        super().__init__(name)
        self.r, self.c, self.rank = r, c, rank

    def body(self) -> Body:
        r, c = self.r, self.c
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            t = el.data
            gi, gj = max(1, t.rows // r), max(1, t.cols // c)
            n = gi * gj
            for k in range(n):
                i, j = divmod(k, gj)
                if k == n - 1:
                    level = el.level + self.rank
                elif self.rank == 2 and j == gj - 1:
                    level = 1
                else:
                    level = 0
                v = t.value[i * r:(i + 1) * r, j * c:(j + 1) * c] if t.value is not None else None
                valid = min(r, max(0, t.valid - i * r))
                self.firings += 1
                if self.out is not None:
                    yield (ENQ, self.out, Element(Tile(r, c, t.nb, t.mu, valid, v), level),
                           self.clock)


class JoinTilesCtx(StreamCtx):
    """JoinTiles (accum "join_tiles" of `rank` 1 or 2): the physical tiles of
    a group (up to the first with level >= rank) are placed row-major into
    one `rows x cols` logical tile, emitted with level - rank. No cycles (like
    a retile accumulator: no FLOPs); holds one logical tile on chip."""

    __slots__ = ("rank", "rows", "cols", "functional")

    def __init__(self, name: str, rank: int, rows: int, cols: int, functional: bool = False):
        super().__init__(name)
        self.rank, self.rows, self.cols, self.functional = rank, rows, cols, functional

    def body(self) -> Body:
        k, valid, value, nb, mu = 0, 0, None, 4, False
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            t = el.data
            gj = max(1, self.cols // t.cols)
            i, j = divmod(k, gj)
            if t.valid:
                valid = max(valid, i * t.rows + t.valid)
            nb, mu = t.nb, t.mu
            if self.functional and t.value is not None:
                if value is None:
                    value = np.zeros((self.rows, self.cols), dtype=np.result_type(t.value))
                value[i * t.rows:(i + 1) * t.rows, j * t.cols:(j + 1) * t.cols] = t.value
            self.firings += 1
            k += 1
            if el.level >= self.rank:
                out = Tile(self.rows, self.cols, nb, mu, min(valid, self.rows), value)
                if self.out is not None:
                    yield (ENQ, self.out, Element(out, el.level - self.rank), self.clock)
                k, valid, value = 0, 0, None
