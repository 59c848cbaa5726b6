"""The top-k MoE recognizer: the public forms of a sparse MoE layer in a `torch.export` graph.

A router `topk` over the scores of `x` (softmax before, or after on the k
values, or a renormalization `w / w.sum(-1, keepdim=True)`; `.to(dtype)` and
in-place `div_` allowed), then one branch per expert `e` of `E`, in any of the
forms public code writes:

- **expert selection**: `tok, slot = torch.where(idx == e)`, or a one-hot mask
  `F.one_hot(idx, E).permute(2, 1, 0)` with `slot, tok = torch.where(mask[e])`
  (HuggingFace Mixtral / Qwen2-MoE), or `torch.where(F.one_hot(idx, E)[..., e])`;
- **gather**: `x.index_select(0, tok)`, `x[tok]` or `x[None, tok].reshape(-1, D)`;
- **expert**: the SwiGLU FFN `down(silu(gate(h)) * up(h))`, each projection
  either `h @ w[e]` of a stacked `[E, ...]` argument or an `nn.Linear`
  without bias of an `nn.ModuleList` (`linear(h, W_e)`, `W_e` `[out, in]`);
- **routing weight**: `weights[tok, slot].unsqueeze(-1)` or
  `weights[tok, slot, None]`, multiplied with the expert output (`.to(dtype)`
  allowed);
- **combine**: `out.index_add(0, tok, y)` / `out.index_add_(0, tok, y)`, or
  `out.scatter_add(0, tok.unsqueeze(-1).expand(-1, D), y)` (also in place),
  chained from `torch.zeros_like(x)` or `torch.zeros(B, D)`, every expert once.

`MoEMatch(topk).run()` returns the §8.2 shape, the batch, the output node, the
part's inputs (role -> node name) and `derive`: for `nn.Linear` experts the
stacked `[E, D, F]` / `[E, F, D]` weights the graph's layout reads, computed from
the per-expert parameters (by synthetic names `moe:w_gate`, ...), so the
functional runner binds them like stacked arguments. A check that fails raises
`NotRecognized` at the node at fault.

Example: HuggingFace's `MixtralSparseMoeBlock` (`examples/torch_zoo/mixtral_moe.py`)
gives `MoEShape(4, 2, 32, 64)` with inputs `{"x": "view", "w_gate": "moe:w_gate",
..., "w_gate.0": "p_experts_0_w1_weight", ...}`.
"""

from __future__ import annotations

import numpy as np

from steplus.lowering.linalg_to_step.fx_graph import (
    BOOKKEEPING, NotRecognized, ancestors, bookkeeping_users, drop_shared, dtype_of, getitem_of, is_op,
    name_of, rank_of, shape_of,
)
from steplus.lowering.linalg_to_step.moe_graph import MoEShape

ROUTER_TAIL = {"aten.div.Tensor", "aten.div_.Tensor", "aten.softmax.int",
               "aten._softmax.default", "aten.sum.dim_IntList", "aten._to_copy.default",
               "aten.to.dtype"}
CASTS = ("aten.to.dtype", "aten._to_copy.default")
MATMULS = ("aten.matmul.default", "aten.mm.default")
INDEX_ADD = ("aten.index_add.default", "aten.index_add_.default")
SCATTER_ADD = ("aten.scatter_add.default", "aten.scatter_add_.default")
VIEWS = ("aten.reshape.default", "aten.view.default", "aten._unsafe_view.default")
STACKED, LINEAR = "stacked", "linear"
ROLES = ("w_gate", "w_up", "w_down")


def strip_casts(node, any_dtype: bool = False):
    """`node` without the same-dtype `.to(...)` copies around it (they move no data), or
    without any cast (`any_dtype`: the routing weights, which the graph reads as bf16)."""
    while (is_op(node, "aten.to.dtype") or is_op(node, "aten._to_copy.default")) \
            and (any_dtype or dtype_of(node) == dtype_of(node.args[0])):
        node = node.args[0]
    return node


