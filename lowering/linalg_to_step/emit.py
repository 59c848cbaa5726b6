"""Tiling and emission: a recognized tensor DAG -> one `step.graph`.

Every stream value has a layout: `[Bt,] [M/tm, N/tn]` tiles of `tm x tn` (a
batch dim outermost for 3-D tensors), or `[Bt,] [M/tm]` tiles of `tm x 1`
for a column (a row reduction's result). A matmul `C[M,N] = A[M,K] B[K,N]`
with tiles `tm, tn, tk` walks `([Bt,] M/tm, N/tn, K/tk)`: both operands are
streamed in that order (A re-read once per N tile, B once per M tile) and an
`accum` of rank 1 reduces K (`matmul`, or `matmul_t` for a transposed weight,
`add` into a zero `tm x tn` f32 tile); a batched matmul walks the batch
outermost. A left operand computed by an earlier matmul streams straight in
(a `reshape` with chunk 1 adds the size-1 N dim); it cannot be re-read per N
tile, so such a matmul tiles M and K only (schedule "mk"). Element-wise ops
are `map`s fused into the stream; a column joins a row-tiled stream through
a `repeat` over its N tiles. A row reduction is an `accum` of rank 1 over
the N tiles (`row_sum` + `add` from `zero`, `row_max` + `max` from
`neg_inf`). A value that feeds a row reduction and, through another path,
an op that waits for that reduction is re-loaded (an argument) or must be
one tile wide (a computed value: no on-chip row buffer is allocated).
Function arguments are loaded in the layout their consumer needs (one load
per layout, shared through a `broadcast`). Results are stored.

Emission order: the matmuls a value depends on first, then its element-wise
epilogue (the reference SwiGLU order: X, Wg, gate, Wu, up, silu, mul, down).

Example: `emit_graph(recognize(fn), EmitOptions(...))` on torch's SwiGLU FFN
is op for op `examples/workloads/graphs.py`'s `swiglu(tm, tn)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import UnitAttr, f32
from xdsl.ir import Attribute, Operation

from steplus.dialects.step.builder import Graph, Stream
from steplus.dialects.step.functions import get_function
from steplus.dialects.step.types import TileType
from steplus.lowering.linalg_to_step.options import Tile, layout
from steplus.lowering.linalg_to_step.recognize import Function, Node
from steplus.utils.diagnostics import OpDiagnosticError, emit


def write_back_mu(s: Stream) -> None:
    """Mark the op producing `s` as writing its result back to a memory unit."""
    op = s.value.owner
    assert isinstance(op, Operation)
    op.attributes["write_back_mu"] = UnitAttr()


@dataclass(frozen=True)
class Layout:
    """A stream of `[bt,] [mt, nt]` tiles of `tm x tn` (`col`: `[bt,] [mt]` of `tm x 1`)."""

    tm: int
    tn: int
    mt: int
    nt: int
    bt: int | None = None
    col: bool = False

    @property
    def dims(self) -> tuple[int, ...]:
        return (*(() if self.bt is None else (self.bt,)),
                *((self.mt,) if self.col else (self.mt, self.nt)))

    def assemble(self, tiles: list[np.ndarray]) -> np.ndarray:
        """The stored tiles (stream order) as the 2-D array `[Bt * M, N]`."""
        nt = 1 if self.col else self.nt
        rows = (self.bt or 1) * self.mt
        return np.block([[np.asarray(tiles[i * nt + j]) for j in range(nt)]
                         for i in range(rows)])


@dataclass(frozen=True)
class LoadKey:
    """One `linear_offchip_load`: argument, tile, walk, strides, and the 2-D
    view `(rows, cols)` of the argument its tiles index; `copy` > 0: a load
    not shared with the others of the same walk."""

    arg: int
    tile: tuple[int, int]
    out_shape: tuple[int, ...]
    in_shape: tuple[int, ...]
    stride: tuple[int, ...]
    view: tuple[int, int] = (0, 0)
    copy: int = 0


@dataclass
class MatmulPlan:
    tm: int
    tn: int
    tk: int
    a: LoadKey | Node  # a load, or the streamed producer
    b: LoadKey


@dataclass
class EmitOptions:
    tiles: dict[int | None, Tile]
    schedule: list[str]
    memory: dict[str, int]


@dataclass
class Lowered:
    """The graph built for one function and where its tensors live.

    `loads`: per `linear_offchip_load` in graph order, the argument it reads
    and the 2-D view `(rows, cols)` its tiles index (bind `arg.reshape(view)`);
    `constants`: the values of the tensor constants, by argument index (after the
    function's arguments: `arg{index}` in `addresses`);
    `result_layouts` / `result_shapes`: how the stored tiles make the results
    (`Layout.assemble(tiles).reshape(shape)`)."""

    graph: Graph
    addresses: dict[str, int]  # "argI"/"resultI" -> base address
    result_layouts: list[Layout] = field(default_factory=list)
    result_shapes: list[tuple[int, ...]] = field(default_factory=list)
    loads: list[tuple[int, tuple[int, int]]] = field(default_factory=list)
    constants: dict = field(default_factory=dict)  # argument index -> values (tensor constants)
    # results that make one output: (stores, stack axis) per output, in order (None: one each)
    groups: list | None = None


def _nbytes(dtype: Attribute) -> int:
    return TileType(1, 1, dtype).bytes_per_scalar()


def _fit(op, what: str, dim_name: str, dim: int, size: int, option: str) -> int:
    """The tile size along a dim: `size` if it divides, the whole dim if larger."""
    if size >= dim:
        if size > dim:
            emit(op, "remark", f"{what}: {dim_name}={dim} is smaller than the tile size "
                               f"{size}: not tiled along {dim_name}")
        return dim
    if dim % size:
        raise OpDiagnosticError(op, f"{what}: tile size {size} does not divide {dim_name}={dim} "
                                    f"(option {option}; padding is not supported)")
    return size


def _prod(xs) -> int:
    return math.prod(int(x) for x in xs)  # exact: np.prod wraps at 2**63 (negative sizes)


class _Planner:
    def __init__(self, fn: Function, opts: EmitOptions):
        self.fn, self.opts = fn, opts
        self.layouts: dict[Node, Layout] = {}
        self.matmuls: dict[Node, MatmulPlan] = {}
        self.ewise_loads: dict[tuple[Node, int], LoadKey] = {}
        self.uses: dict[object, int] = {}
        self.depth: dict[Node, int] = {}
        self.reduces = any(n.kind == "reduce" for n in fn.nodes)
        self.reduced: dict[Node, Layout] = {}  # reductions: the layout of their input
        self.copies = 0

    def use(self, key: object) -> None:
        self.uses[key] = self.uses.get(key, 0) + 1

    def run(self) -> None:
        used = {x for n in self.fn.nodes for x in n.inputs} | set(self.fn.results)
        for n in self.fn.nodes:  # a sigmoid not completed into silu: the library's sigmoid
            if n.kind == "sigmoid" and n in used:
                n.kind, n.fn = "ewise", "sigmoid"
        for n in self.fn.nodes:
            if n.kind == "matmul":
                self.matmul(n)
            elif n.kind == "ewise":
                self.ewise(n)
            elif n.kind == "reduce":
                self.reduce(n)
            elif n.kind == "view":
                self.view(n)
        for n in self.fn.results:
            self.use(n)
        if self.reduces:
            self.check_forks()

    def _level(self, n: Node) -> int:
        if n.kind == "matmul":
            return self.depth[n]
        return max((self._level(i) for i in n.inputs), default=-1)

    def operand(self, n: Node, user: Node) -> Node:
        if n.kind == "init":
            raise OpDiagnosticError(user.op, "reads an uninitialized tensor")
        return n

    def matmul(self, n: Node) -> None:
        a, b = (self.operand(x, n) for x in n.inputs)
        assert n.op is not None  # a matmul node is its op's
        what = f"{n.op.name} #{n.number}"
        (M, K), (K2, N) = a.shape[-2:], b.shape[-2:]  # b: its logical (transposed) shape
        Bt = n.batch
        if K != K2 or a.batch != b.batch:
            raise OpDiagnosticError(n.op, f"{what}: operand shapes {a.tensor} and {b.tensor} do "
                                          "not agree")
        depth = self._level(a) + 1
        self.depth[n] = depth
        tok = self.opts.schedule[min(depth, len(self.opts.schedule) - 1)]
        tm0, tn0, tk0 = self.opts.tiles.get(n.number, self.opts.tiles[None])
        if b.kind != "arg":
            raise OpDiagnosticError(n.op, f"{what}: the right operand must be a function "
                                          "argument (a weight in memory); a computed right "
                                          "operand is not supported")
        if "n" in tok and a.kind != "arg" and tn0 < N:
            raise OpDiagnosticError(n.op, f"{what}: schedule '{tok}' tiles N, but the left "
                                          "operand streams in from an earlier op and cannot "
                                          "be re-read per N tile without going off-chip; "
                                          "tile M and K at this level (option schedule)")
        if a.kind == "arg":
            if "k" in tok and tk0 is None:
                raise OpDiagnosticError(n.op, f"{what}: schedule '{tok}' tiles K but option "
                                              "tile gives no K size (MxNxK)")
            tm = _fit(n.op, what, "M", M, tm0, "tile") if "m" in tok else M
            tk = _fit(n.op, what, "K", K, tk0 or K, "tile") if "k" in tok else K
        else:
            la = self.layouts[a]
            if la.col:
                raise OpDiagnosticError(n.op, f"{what}: the left operand is a column (a row "
                                              "reduction's result): not supported")
            tm, tk = la.tm, la.tn
            for letter, dim, t in (("m", "M", tm), ("k", "K", tk)):
                full = M if dim == "M" else K
                if letter not in tok and t != full:
                    raise OpDiagnosticError(n.op, f"{what}: schedule '{tok}' leaves {dim} "
                                                  f"untiled, but the left operand streams in "
                                                  f"as {la.tm}x{la.tn} tiles (option schedule)")
        tn = _fit(n.op, what, "N", N, tn0, "tile") if "n" in tok else N
        mt, nt, kt = M // tm, N // tn, K // tk
        pre = () if Bt is None else (Bt,)
        walk = (*pre, mt, nt, kt)
        if a.kind == "arg":
            akey: LoadKey | Node = LoadKey(a.index, (tm, tk), walk, (*pre, mt, 1, kt),
                                           (*((mt * kt,) if pre else ()), kt, 0, 1),
                                           ((Bt or 1) * M, K))
        else:
            akey = a
        if b.transposed:  # W [N, K] read as tn x tk tiles
            bkey = LoadKey(b.index, (tn, tk), walk, (*pre, nt, 1, kt),
                           (*((nt * kt,) if pre else ()), 0, kt, 1), ((Bt or 1) * N, K))
        else:
            bkey = LoadKey(b.index, (tk, tn), walk, (*pre, kt, 1, nt),
                           (*((kt * nt,) if pre else ()), 0, 1, nt), ((Bt or 1) * K, N))
        self.use(akey)
        self.use(bkey)
        self.matmuls[n] = MatmulPlan(tm, tn, tk, akey, bkey)
        self.layouts[n] = Layout(tm, tn, mt, nt, Bt)

    def _space(self, n: Node, what: str, op=None) -> Layout:
        """The layout of an element-wise op (or reduction: `op`) whose inputs are all
        arguments."""
        tm0, tn0, _ = self.opts.tiles[None]
        M, N = n.shape[-2:]
        op = op or n.op
        tm = _fit(op, what, "M", M, tm0, "tile")
        tn = _fit(op, what, "N", N, tn0, "tile") if not n.col else 1
        return Layout(tm, tn, M // tm, N // tn, n.batch, n.col)

    def ewise(self, n: Node) -> None:
        ins = [self.operand(x, n) for x in n.inputs]
        what = f"element-wise '{n.fn}'"
        full = {self.layouts[x] for x, k in zip(ins, n.bcast) if x.kind != "arg" and k == "full"}
        if len(full) > 1:
            shown = " and ".join(sorted(f"{s.tm}x{s.tn}" for s in full))
            raise OpDiagnosticError(n.op, f"{what} combines streams tiled differently ({shown})")
        lay = full.pop() if full else self._space(n, what)
        for x, k in zip(ins, n.bcast):
            if x.kind != "arg" and k == "col":
                c = self.layouts[x]
                if (c.tm, c.mt, c.bt) != (lay.tm, lay.mt, lay.bt):
                    raise OpDiagnosticError(n.op, f"{what}: the column is tiled {c.tm} rows, "
                                                  f"the rows {lay.tm}: they must agree")
        f = get_function(n.fn)
        assert f is not None
        shapes = [(1 if k == "row" else lay.tm, 1 if k == "col" or lay.col else lay.tn)
                  for k in n.bcast]
        out = f.out_shape(shapes)
        self.layouts[n] = lay
        if out != shapes[n.bcast.index("full")]:  # a row function (the router): whole rows
            if lay.nt != 1 or lay.col:  # in, `out` columns out
                raise OpDiagnosticError(n.op, f"{what} works on whole rows: N={n.cols} must be "
                                              f"one tile, got tiles {lay.tn} wide (option tile)")
            self.layouts[n] = Layout(out[0], out[1], lay.mt, 1, lay.bt)
        for i, (x, k) in enumerate(zip(ins, n.bcast)):
            if x.kind == "arg":
                key = self.arg_load(n, x, k, lay)
                self.ewise_loads[(n, i)] = key
                self.use(key)
            else:
                self.use(x)

    def arg_load(self, n: Node, x: Node, kind: str, lay: Layout) -> LoadKey:
        if x.transposed:
            raise OpDiagnosticError(n.op, f"element-wise '{n.fn}' reads a transposed "
                                          "argument: only matmuls read weights transposed")
        Bt = lay.bt
        rows = (lay.tm if kind not in ("row",) else 1)
        cols = (lay.tn if kind != "col" and not lay.col else 1)
        mt = lay.mt if kind != "row" else 1
        nt = lay.nt if kind != "col" and not lay.col else 1
        walk = lay.dims
        b = () if Bt is None else ((Bt if kind not in ("batch", "row") else 1),)
        grid = (*b, mt, nt)
        view = ((b[0] if b else 1) * mt * rows, nt * cols)
        if _prod(view) != _prod(x.shape):
            raise OpDiagnosticError(n.op, f"element-wise '{n.fn}': argument {x.index} "
                                          f"({'x'.join(map(str, x.tensor))}) does not fit "
                                          "its broadcast")
        # the stride of each walk dim in tiles of the view (0: broadcast)
        stride = []
        dims = ([] if Bt is None else ["b"]) + (["m"] if lay.col else ["m", "n"])
        for d in dims:
            if d == "b":
                stride.append(mt * nt if b and b[0] > 1 else 0)
            elif d == "m":
                stride.append(nt if kind != "row" else 0)
            else:
                stride.append(1 if kind != "col" else 0)
        in_shape = grid if not lay.col else (*b, mt)
        copy = 0
        if self.reduces:  # never share a load between a reduction and its user
            self.copies += 1
            copy = self.copies
        return LoadKey(x.index, (rows, cols), walk, tuple(in_shape), tuple(stride), view, copy)

    def reduce(self, n: Node) -> None:
        (x,) = (self.operand(i, n) for i in n.inputs)
        if x.kind == "arg":
            lay = self._space(x, f"row {n.fn[4:]}", n.op)
            key = self.arg_load(n, x, "full", lay)
            self.ewise_loads[(n, 0)] = key
            self.use(key)
        else:
            lay = self.layouts[x]
            self.use(x)
        self.reduced[n] = lay
        self.layouts[n] = Layout(lay.tm, 1, lay.mt, 1, lay.bt, col=True)

    def view(self, n: Node) -> None:
        (x,) = n.inputs
        lay = self.layouts[x]
        if n.fn == "same":
            self.layouts[n] = lay
        elif n.fn == "flatten":  # of a batched stream: the batch joins the rows
            assert lay.bt is not None
            self.layouts[n] = Layout(lay.tm, lay.tn, lay.bt * lay.mt, lay.nt, None, lay.col)
        else:
            Bt, M = n.shape[0], n.shape[1]
            assert n.op is not None  # a view node is its op's
            if M % lay.tm:
                raise OpDiagnosticError(n.op, f"{n.op.name}: rows of {M} per batch do not hold "
                                              f"whole {lay.tm}-row tiles (option tile)")
            self.layouts[n] = Layout(lay.tm, lay.tn, M // lay.tm, lay.nt, Bt, lay.col)
        self.use(x)

    def check_forks(self) -> None:
        """A computed value used twice, one use reaching a row reduction: its other
        user waits for the reduction, so every tile of a row is in flight at once."""
        users: dict[Node, list[Node]] = {}
        for n in self.fn.nodes:
            for x in n.inputs:
                users.setdefault(x, []).append(n)

        def reaches_reduce(n: Node, seen: set) -> bool:
            todo = [n]  # iterative: a long chain must not exhaust the Python stack
            while todo:
                x = todo.pop()
                if x.kind == "reduce":
                    return True
                if x not in seen:
                    seen.add(x)
                    todo.extend(users.get(x, []))
            return False

        for n, us in users.items():
            if n.kind in ("arg", "init") or len(us) + (n in self.fn.results) < 2:
                continue
            lay = self.layouts.get(n)
            if lay is not None and not lay.col and lay.nt > 1 and \
                    any(reaches_reduce(u, set()) for u in us):
                raise OpDiagnosticError(n.op, f"this value feeds a row reduction and another "
                                              f"op that waits for it, and a row is {lay.nt} "
                                              f"tiles: tile N whole ({n.cols}; option tile) or "
                                              "return it and reload it")


class _Emitter:
    def __init__(self, fn: Function, plan: _Planner, addresses: dict[str, int]):
        self.fn, self.plan, self.addr = fn, plan, addresses
        self.g = Graph(fn.op.sym_name.data)
        self.ready: dict[object, Stream] = {}
        self.fanout: dict[object, list[Stream]] = {}
        self.done: set[Node] = set()
        self.loads: list[tuple[int, tuple[int, int]]] = []

    def load(self, key: LoadKey) -> None:
        if key in self.ready or key in self.fanout:
            return
        a = self.fn.args[key.arg]
        self.ready[key] = self.g.load(key.tile, a.dtype, list(key.out_shape),
                                      in_shape=list(key.in_shape), stride=list(key.stride),
                                      base_addr=self.addr[f"arg{key.arg}"],
                                      name=f"arg{key.arg}")
        self.loads.append((key.arg, key.view))

    def take(self, key: object) -> Stream:
        if key in self.fanout:
            return self.fanout[key].pop(0)
        s = self.ready.pop(key)
        n = self.plan.uses.get(key, 1)
        if n == 1:
            return s
        self.fanout[key] = s.broadcast(n)
        return self.fanout[key].pop(0)

    def node(self, n: Node) -> None:
        if n in self.done:
            return
        if n.kind == "matmul":
            self.matmul(n)
        else:
            for m in self._matmul_deps(n):
                self.node(m)
            {"ewise": self.ewise, "reduce": self.reduce, "view": self.view}[n.kind](n)

    def _matmul_deps(self, n: Node) -> list[Node]:
        out: list[Node] = []
        for x in n.inputs:
            if x.kind == "matmul":
                out.append(x)
            elif x.kind in ("ewise", "reduce", "view"):
                out += self._matmul_deps(x)
        return out

    def matmul(self, n: Node) -> None:
        p = self.plan.matmuls[n]
        if isinstance(p.a, LoadKey):
            self.load(p.a)
            a_key: object = p.a
        else:
            self.node(p.a)
            data, pad = self.take(p.a).reshape(1, split_dim=1)
            pad.consume()
            a_key = ("reshaped", n)
            self.ready[a_key] = data
        self.load(p.b)
        a, b = self.take(a_key), self.take(p.b)
        fn = "matmul_t" if n.transpose_b else "matmul"
        out = a.accum(fn, 1, b, acc=TileType(p.tm, p.tn, f32), combine="add",
                      name=f"mm{n.number}")
        if p.b.out_shape[-1] > 1:  # a reduction over several K tiles: the accumulator
            write_back_mu(out)  # lives in a memory unit
        self.ready[n] = out
        self.done.add(n)

    def _input(self, n: Node, i: int, x: Node) -> Stream:
        if x.kind == "arg":
            key = self.plan.ewise_loads[(n, i)]
            self.load(key)
            return self.take(key)
        self.node(x)
        s = self.take(x)
        lay = self.plan.layouts[n]
        if n.kind == "ewise" and n.bcast[i] == "col" and not lay.col:
            s = s.repeat(lay.nt)
        return s

    def ewise(self, n: Node) -> None:
        streams = [self._input(n, i, x) for i, x in enumerate(n.inputs)]
        self.ready[n] = streams[0].map(n.fn, *streams[1:], name=_name(n.fn))
        self.done.add(n)

    def reduce(self, n: Node) -> None:
        s = self._input(n, 0, n.inputs[0])
        lay = self.plan.layouts[n]
        out = s.accum(n.fn, 1, acc=TileType(lay.tm, 1, f32), combine=n.combine, init=n.init,
                      name=n.fn)
        if self.plan.reduced[n].nt > 1:  # the accumulator lives in a memory unit
            write_back_mu(out)
        self.ready[n] = out
        self.done.add(n)

    def view(self, n: Node) -> None:
        s = self._input(n, 0, n.inputs[0])
        src = self.plan.layouts[n.inputs[0]]
        if n.fn == "flatten":
            s = s.flatten(len(src.dims) - 2, len(src.dims) - 1)
        elif n.fn == "split":
            data, pad = s.reshape(self.plan.layouts[n].mt, split_dim=len(src.dims) - 1)
            pad.consume()
            s = data
        self.ready[n] = s
        self.done.add(n)

    def run(self) -> list[Layout]:
        for i, r in enumerate(self.fn.results):
            self.node(r)
            self.take(r).store(base_addr=self.addr[f"result{i}"])
        return [self.plan.layouts[r] for r in self.fn.results]


def _name(fn: str) -> str:
    """An SSA name hint for a library call (`add_scalar[1e-06]` -> `add_scalar`)."""
    return fn.split("[", 1)[0]


def emit_graph(fn: Function, opts: EmitOptions) -> Lowered:
    """Plan tiles and emit the step graph of `fn` (located errors, remarks)."""
    plan = _Planner(fn, opts)
    plan.run()
    sizes = {f"arg{a.index}": _prod(a.shape) * _nbytes(a.dtype) for a in fn.args}
    sizes |= {f"result{i}": _prod(r.shape) * 4 for i, r in enumerate(fn.results)}
    try:
        addresses = layout(sizes, opts.memory)
    except ValueError as e:
        where = " (option memory)" if str(e).startswith("memory:") else ""
        raise OpDiagnosticError(fn.op, f"{e}{where}") from None
    em = _Emitter(fn, plan, addresses)
    layouts = em.run()
    return Lowered(em.g, addresses, layouts, [r.tensor for r in fn.results], em.loads,
                   dict(fn.constants))
