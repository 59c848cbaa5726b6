"""Dynamic patterns by recognition: a `torch.export` ATen graph -> MoE / attention step graphs.

torch-mlir cannot carry these layers to linalg on tensors: `torch.where`
gives data-dependent sizes (`aten.index.Tensor` of size `?` fails to
legalize) and `topk` is decomposed into a sort. So the recognizers read the
graph one level up, where `torch.export` leaves the layer's structure intact
(`aten.topk`, `aten.where`, `aten.index_select`, `aten.index_add`,
`aten.scaled_dot_product_attention`). The graph is duck-typed (fx nodes:
`op`, `target`, `args`, `kwargs`, `meta["val"]`, `meta["stack_trace"]`);
steplus does not import torch.

Recognized:

- **top-k MoE** (`examples/workloads/moe.py`): a router `topk` over
  `x @ w_router` (softmax before or after), then per expert `e` of `E`:
  `tok, slot = where(idx == e)`, `h = index_select(x, 0, tok)`, the SwiGLU
  FFN `(silu(h @ Wg[e]) * (h @ Wu[e])) @ Wd[e]` scaled by
  `weights[tok, slot]`, `index_add`ed into `zeros_like(x)` — every expert
  once, the same stacked weights. Lowers to `moe_graph` (§8.2) with static
  (`tile_n`) or dynamic (`tile_n=None`) tiling. Its choices are the routing
  `select_gen`s (bind them with `step-specialize{routing=...}`), its weights
  the `[B, K]` tensor at 2 GiB. With `dense=...` the router itself is lowered
  too (`_router`: the logits matmul and the step library's row top-k
  functions, weights and indices stored: the indices are what
  `step-specialize{routing=...}` binds); without, a remark says it is not.
- **GQA decode attention** (`examples/workloads/attention_torch.py`):
  `scaled_dot_product_attention(q, cat([k_cache, k_new], 2), cat([v_cache,
  v_new], 2), scale=1.0)` with `q [B, Hq, 1, HD]`, one new row per KV head.
  Lowers to `attention_graph` (§8.4): one request per (sequence, KV head),
  `Hq/Hkv` queries each, cached lengths from the cache shape or `kv_lengths`.

With `dense="tile=... schedule=..."` the rest that linalg expresses —
projections, RMSNorm, residual adds, scalar scales (`glue.py`'s regions) —
is written as linalg functions and lowered by `convert-linalg-to-step`.

What does not match is a remark at the source line of the node at fault
(`file:line: remark: ...`), and no graph is built for it.

Example::

    ep = torch.export.export(TopKMoE(4, 2), moe_inputs(8, 4, 32, 64))
    low = lower_exported(ep, tile_n=4, tile_f=16)
    low.graphs[0].module      # the §8.2 graph, B and B_0..B_3 symbolic
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from steplus.lowering.linalg_to_step.attention_graph import (
    STRATEGIES, TILE_N, AttnShape, attention_graph,
)
from steplus.lowering.linalg_to_step.moe_graph import MoEShape, moe_graph

MAX_NODES = 1 << 20  # graph walks are bounded by the graph size; refuse absurd graphs
BOOKKEEPING = {"aten.sym_size.int", "aten._assert_scalar.default", "ge", "le",
               "aten.sym_constrain_range_for_size.default"}
ROUTER_TAIL = {"aten.div.Tensor", "aten.softmax.int", "aten._softmax.default",
               "aten.sum.dim_IntList", "aten._to_copy.default", "aten.to.dtype"}


class NotRecognized(Exception):
    """A pattern check failed at `node` (its source line goes into the remark)."""

    def __init__(self, node, message: str):
        super().__init__(message)
        self.node, self.message = node, message


@dataclass(frozen=True)
class Remark:
    """A located remark: `where` is `file:line` of the user's source (or the node name)."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: remark: {self.message}"


