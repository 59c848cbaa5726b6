"""Tiling and emission: a recognized tensor DAG -> one `step.graph`.

Every stream value has a layout: `[M/tm, N/tn]` tiles of `tm x tn`. A matmul
`C[M,N] = A[M,K] B[K,N]` with tiles `tm, tn, tk` walks `(M/tm, N/tn, K/tk)`:
both operands are streamed in that order (A re-read once per N tile, B once
per M tile) and an `accum` of rank 1 reduces K (`matmul`, or `matmul_t` for a
transposed weight, `add` into a zero `tm x tn` f32 tile). A left operand
computed by an earlier matmul streams straight in (a `reshape` with chunk 1
adds the size-1 N dim); it cannot be re-read per N tile, so such a matmul
tiles M and K only (schedule "mk"). Element-wise ops are `map`s fused into the
stream; function arguments are loaded in the layout their consumer needs (one
load per layout, shared through a `broadcast`). Results are stored.

Emission order: the matmuls a value depends on first, then its element-wise
epilogue (the reference SwiGLU order: X, Wg, gate, Wu, up, silu, mul, down).

Example: `emit_graph(recognize(fn), EmitOptions(...))` on torch's SwiGLU FFN
is op for op `examples/workloads/graphs.py`'s `swiglu(tm, tn)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import UnitAttr, f32
from xdsl.ir import Attribute

from steplus.dialects.step.builder import Graph, Stream
from steplus.dialects.step.types import TileType
from steplus.lowering.linalg_to_step.options import Tile, layout
from steplus.lowering.linalg_to_step.recognize import Function, Node
from steplus.utils.diagnostics import OpDiagnosticError, emit


@dataclass(frozen=True)
class Layout:
    """A stream of `[mt, nt]` tiles of `tm x tn`."""

    tm: int
    tn: int
    mt: int
    nt: int


@dataclass(frozen=True)
class LoadKey:
    """One `linear_offchip_load`: argument, tile, walk, strides."""

    arg: int
    tile: tuple[int, int]
    out_shape: tuple[int, ...]
    in_shape: tuple[int, ...]
    stride: tuple[int, ...]


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
    """The graph built for one function and where its tensors live."""

    graph: Graph
    addresses: dict[str, int]  # "argI"/"resultI" -> base address
    result_layouts: list[Layout] = field(default_factory=list)


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


class _Planner:
    def __init__(self, fn: Function, opts: EmitOptions):
        self.fn, self.opts = fn, opts
        self.layouts: dict[Node, Layout] = {}
        self.matmuls: dict[Node, MatmulPlan] = {}
        self.ewise_loads: dict[tuple[Node, int], LoadKey] = {}
        self.uses: dict[object, int] = {}
        self.depth: dict[Node, int] = {}

    def use(self, key: object) -> None:
        self.uses[key] = self.uses.get(key, 0) + 1

    def run(self) -> None:
        for n in self.fn.nodes:
            if n.kind == "matmul":
                self.matmul(n)
            elif n.kind == "ewise":
                self.ewise(n)
        for n in self.fn.results:
            self.use(n)

    def _level(self, n: Node) -> int:
        if n.kind == "matmul":
            return self.depth[n]
        return max((self._level(i) for i in n.inputs), default=-1)

    def operand(self, n: Node, user: Node) -> Node:
        if n.kind == "sigmoid":
            raise OpDiagnosticError(user.op, "sigmoid is supported only as x * sigmoid(x) "
                                             "(silu): the step function library has no sigmoid")
        if n.kind == "init":
            raise OpDiagnosticError(user.op, "reads an uninitialized tensor")
        return n

    def matmul(self, n: Node) -> None:
        a, b = (self.operand(x, n) for x in n.inputs)
        what = f"linalg.matmul #{n.number}"
        (M, K), (K2, N) = a.shape, b.shape
        if K != K2:
            raise OpDiagnosticError(n.op, f"{what}: operand shapes {a.shape} and {b.shape} do "
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
            if a.transposed:
                raise OpDiagnosticError(n.op, f"{what}: a transposed left operand is not "
                                              "supported")
            tm = _fit(n.op, what, "M", M, tm0, "tile") if "m" in tok else M
            tk = _fit(n.op, what, "K", K, tk0 or K, "tile") if "k" in tok else K
        else:
            la = self.layouts[a]
            tm, tk = la.tm, la.tn
            for letter, dim, t in (("m", "M", tm), ("k", "K", tk)):
                full = M if dim == "M" else K
                if letter not in tok and t != full:
                    raise OpDiagnosticError(n.op, f"{what}: schedule '{tok}' leaves {dim} "
                                                  f"untiled, but the left operand streams in "
                                                  f"as {la.tm}x{la.tn} tiles (option schedule)")
        tn = _fit(n.op, what, "N", N, tn0, "tile") if "n" in tok else N
        mt, nt, kt = M // tm, N // tn, K // tk
        walk = (mt, nt, kt)
        if a.kind == "arg":
            akey: LoadKey | Node = LoadKey(a.index, (tm, tk), walk, (mt, 1, kt), (kt, 0, 1))
        else:
            akey = a
        if b.transposed:  # W [N, K] read as tn x tk tiles
            bkey = LoadKey(b.index, (tn, tk), walk, (nt, 1, kt), (0, kt, 1))
        else:
            bkey = LoadKey(b.index, (tk, tn), walk, (kt, 1, nt), (0, 1, nt))
        self.use(akey)
        self.use(bkey)
        self.matmuls[n] = MatmulPlan(tm, tn, tk, akey, bkey)
        self.layouts[n] = Layout(tm, tn, mt, nt)

    def ewise(self, n: Node) -> None:
        ins = [self.operand(x, n) for x in n.inputs]
        streamed = {self.layouts[x] for x in ins if x.kind != "arg"}
        if len(streamed) > 1:
            shown = " and ".join(sorted(f"{s.tm}x{s.tn}" for s in streamed))
            raise OpDiagnosticError(n.op, f"element-wise '{n.fn}' combines streams tiled "
                                          f"differently ({shown})")
        if streamed:
            lay = streamed.pop()
        else:
            tm0, tn0, _ = self.opts.tiles[None]
            M, N = n.shape
            what = f"element-wise '{n.fn}'"
            tm, tn = _fit(n.op, what, "M", M, tm0, "tile"), _fit(n.op, what, "N", N, tn0, "tile")
            lay = Layout(tm, tn, M // tm, N // tn)
        self.layouts[n] = lay
        for i, x in enumerate(ins):
            if x.kind == "arg":
                if x.transposed:
                    raise OpDiagnosticError(n.op, f"element-wise '{n.fn}' reads a transposed "
                                                  "argument: only matmuls read weights "
                                                  "transposed")
                key = LoadKey(x.index, (lay.tm, lay.tn), (lay.mt, lay.nt), (lay.mt, lay.nt),
                              (lay.nt, 1))
                self.ewise_loads[(n, i)] = key
                self.use(key)
            else:
                self.use(x)


class _Emitter:
    def __init__(self, fn: Function, plan: _Planner, addresses: dict[str, int]):
        self.fn, self.plan, self.addr = fn, plan, addresses
        self.g = Graph(fn.op.sym_name.data)
        self.ready: dict[object, Stream] = {}
        self.fanout: dict[object, list[Stream]] = {}
        self.done: set[Node] = set()

    def load(self, key: LoadKey) -> None:
        if key in self.ready or key in self.fanout:
            return
        a = self.fn.args[key.arg]
        self.ready[key] = self.g.load(key.tile, a.dtype, list(key.out_shape),
                                      in_shape=list(key.in_shape), stride=list(key.stride),
                                      base_addr=self.addr[f"arg{key.arg}"],
                                      name=f"arg{key.arg}")

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
            self.ewise(n)

    def _matmul_deps(self, n: Node) -> list[Node]:
        out: list[Node] = []
        for x in n.inputs:
            if x.kind == "matmul":
                out.append(x)
            elif x.kind == "ewise":
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
            out.value.owner.attributes["write_back_mu"] = UnitAttr()  # lives in a memory unit
        self.ready[n] = out
        self.done.add(n)

    def ewise(self, n: Node) -> None:
        for x in n.inputs:
            if x.kind == "ewise":
                self.node(x)
        for i, x in enumerate(n.inputs):
            if x.kind == "arg":
                self.load(self.plan.ewise_loads[(n, i)])
        streams = [self.take(self.plan.ewise_loads[(n, i)] if x.kind == "arg" else x)
                   for i, x in enumerate(n.inputs)]
        self.ready[n] = streams[0].map(n.fn, *streams[1:], name=n.fn)
        self.done.add(n)

    def run(self) -> list[Layout]:
        for i, r in enumerate(self.fn.results):
            self.node(r)
            self.take(r).store(base_addr=self.addr[f"result{i}"])
        return [self.plan.layouts[r] for r in self.fn.results]


def emit_graph(fn: Function, opts: EmitOptions) -> Lowered:
    """Plan tiles and emit the step graph of `fn` (located errors, remarks)."""
    plan = _Planner(fn, opts)
    plan.run()
    sizes = {f"arg{a.index}": a.shape[0] * a.shape[1] * _nbytes(a.dtype) for a in fn.args}
    sizes |= {f"result{i}": r.shape[0] * r.shape[1] * 4 for i, r in enumerate(fn.results)}
    try:
        addresses = layout(sizes, opts.memory)
    except ValueError as e:
        raise OpDiagnosticError(fn.op, f"{e} (option memory)") from None
    em = _Emitter(fn, plan, addresses)
    layouts = em.run()
    return Lowered(em.g, addresses, layouts)