class MoEMatch:
    """Matches one top-k MoE layer from its router's `topk` (see the module doc).

    After `run()`: `topk`, `x` (the expert input), `weights` (the routing weights
    `[B, K]` before any cast), `values`/`idx` (topk's results), `k`, `covered`
    (every node the §8.2 graph replaces)."""

    def __init__(self, topk):
        self.topk = topk
        self.covered: set = {topk}
        self.derive: dict = {}

    def need(self, ok: bool, node, msg: str) -> None:
        if not ok:
            raise NotRecognized(node, f"top-k MoE not recognized: {msg}")

    # -- the router and the expert selections --------------------------------------------
    def run(self):
        tk = self.topk
        values, idx = getitem_of(tk, 0), getitem_of(tk, 1)
        self.need(values is not None and idx is not None, tk, "topk's values or indices unused")
        assert values is not None and idx is not None
        self.covered |= {values, idx}
        k = tk.args[1]
        dim = tk.args[2] if len(tk.args) > 2 else tk.kwargs.get("dim", -1)
        self.need(isinstance(k, int) and dim in (-1, 1), tk, "topk must pick k experts along "
                  "the last dim of [tokens, experts] router scores")
        sidx = shape_of(idx)
        self.need(sidx is not None and len(sidx) == 2, tk, "topk's indices are not [tokens, k]")
        router = ancestors(tk)
        branches: dict[int, tuple] = {}
        for u in idx.users:
            for e, tok, slot, sel in self.selections(u):
                self.need(e not in branches, sel, f"expert {e} selected twice")
                branches[e] = (tok, slot, sel)
        self.need(bool(branches), tk, "no expert selects its tokens with torch.where(idx == e) "
                  "or torch.where(one_hot(idx)[e])")
        infos = {e: self.branch(e, *b) for e, b in sorted(branches.items())}
        first_e = next(iter(infos))
        first = infos[first_e]
        for e, b in infos.items():
            for role in ("x", "w", "form"):
                self.need(b[role] is first[role] if role != "form" else b[role] == first[role],
                          b["add"], f"expert {e} uses another "
                          f"{'weight form' if role == 'form' else role} than expert {first_e}")
        x, weights = first["x"], strip_casts(first["w"], any_dtype=True)
        self.need(x in router, tk, f"the router does not read the expert input {x.name}")
        wanc = ancestors(first["w"]) | {first["w"]}
        self.need(values in wanc, first["w"], "the routing weights are not computed from "
                  "topk's values")
        tail = [n for n in wanc if n not in router and n.op != "placeholder"]
        for n in tail:
            self.need(n is values or n is tk or name_of(n) in ROUTER_TAIL | BOOKKEEPING, n,
                      f"'{name_of(n)}' in the routing weights' computation")
        before = ancestors(x) | {x}
        self.covered |= set(tail) | {n for n in router - before if n.op != "placeholder"}
        self.covered |= {u for n in self.covered for u in n.users
                         if name_of(u) in BOOKKEEPING}
        self.x, self.weights, self.values, self.idx, self.k = x, weights, values, idx, k
        shape, B = self.shapes(x, infos, branches, k)
        out = self.chain(x, infos, shape.experts)
        drop_shared(self.covered, out)
        inputs = {"x": x.name}
        if first["form"] == STACKED:
            inputs.update({r: first[r].name for r in ROLES})
        else:
            for r in ROLES:
                names = [infos[e][r].name for e in range(shape.experts)]
                inputs[r] = f"moe:{r}"
                inputs.update({f"{r}.{e}": nm for e, nm in enumerate(names)})
                self.derive[f"moe:{r}"] = _stacker(names)
        return shape, B, out, inputs

    def selections(self, u):
        """(expert, tokens, slots, anchor) of the expert selections `u` (a user of topk's
        indices) starts; raises for a use that is none."""
        if is_op(u, "aten.eq.Scalar") and isinstance(u.args[1], int):
            tok, slot = self.where(u, u.args[1], swapped=False)
            return [(u.args[1], tok, slot, u)]
        if is_op(u, "aten.one_hot.default"):
            self.covered.add(u)
            out = []
            for p in u.users:
                if is_op(p, "aten.permute.default") and list(p.args[1]) == [2, 1, 0]:
                    self.covered.add(p)
                    for s in p.users:
                        self.need(is_op(s, "aten.select.int") and s.args[1] == 0, s,
                                  "the permuted expert mask is not indexed mask[e]")
                        out.append((s.args[2], *self.where(s, s.args[2], swapped=True), s))
                elif is_op(p, "aten.select.int") and p.args[1] in (2, -1):
                    out.append((p.args[2], *self.where(p, p.args[2], swapped=False), p))
                else:
                    self.need(False, p, f"the one-hot expert mask feeds '{name_of(p)}', not "
                              "mask.permute(2, 1, 0)[e] or mask[..., e]")
            return out
        if u.op == "call_function" and name_of(u) not in BOOKKEEPING:
            self.need(False, u, f"the expert indices feed '{name_of(u)}', not an "
                                "'idx == e' or one_hot expert selection")
        return []

    def where(self, sel, e: int, swapped: bool):
        users = list(sel.users)
        self.need(len(users) == 1 and is_op(users[0], "aten.where.default")
                  and len(users[0].args) == 1, sel,
                  f"expert {e}: its mask must feed torch.where(mask) only")
        w = users[0]
        a, b = getitem_of(w, 0), getitem_of(w, 1)
        self.need(a is not None and b is not None, w, f"expert {e}: torch.where's "
                  "(token, slot) pair unused")
        self.covered |= {sel, w, a, b}
        return (b, a) if swapped else (a, b)

    # -- one expert branch ---------------------------------------------------------------
    def branch(self, e: int, tok, slot, sel) -> dict:
        gathers, adds, wsel = [], [], []
        for u in tok.users:
            if name_of(u) in BOOKKEEPING:
                self.covered |= {u} | bookkeeping_users(u)
            elif name_of(u) in INDEX_ADD:
                adds.append(u)
            elif is_op(u, "aten.unsqueeze.default") and u.args[1] in (-1, 1):
                adds.append(self.scatter(e, u))
            elif is_op(u, "aten.index_select.default"):
                gathers.append(u)
            elif is_op(u, "aten.index.Tensor"):
                ix = list(u.args[1])
                (wsel if len(ix) == 2 and ix[0] is tok and ix[1] is slot else gathers).append(u)
            else:
                self.need(False, u, f"expert {e}: its token indices feed '{name_of(u)}'")
        for u in slot.users:
            if name_of(u) in BOOKKEEPING:
                self.covered |= {u} | bookkeeping_users(u)
            else:
                self.need(u in wsel, u, f"expert {e}: its slots feed '{name_of(u)}', not "
                          "weights[tokens, slots]")
        self.need(len(gathers) == 1, tok, f"expert {e}: expected one gather of its tokens "
                  "(x.index_select(0, tok), x[tok] or x[None, tok])")
        self.need(len(adds) == 1 and adds[0].args[1] == 0
                  and (adds[0].args[2] is tok or name_of(adds[0]) in SCATTER_ADD), tok,
                  f"expert {e}: expected one index_add(out, 0, tokens, y) scattering its result")
        self.need(len(wsel) == 1, tok, f"expert {e}: expected weights[tokens, slots]")
        h, x = self.gather(e, gathers[0], tok)
        add, g = adds[0], wsel[0]
        w, wcov = self.routing_weight(e, g)
        y = add.args[3]
        ycast = [y]
        while name_of(y) in CASTS:
            y = y.args[0]
            ycast.append(y)
        self.need(is_op(y, "aten.mul.Tensor"), y, f"expert {e}: the scattered value is not "
                  "expert output * routing weight")
        self.need(wcov[-1] in y.args, y, f"expert {e}: the routing weight is not "
                  "weights[tokens, slots].unsqueeze(-1)")
        down = y.args[1] if y.args[0] is wcov[-1] else y.args[0]
        wd, form, p = self.projection(down, e, "down")
        self.need(is_op(p, "aten.mul.Tensor"), p, f"expert {e}: expected silu(gate(h)) * "
                  "up(h) before the down projection")
        a, b = p.args
        if not is_op(a, "aten.silu.default"):
            a, b = b, a
        self.need(is_op(a, "aten.silu.default"), p, f"expert {e}: no silu in the SwiGLU product")
        wg, fg, hg = self.projection(a.args[0], e, "gate")
        wu, fu, hu = self.projection(b, e, "up")
        self.need(hg is h and hu is h, p, f"expert {e}: gate and up do not both read the "
                  "gathered tokens")
        self.need(fg == fu == form, p, f"expert {e}: its projections mix stacked weights "
                  "and nn.Linear")
        self.covered |= {add, g, down, p, a, *ycast, *wcov}
        return {"x": x, "w_gate": wg, "w_up": wu, "w_down": wd, "w": w, "add": add,
                "form": form}

    def scatter(self, e: int, u):
        """`out.scatter_add(0, tok.unsqueeze(-1).expand(-1, D), y)` from the unsqueeze `u`:
        the scatter_add (its index nodes covered)."""
        ex = list(u.users)
        self.need(len(ex) == 1 and is_op(ex[0], "aten.expand.default"), u,
                  f"expert {e}: tokens.unsqueeze(-1) is not expanded to [tokens, D] for a "
                  "scatter_add")
        sc = list(ex[0].users)
        self.need(len(sc) == 1 and name_of(sc[0]) in SCATTER_ADD and sc[0].args[2] is ex[0],
                  ex[0], f"expert {e}: the expanded token index does not feed one "
                  "scatter_add(out, 0, index, y)")
        self.covered |= {u, ex[0]}
        return sc[0]

    def gather(self, e: int, g, tok):
        """(the gathered tokens h, the expert input x) of the gather `g`."""
        cov = [g]
        if is_op(g, "aten.index_select.default"):
            self.need(g.args[1] == 0 and g.args[2] is tok, g, f"expert {e}: expected "
                      "index_select(x, 0, tokens)")
            x, h = g.args[0], g
        else:
            ix = list(g.args[1])
            base = g.args[0]
            if ix == [tok]:
                x, h = base, g
            else:
                self.need(ix == [None, tok] and is_op(base, "aten.unsqueeze.default")
                          and base.args[1] == 0, g, f"expert {e}: expected x[tok] or "
                          "x[None, tok]")
                x, h = base.args[0], g
                cov.append(base)
                users = list(g.users)
                self.need(len(users) == 1 and name_of(users[0]) in VIEWS, g,
                          f"expert {e}: x[None, tok] is not reshaped to [tokens, D]")
                h = users[0]
                cov.append(h)
        sx = shape_of(x)
        self.need(sx is not None and len(sx) == 2, g, f"expert {e}: the expert input "
                  f"{x.name} is not a static [tokens, D] tensor")
        self.need(rank_of(h) == 2, g, f"expert {e}: the gathered tokens are not "
                  "[tokens, D]")
        self.covered |= set(cov)
        return h, x

    def routing_weight(self, e: int, g):
        """(the [B, K] weights, the nodes from the gather to the [n, 1] column)."""
        base = g.args[0]
        if is_op(base, "aten.unsqueeze.default") and base.args[1] in (2, -1):
            return base.args[0], [base, g]  # weights[tok, slot, None]
        users = [u for u in g.users]
        self.need(len(users) == 1 and is_op(users[0], "aten.unsqueeze.default")
                  and users[0].args[1] in (-1, 1), g, f"expert {e}: the routing weight is not "
                  "weights[tokens, slots].unsqueeze(-1)")
        return base, [g, users[0]]

    def projection(self, mm, e: int, what: str):
        """(the weight node, its form, the left operand) of one expert projection."""
        if is_op(mm, "aten.linear.default"):
            self.need(len(mm.args) == 2 or mm.args[2] is None, mm, f"expert {e}: the {what} "
                      "nn.Linear has a bias (the §8.2 expert has none)")
            lhs, w = mm.args[:2]
            self.need(w.op == "placeholder" and len(shape_of(w) or ()) == 2, w,
                      f"expert {e}: the {what} weight is not a parameter [out, in]")
            self.covered.add(mm)
            return w, LINEAR, lhs
        self.need(name_of(mm) in MATMULS, mm,
                  f"expert {e}: the {what} projection is '{name_of(mm)}', not a matmul or "
                  "nn.Linear")
        lhs, w = mm.args
        self.need(is_op(w, "aten.select.int") and w.args[1] == 0 and w.args[2] == e
                  and w.args[0].op == "placeholder", w, f"expert {e}: the {what} weight is not "
                  f"w_{what}[{e}] of a stacked [E, ...] argument")
        self.covered |= {mm, w}
        return w.args[0], STACKED, lhs

    # -- shapes and the combine chain ----------------------------------------------------
    def shapes(self, x, infos: dict, branches: dict, k: int):
        tk = self.topk
        first = next(iter(infos.values()))
        sx = shape_of(x)
        assert sx is not None
        B, D = sx
        if first["form"] == STACKED:
            sg, su, sd = (shape_of(first[r]) for r in ROLES)
            self.need(sg is not None and len(sg) == 3 and su == sg and sd is not None
                      and len(sd) == 3, tk, "expected x [B, D], w_gate/w_up [E, D, F], "
                      "w_down [E, F, D] of static shapes")
            assert sg is not None and sd is not None
            E, D2, F = sg
            self.need(D2 == D and sd == (E, F, D), tk, f"weight shapes {sg} / {sd} do not "
                      f"agree with x {sx}")
        else:
            E = len(infos)
            sg = shape_of(first["w_gate"])
            assert sg is not None
            F = sg[0]
            for e, b in infos.items():
                got = tuple(shape_of(b[r]) for r in ROLES)
                self.need(got == ((F, D), (F, D), (D, F)), b["add"], f"expert {e}: nn.Linear "
                          f"weights {list(got)}, expected gate/up [{F}, {D}] and down "
                          f"[{D}, {F}] ([out, in])")
                names = [b[r] for r in ROLES]
                self.need(len(set(names)) == 3, b["add"], f"expert {e} shares a weight "
                          "between its projections")
            all_w = [b[r] for b in infos.values() for r in ROLES]
            self.need(len(set(all_w)) == len(all_w), tk, "two experts share a weight")
        self.need(sorted(branches) == list(range(E)), tk, f"{E} experts, but branches for "
                  f"{sorted(branches)}: every expert must be selected once")
        self.need(k <= E, tk, f"top-{k} of {E} experts")
        idx = self.idx
        assert idx is not None
        oh = [u for u in idx.users if is_op(u, "aten.one_hot.default")]
        self.need(all(u.args[1] == E for u in oh), tk, f"one_hot over other than {E} experts")
        return MoEShape(E, k, D, F), B

    def chain(self, x, infos: dict, E: int):
        adds = {b["add"]: e for e, b in infos.items()}
        start = None
        for b in infos.values():
            prev = b["add"].args[0]
            if prev not in adds:
                self.need(start is None, prev, "the expert results go into several tensors")
                start = prev
        tk = self.topk
        self.need(start is not None and (is_op(start, "aten.zeros_like.default")
                                         and start.args[0] is x
                                         or is_op(start, "aten.zeros.default")
                                         and shape_of(start) == shape_of(x)),
                  start or tk, "the expert results are not index_added into zeros_like(x)")
        assert start is not None
        self.covered.add(start)
        node = start
        for _ in range(E):
            nxt = [u for u in node.users if u in adds and u.args[0] is node]
            self.need(len(nxt) == 1, node, "the index_add chain branches")
            node = nxt[0]
        return node


def _stacker(names: list[str]):
    """values -> the stacked `[E, in, out]` matrices of per-expert nn.Linear weights
    (`[out, in]` each, transposed: the graph computes `h @ W^T`)."""
    def stack(values: dict) -> np.ndarray:
        return np.stack([np.asarray(values[n], np.float64).T for n in names])
    return stack