@dataclass
class LoweredPart:
    """One recognized layer: its kind, the step graph and what it was matched from."""

    kind: str  # "moe" | "attention" | "dense"
    module: ModuleOp
    shape: MoEShape | AttnShape | None
    inputs: dict[str, str]  # role -> graph node name ("x", "w_gate", ..., "q", "k_cache", ...)
    batch: int
    seq_len: list[int] = field(default_factory=list)  # attention: KV tiles per request
    offset: list[int] = field(default_factory=list)  # attention: append row per request
    outputs: list[str] = field(default_factory=list)  # the graph nodes the part computes
    lowered: object = None  # dense: convert-linalg-to-step's `Lowered` (addresses, layouts)
    role: str = ""  # dense: "projection", "norm", "elementwise" or "router"
    out_shapes: list = field(default_factory=list)  # dense: the outputs' tensor shapes
    covered: set = field(default_factory=set, repr=False)  # the graph nodes it replaces


@dataclass
class Lowering:
    graphs: list[LoweredPart]
    remarks: list[Remark]


def name_of(node) -> str:
    t = node.target
    return getattr(t, "__name__", "") if callable(t) and not hasattr(t, "_schema") else str(t)


def where_of(node) -> str:
    """`file:line` of the innermost user frame of the node's stack trace."""
    trace = (getattr(node, "meta", {}) or {}).get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    if frames:
        f, line = frames[-1]
        return f"{f}:{line}"
    return f"<node {getattr(node, 'name', '?')}>"


def _shape(node) -> tuple[int, ...] | None:
    """The static shape of an FX node's value, None for a non-tensor or a data-dependent size."""
    val = (getattr(node, "meta", {}) or {}).get("val")
    shape = getattr(val, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(int(d) for d in shape)
    except Exception:  # symbolic (data-dependent) sizes: torch raises its own guard error
        return None


def _is(node, target: str) -> bool:
    return getattr(node, "op", None) == "call_function" and name_of(node) == target


def _getitem(node, k: int):
    for u in node.users:
        if name_of(u) == "getitem" and u.args[1] == k:
            return u
    return None


def _ancestors(node, limit: int = MAX_NODES) -> set:
    seen, todo = set(), [node]
    while todo and len(seen) < limit:
        n = todo.pop()
        for a in n.all_input_nodes:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    return seen


def _placeholders(nodes) -> set:
    return {n for n in nodes if n.op == "placeholder"}


# -- MoE ---------------------------------------------------------------------------------
class _MoE:
    def __init__(self, topk):
        self.topk = topk
        self.covered: set = {topk}

    def need(self, ok: bool, node, msg: str) -> None:
        if not ok:
            raise NotRecognized(node, f"top-k MoE not recognized: {msg}")

    def run(self, x_hint=None):
        tk = self.topk
        values, idx = _getitem(tk, 0), _getitem(tk, 1)
        self.need(values is not None and idx is not None, tk, "topk's values or indices unused")
        self.covered |= {values, idx}
        k = tk.args[1]
        dim = tk.args[2] if len(tk.args) > 2 else tk.kwargs.get("dim", -1)
        self.need(isinstance(k, int) and dim in (-1, 1), tk, "topk must pick k experts along "
                  "the last dim of [tokens, experts] router scores")
        router = _ancestors(tk)
        branches = {}
        for u in idx.users:
            if _is(u, "aten.eq.Scalar") and isinstance(u.args[1], int):
                self.need(u.args[1] not in branches, u, f"expert {u.args[1]} selected twice")
                branches[u.args[1]] = self.branch(u)
            elif u.op == "call_function":
                self.need(False, u, f"the expert indices feed '{name_of(u)}', not an "
                                    "'idx == e' expert selection")
        self.need(bool(branches), tk, "no expert selects its tokens with torch.where(idx == e)")
        first = next(iter(branches.values()))
        x, wg, wu, wd, weights = first["x"], first["wg"], first["wu"], first["wd"], first["w"]
        for e, b in branches.items():
            for role in ("x", "wg", "wu", "wd", "w"):
                self.need(b[role] is first[role], b["add"], f"expert {e} uses another "
                          f"{role} than expert {next(iter(branches))}")
        self.need(x in router, tk, f"the router does not read the expert input {x.name}")
        self.need(values in _ancestors(weights) | {weights}, weights,
                  "the routing weights are not computed from topk's values")
        tail = [n for n in _ancestors(weights) | {weights} if n not in router and n.op != "placeholder"]
        for n in tail:
            self.need(n is values or n is tk or name_of(n) in ROUTER_TAIL, n,
                      f"'{name_of(n)}' in the routing weights' computation")
        before = _ancestors(x) | {x}
        self.covered |= set(tail) | {n for n in router - before if n.op != "placeholder"}
        self.x, self.weights, self.values, self.idx, self.k = x, weights, values, idx, k
        # the index_add chain: zeros -> expert e -> ... -> out, every expert once
        sx, sg, sd = _shape(x), _shape(wg), _shape(wd)
        self.need(sx is not None and len(sx) == 2 and sg is not None and len(sg) == 3
                  and sd is not None and len(sd) == 3 and _shape(wu) == sg, tk,
                  "expected x [B, D], w_gate/w_up [E, D, F], w_down [E, F, D] of static shapes")
        B, D = sx
        E, D2, F = sg
        self.need(D2 == D and sd == (E, F, D), tk, f"weight shapes {sg} / {sd} do not agree "
                  f"with x {sx}")
        self.need(sorted(branches) == list(range(E)), tk, f"{E} experts, but branches for "
                  f"{sorted(branches)}: every expert must be selected once")
        adds = {b["add"]: e for e, b in branches.items()}
        start = None
        for b in branches.values():
            prev = b["add"].args[0]
            if prev not in adds:
                self.need(start is None, prev, "the expert results go into several tensors")
                start = prev
        self.need(start is not None and (_is(start, "aten.zeros_like.default") and
                                         start.args[0] is x or _is(start, "aten.zeros.default")),
                  start or tk, "the expert results are not index_added into zeros_like(x)")
        self.covered.add(start)
        node, out = start, None
        for _ in range(E):
            nxt = [u for u in node.users if u in adds and u.args[0] is node]
            self.need(len(nxt) == 1, node, "the index_add chain branches")
            node = nxt[0]
        out = node
        self.need(k <= E, tk, f"top-{k} of {E} experts")
        for w in (wg, wu, wd):
            self.need(w.op == "placeholder", w, f"the expert weights {w.name} must be a "
                                                "function argument (off-chip)")
        return MoEShape(E, k, D, F), B, out, {"x": x.name, "w_gate": wg.name, "w_up": wu.name,
                                               "w_down": wd.name}

    def branch(self, eq) -> dict:
        e = eq.args[1]
        where = [u for u in eq.users]
        self.need(len(where) == 1 and _is(where[0], "aten.where.default"), eq,
                  f"expert {e}: idx == e must feed torch.where only")
        w = where[0]
        tok, slot = _getitem(w, 0), _getitem(w, 1)
        self.need(tok is not None and slot is not None, w, f"expert {e}: torch.where's "
                  "(token, slot) pair unused")
        self.covered |= {eq, w, tok, slot}
        sel = [u for u in tok.users if _is(u, "aten.index_select.default")]
        adds = [u for u in tok.users if _is(u, "aten.index_add.default")]
        gathers = [u for u in tok.users if _is(u, "aten.index.Tensor")]
        for u in tok.users:
            if u not in sel + adds + gathers and name_of(u) not in BOOKKEEPING:
                self.need(False, u, f"expert {e}: its token indices feed '{name_of(u)}'")
            if name_of(u) in BOOKKEEPING:
                self.covered |= {u} | _bookkeeping_users(u)
        self.need(len(sel) == 1 and sel[0].args[1] == 0, tok, f"expert {e}: expected one "
                  "index_select(x, 0, tokens) gathering its tokens")
        self.need(len(adds) == 1 and adds[0].args[1] == 0 and adds[0].args[2] is tok, tok,
                  f"expert {e}: expected one index_add(out, 0, tokens, y) scattering its result")
        self.need(len(gathers) == 1, tok, f"expert {e}: expected weights[tokens, slots]")
        h, add, g = sel[0], adds[0], gathers[0]
        self.need(list(g.args[1]) == [tok, slot], g, f"expert {e}: the routing weight must be "
                  "gathered as weights[tokens, slots]")
        y = add.args[3]
        self.need(_is(y, "aten.mul.Tensor"), y, f"expert {e}: the scattered value is not "
                  "expert output * routing weight")
        ws = [a for a in y.args if _is(a, "aten.unsqueeze.default") and a.args[0] is g
              and a.args[1] in (-1, 1)]
        self.need(len(ws) == 1, y, f"expert {e}: the routing weight is not "
                  "weights[tokens, slots].unsqueeze(-1)")
        down = y.args[1] if y.args[0] is ws[0] else y.args[0]
        wd, p = self.matmul(down, e, "down")
        self.need(_is(p, "aten.mul.Tensor"), p, f"expert {e}: expected silu(h @ w_gate[e]) * "
                  "(h @ w_up[e]) before the down projection")
        a, b = p.args
        if not _is(a, "aten.silu.default"):
            a, b = b, a
        self.need(_is(a, "aten.silu.default"), p, f"expert {e}: no silu in the SwiGLU product")
        wg, hg = self.matmul(a.args[0], e, "gate")
        wu, hu = self.matmul(b, e, "up")
        self.need(hg is h and hu is h, p, f"expert {e}: gate and up do not both read the "
                  "gathered tokens")
        self.covered |= {h, add, g, y, ws[0], down, p, a}
        return {"x": h.args[0], "wg": wg, "wu": wu, "wd": wd, "w": g.args[0], "add": add}

    def matmul(self, mm, e: int, what: str):
        self.need(_is(mm, "aten.matmul.default") or _is(mm, "aten.mm.default"), mm,
                  f"expert {e}: the {what} projection is '{name_of(mm)}', not a matmul")
        lhs, w = mm.args
        self.need(_is(w, "aten.select.int") and w.args[1] == 0 and w.args[2] == e
                  and w.args[0].op == "placeholder", w, f"expert {e}: the {what} weight is not "
                  f"w_{what}[{e}] of a stacked [E, ...] argument")
        self.covered |= {mm, w}
        return w.args[0], lhs


def _bookkeeping_users(node) -> set:
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        for u in n.users:
            if name_of(u) in BOOKKEEPING and u not in out:
                out.add(u)
                todo.append(u)
    return out


# -- attention ---------------------------------------------------------------------------
def _attention(sdpa, kv_lengths):
    def need(ok: bool, node, msg: str) -> None:
        if not ok:
            raise NotRecognized(node, f"GQA decode attention not recognized: {msg}")

    args = list(sdpa.args) + [None] * 7
    kw = dict(sdpa.kwargs)
    q, k, v = args[:3]
    mask = kw.get("attn_mask", args[3])
    need(mask is None, sdpa, "an attn_mask is not supported (the cache holds exactly the "
                             "valid rows)")
    need(not kw.get("is_causal", args[5] or False), sdpa, "is_causal is not a decode step")
    need(not kw.get("dropout_p", args[4] or 0.0), sdpa, "dropout is not supported")
    scale = kw.get("scale", args[6])
    need(scale == 1.0, sdpa, f"scale={scale}: the §8.4 graph computes softmax(q K^T) V "
                             "unscaled; fold 1/sqrt(d) into q and pass scale=1.0")
    caches = []
    for t, which in ((k, "key"), (v, "value")):
        need(_is(t, "aten.cat.default"), t, f"the {which}s are not cat([cache, new], dim=2)")
        parts, dim = t.args[0], t.args[1] if len(t.args) > 1 else 0
        need(len(parts) == 2 and dim in (2, -2), t, f"the {which}s are not cat([cache, new], "
                                                    "dim=2)")
        cache, new = parts
        need(cache.op == "placeholder", t,
             f"the {which} cache must be a function argument (an off-chip tensor)")
        caches.append((cache, new))
    sq, (sc, sn), (sv, svn) = _shape(q), map(_shape, caches[0]), map(_shape, caches[1])
    need(all(s is not None and len(s) == 4 for s in (sq, sc, sn, sv, svn)), sdpa,
         "expected static 4-D q [B, Hq, 1, HD] and caches [B, Hkv, L, HD]")
    B, Hq, one, HD = sq
    need(one == 1, q, f"a decode step has one query per head, got {one}")
    need(sc == sv and sn == svn and sn == (B, sc[1], 1, HD) and sc[0] == B and sc[3] == HD,
         sdpa, f"cache/new-row shapes {sc}, {sn}, {sv}, {svn} do not agree with q {sq}")
    Hkv, L = sc[1], sc[2]
    need(Hq % Hkv == 0, sdpa, f"{Hq} query heads do not group over {Hkv} KV heads")
    need(Hq == Hkv or kw.get("enable_gqa", False), sdpa, "Hq != Hkv needs enable_gqa=True")
    requests = B * Hkv
    lengths = list(kv_lengths) if kv_lengths is not None else [L] * requests
    need(len(lengths) == requests, sdpa, f"kv_lengths gives {len(lengths)} lengths for "
                                         f"{requests} requests (B x Hkv)")
    seq_len = [math.ceil((x + 1) / TILE_N) for x in lengths]
    offset = [x % TILE_N for x in lengths]
    inputs = {"q": q.name, "k_cache": caches[0][0].name, "k_new": caches[0][1].name,
              "v_cache": caches[1][0].name, "v_new": caches[1][1].name}
    return AttnShape(HD, Hq // Hkv), requests, seq_len, offset, inputs, {sdpa, k, v}


# -- driver ------------------------------------------------------------------------------
def lower_exported(ep, tile_n: int | None = 16, tile_f: int = 64,
                   strategy: str = "interleaved", kv_lengths=None,
                   name: str = "layer", dense: str | None = None) -> Lowering:
    """Recognize the MoE layers and decode attentions of an exported program
    (`torch.export.ExportedProgram` or its `graph`) and build their step
    graphs; everything else is a remark. Raises ValueError for bad options."""
    if tile_n is not None and not 1 <= tile_n <= 1 << 20:
        raise ValueError(f"tile_n must be in 1..1048576 or None (dynamic), got {tile_n}")
    if not 1 <= tile_f <= 1 << 20:
        raise ValueError(f"tile_f must be in 1..1048576, got {tile_f}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got '{strategy}'")
    if kv_lengths is not None:
        kv_lengths = list(kv_lengths)
        if len(kv_lengths) > MAX_NODES or not all(
                int(x) == x and 0 <= x < 1 << 31 for x in kv_lengths):
            raise ValueError("kv_lengths must be at most 2^20 cached lengths in 0..2^31-1")
        kv_lengths = [int(x) for x in kv_lengths]
    graph = getattr(ep, "graph", ep)
    nodes = list(graph.nodes)
    if len(nodes) > MAX_NODES:
        raise ValueError(f"the graph has {len(nodes)} nodes, more than {MAX_NODES}")
    out = Lowering([], [])
    covered: set = set()
    moes: list = []
    for n in nodes:
        try:
            if _is(n, "aten.topk.default"):
                m = _MoE(n)
                shape, B, moe_out, inputs = m.run()
                if shape.inter % tile_f:
                    raise NotRecognized(n, f"top-k MoE: tile_f={tile_f} does not divide "
                                           f"F={shape.inter} (option tile_f)")
                j = sum(p.kind == "moe" for p in out.graphs)
                kind = "dyn" if tile_n is None else f"tn{tile_n}"
                module = moe_graph(shape, tile_n, tile_f, name=f"{name}_moe{j}_{kind}")
                out.graphs.append(LoweredPart("moe", module, shape, inputs, B,
                                              outputs=[moe_out.name], covered=set(m.covered)))
                covered |= m.covered
                moes.append((m, len(out.remarks)))
                out.remarks.append(Remark(where_of(n), (
                    f"top-k MoE (E={shape.experts}, K={shape.top_k}, D={shape.hidden}, "
                    f"F={shape.inter}, B={B}) lowered to @{name}_moe{j}_{kind}; the router is "
                    "not lowered: its choices are the routing select_gens (bind B and "
                    "B_0.. with step-specialize{routing=...}), its weights the [B, K] tensor "
                    "at 2 GiB")))
            elif _is(n, "aten.scaled_dot_product_attention.default"):
                shape, R, seq_len, offset, inputs, cov = _attention(n, kv_lengths)
                j = sum(p.kind == "attention" for p in out.graphs)
                try:
                    module = attention_graph(shape, strategy, seq_len, offset,
                                             name=f"{name}_attention{j}_{strategy}")
                except ValueError as e:
                    raise NotRecognized(n, f"GQA decode attention: {e} (option strategy)") \
                        from None
                out.graphs.append(LoweredPart("attention", module, shape, inputs, R,
                                              seq_len, offset, outputs=[n.name], covered=cov))
                covered |= cov
        except NotRecognized as e:  # at the node at fault, or the anchor if it has no source
            where = where_of(e.node)
            out.remarks.append(Remark(where_of(n) if where.startswith("<") else where,
                                      e.message))
        except (IndexError, KeyError, TypeError, AttributeError) as e:  # a form not foreseen
            what = "top-k MoE" if _is(n, "aten.topk.default") else "GQA decode attention"
            out.remarks.append(Remark(where_of(n), f"{what} not recognized: unexpected "
                                                   f"argument form ({type(e).__name__})"))
    if dense is not None:
        for j, (m, r) in enumerate(moes):
            part = _router(m, dense, f"{name}_router{j}", out.remarks)
            if part is not None:
                out.graphs.append(part)
                out.remarks[r] = Remark(out.remarks[r].where, out.remarks[r].message.split(
                    "; the router is not lowered")[0] + f"; the router is lowered to "
                    f"@{name}_router{j} (its indices bind the routing select_gens: "
                    "step-specialize{routing=...})")
        for part in _dense(nodes, covered, dense, name, out.remarks):
            out.graphs.append(part)
            covered |= part.covered
    rest = [n for n in nodes if n.op == "call_function" and n not in covered
            and name_of(n) not in BOOKKEEPING]
    if rest:
        ops = sorted({name_of(n) for n in rest})
        out.remarks.append(Remark(where_of(rest[0]), (
            f"{len(rest)} op(s) outside the recognized layers are not lowered by the "
            f"recognizers{' nor by convert-linalg-to-step (option dense)' if dense else ''} "
            f"({', '.join(ops[:8])}{', ...' if len(ops) > 8 else ''})")))
    return out


_DENSE = re.compile(r"^\s*tile=(\S+)(?:\s+schedule=(\S+))?\s*$")


def _dense_options(options: str) -> tuple[str, str]:
    m = _DENSE.match(options)
    if not m:
        raise ValueError(f"dense: expected 'tile=MxN[xK] [schedule=S]', got '{options}'")
    return m.group(1), m.group(2) or "mn_mk"


def _context():
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin, func, linalg, math, tensor

    ctx = Context()
    for d in (arith.Arith, builtin.Builtin, func.Func, linalg.Linalg, tensor.Tensor, math.Math):
        ctx.load_dialect(d)
    return ctx


def _dense(nodes, covered: set, options: str, name: str, remarks: list):
    """What is left that linalg expresses (glue.py's regions), each region as a linalg
    function lowered by convert-linalg-to-step."""
    from xdsl.parser import Parser

    from steplus.lowering.linalg_to_step import glue, lower_module
    from steplus.utils.diagnostics import OpDiagnosticError

    tile, schedule = _dense_options(options)
    ctx = _context()
    groups = glue.regions(nodes, covered)
    produced = {n for n in covered if n.op == "call_function"}  # stored by their parts
    for g in groups:
        produced |= {n for n in g if any(u not in g for u in n.users)}
    for j, region in enumerate(groups):
        fname = f"{name}_dense{j}"
        try:
            t = glue.region_text(region, fname, produced)
            module = Parser(ctx, t.text).parse_module()
            (low,) = lower_module(module, tile=tile, schedule=schedule)
        except (ValueError, OpDiagnosticError) as e:
            remarks.append(Remark(where_of(region[0]), f"not lowered ({', '.join(n.name for n in region)}): "
                                                       f"{getattr(e, 'message', e)} (option dense)"))
            continue
        kinds = {name_of(n) for n in region}
        role = ("projection" if kinds & set(glue.MATMUL) else
                "norm" if kinds & set(glue.REDUCE) else "elementwise")
        yield LoweredPart("dense", module, None, {f"arg{i}": a.name for i, a in enumerate(t.inputs)},
                          _shape(t.inputs[0])[0] if _shape(t.inputs[0]) else 0,
                          outputs=[o.name for o in t.outputs], lowered=low, role=role,
                          out_shapes=[_shape(o) for o in t.outputs], covered=set(region))


def _router(m, options: str, fname: str, remarks: list):
    """The router of a recognized MoE (`m`, a `_MoE` after `run`): logits matmul + the
    step library's row top-k functions (see glue.py), or a remark and None."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import f32
    from xdsl.parser import Parser

    from steplus.lowering.linalg_to_step import glue
    from steplus.lowering.linalg_to_step.emit import EmitOptions, emit_graph
    from steplus.lowering.linalg_to_step.options import parse_schedule, parse_tiles
    from steplus.lowering.linalg_to_step.recognize import Node, recognize
    from steplus.utils.diagnostics import OpDiagnosticError

    tk = m.topk
    src = tk.args[0]
    soft = ("aten.softmax.int", "aten._softmax.default")
    form = None
    if name_of(src) in soft and src.args[1] in (-1, 1):
        form, mm = "qwen", src.args[0]
    else:
        mm = src
    w = m.weights
    if form == "qwen":
        ok = (_is(w, "aten.div.Tensor") and w.args[0] is m.values
              and _is(w.args[1], "aten.sum.dim_IntList") and w.args[1].args[0] is m.values)
        fn = f"row_softmax_topk[{m.k}]"
    else:
        ok = name_of(w) in soft and w.args[0] is m.values and w.args[1] in (-1, 1)
        form, fn = "mixtral", f"row_topk_softmax[{m.k}]"
    where = where_of(mm)
    if not (ok and name_of(mm) in glue.MATMUL and glue.lowerable(mm) and mm.args[0] is m.x):
        remarks.append(Remark(where, "router not lowered: expected x @ w_router, then "
                                     "softmax, topk and renormalization (Qwen3) or topk and "
                                     "softmax (Mixtral)"))
        return None
    B, E = _shape(mm)
    try:
        tile, schedule = _dense_options(options)
        t = glue.region_text([mm], fname, {m.x} if m.x.op == "call_function" else set())
        module = Parser(_context(), t.text).parse_module()
        f = next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))
        rec = recognize(f)
        (logits,) = rec.results
        weights = Node("ewise", (B, m.k), f32, logits.op, [logits], fn=fn, bcast=["full"],
                       tensor=(B, m.k))
        index = Node("ewise", (B, m.k), f32, logits.op, [logits],
                     fn=f"row_topk_index[{m.k}]", bcast=["full"], tensor=(B, m.k))
        rec.nodes += [weights, index]
        rec.results = [weights, index]
        low = emit_graph(rec, EmitOptions(parse_tiles(glue.router_tile(tile, E)),
                                          parse_schedule(schedule), {}))
    except (ValueError, OpDiagnosticError) as e:
        remarks.append(Remark(where, f"router not lowered: {getattr(e, 'message', e)} "
                                     "(option dense)"))
        return None
    graph = low.graph.module().body.block.first_op
    graph.detach()
    module.body.block.insert_op_before(graph, f)
    module.body.block.erase_op(f)
    cov = {mm, tk, m.values, m.idx, m.weights} | (_ancestors(m.weights) - _ancestors(mm) - {mm})
    cov = {n for n in cov if n.op == "call_function"} | {mm}
    return LoweredPart("dense", module, None, {"arg0": m.x.name, "arg1": mm.args[1].name}, B,
                       outputs=[m.weights.name, m.idx.name], lowered=low, role="router",
                       out_shapes=[(B, m.k), (B, m.k)], covered=cov)
