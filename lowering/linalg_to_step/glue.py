"""The rest of a `torch.export` graph -> linalg functions -> `convert-linalg-to-step` graphs.

After the MoE and attention recognizers (`aten.py`), the remaining ATen ops
that linalg on tensors expresses — projections (`matmul`/`mm` of a 2-D left
operand by a 2-D weight argument), element-wise `add/sub/mul/div` (tensors,
row/column broadcasts or a scalar), `rsqrt`, `exp`, `neg`, `silu`,
`pow(x, 2)`, and `mean`/`sum` over the last dim with `keepdim` — are grouped
into regions and each region is written as a linalg-on-tensors function (the
forms torch-mlir emits) and lowered by `convert-linalg-to-step`:

- a value joins its consumer's region when that consumer is its only user
  (RMSNorm's chain, a projection and its residual add); a value with several
  users is a region's result, stored, and read back by every user (so no
  on-chip row buffer is needed and regions never depend on each other in a
  cycle); projections that share their left operand share a region (q/k/v);
- an element-wise op of one tensor (and scalars) on a view of a region value
  joins that region, applied before the view (it commutes with the reshape:
  `(h @ w_q).view(B, H, 1, D) * c` scales the projection's tiles);
- an element-wise region of same-shape tensors of any rank is flattened to
  2-D (`[B, H, 1, D]` -> `[B*H, D]`: a view of row-major memory).

The MoE router (`router_part`): the logits matmul and a row function of the
step library (`row_softmax_topk[k]` for Qwen3's softmax-then-top-k,
`row_topk_softmax[k]` for Mixtral's top-k-then-softmax) and the indices
(`row_topk_index[k]`), both stored; one tile spans the E columns of a row.

Example: the small Qwen decoder layer gives regions `{pow, mean, add, rsqrt,
mul, mul_1}` (RMSNorm), `{matmul, view, mul_2, matmul_1, matmul_2}` (q/k/v,
q scaled by 1/sqrt(d)), `{matmul_3, add_1}` (output projection + residual),
a second RMSNorm, and `{add_3}` (the last residual).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from steplus.lowering.linalg_to_step.aten import _shape

UNARY = {"aten.rsqrt.default": "math.rsqrt", "aten.exp.default": "math.exp",
         "aten.neg.default": "arith.negf"}
BINARY = {"aten.add.Tensor": "arith.addf", "aten.sub.Tensor": "arith.subf",
          "aten.mul.Tensor": "arith.mulf", "aten.div.Tensor": "arith.divf"}
MATMUL = ("aten.matmul.default", "aten.mm.default")
REDUCE = ("aten.mean.dim", "aten.sum.dim_IntList")
OTHER = ("aten.silu.default", "aten.pow.Tensor_Scalar")


def _name(node) -> str:
    t = node.target
    return getattr(t, "__name__", "") if callable(t) and not hasattr(t, "_schema") else str(t)


def element(node) -> str:
    """The MLIR element type of a node's tensor (bf16/f16 kept, else f32)."""
    dtype = str(getattr((getattr(node, "meta", {}) or {}).get("val"), "dtype", ""))
    return {"torch.bfloat16": "bf16", "torch.float16": "f16"}.get(dtype, "f32")


def _is_tensor(x) -> bool:
    return hasattr(x, "op") and _shape(x) is not None


def _scalar(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def lowerable(n) -> bool:
    """An ATen node this module writes as linalg (see the module doc)."""
    try:
        return _lowerable(n)
    except (TypeError, ValueError, AttributeError):  # an argument form not foreseen
        return False


def _lowerable(n) -> bool:
    if getattr(n, "op", None) != "call_function" or n.kwargs:
        return False
    name, out = _name(n), _shape(n)
    if out is None or not out or 0 in out:
        return False
    args = list(n.args)
    if name in MATMUL:
        lhs, w = args
        return (_is_tensor(lhs) and _is_tensor(w) and w.op == "placeholder"
                and len(_shape(lhs)) == 2 and len(_shape(w)) == 2)
    if name in REDUCE:
        x = args[0]
        return (len(args) == 3 and _is_tensor(x) and len(_shape(x)) == 2
                and list(args[1]) in ([-1], [1]) and args[2] is True)
    if name == "aten.pow.Tensor_Scalar":
        return _is_tensor(args[0]) and args[1] == 2
    if name in UNARY or name == "aten.silu.default":
        return len(args) == 1 and _is_tensor(args[0])
    if name in BINARY:
        if len(args) != 2 or not any(_is_tensor(a) for a in args):
            return False
        for a in args:
            if _is_tensor(a):
                s = _shape(a)
                if s != out and not (len(out) == 2 and s in ((out[1],), (1, out[1]),
                                                               (out[0], 1))):
                    return False
            elif not _scalar(a):
                return False
        return True
    return False


def regions(nodes, covered: set) -> list[list]:
    """Lowerable, uncovered nodes grouped as the module doc says (graph order)."""
    cand = [n for n in nodes if n not in covered and lowerable(n)]
    inset = set(cand)
    parent = {n: n for n in cand}

    def find(n):
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    by_lhs: dict = {}
    transparent: dict = {}  # a view inside a region -> its element-wise user
    for n in cand:
        if _name(n) in MATMUL:
            lhs = n.args[0]
            if lhs in by_lhs:
                parent[find(n)] = find(by_lhs[lhs])
            else:
                by_lhs[lhs] = n
            continue  # the left operand is read from memory, never joined
        for a in n.all_input_nodes:
            if a in inset and len(a.users) == 1:
                parent[find(a)] = find(n)
            elif _through_view(n, a, inset):  # x.view(..) * c: the scale on x, then the view
                parent[find(a.args[0])] = find(n)
                transparent[a] = n
    groups: dict = {}
    for n in cand:
        groups.setdefault(find(n), []).append(n)
    for v, n in transparent.items():
        groups[find(n)].append(v)
    order = {n: i for i, n in enumerate(nodes)}
    return [sorted(g, key=order.__getitem__) for g in groups.values()]


def _hoistable(n) -> bool:
    """An element-wise op of one tensor (and scalars): it commutes with a reshape."""
    name = _name(n)
    tensors = [a for a in n.args if _is_tensor(a)]
    return (name in UNARY or name in OTHER or name in BINARY) and len(tensors) == 1


def _through_view(n, a, inset: set) -> bool:
    """`a` is a view whose only user is `n`, of a region value whose only user is `a`."""
    return (_name(a) in VIEWS and len(a.users) == 1 and _hoistable(n)
            and a.args and a.args[0] in inset and len(a.args[0].users) == 1
            and _name(a.args[0]) not in REDUCE)


@dataclass
class Text:
    """A region written as a linalg function: its text, inputs and outputs (nodes)."""

    text: str
    inputs: list
    outputs: list
    flat: bool  # same-shape element-wise region flattened to 2-D


def _t(shape, el: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{el}>"


def _f(v: float) -> str:
    return f"{float(np.float32(v)):.17e}"  # torch rounds a scalar to the tensor's f32


VIEWS = ("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
         "aten.unsqueeze.default", "aten.squeeze.dim")


def stored_f32(node, produced: set) -> bool:
    """Whether `node` (through views) is a lowered part's result: stored as f32."""
    for _ in range(64):
        if node in produced:
            return True
        if _name(node) not in VIEWS:
            return False
        node = node.args[0]
    return False


def region_text(region: list, fname: str, produced: set = frozenset()) -> Text:
    """The linalg-on-tensors function of a region (torch-mlir's forms); an input that
    another lowered part computes (`produced`, through views) is read as f32."""
    inset = set(region)
    inputs: list = []
    for n in region:
        for a in n.all_input_nodes:
            if a not in inset and a not in inputs:
                inputs.append(a)
    outputs = [n for n in region if any(u not in inset for u in n.users)]
    shapes = {n: _shape(n) for n in [*region, *inputs]}
    views = {n for n in region if _name(n) in VIEWS}
    for n in region:  # a view in a region is its source; its element-wise user keeps that shape
        if n in views:
            shapes[n] = shapes[n.args[0]]
        elif any(a in views for a in n.all_input_nodes):
            shapes[n] = shapes[next(a for a in n.all_input_nodes if a in views)]
    flat = any(len(s) > 2 for s in shapes.values())
    if flat:
        if len({s for s in shapes.values()}) != 1 or any(
                _name(n) in MATMUL + REDUCE for n in region):
            raise ValueError("an element-wise region of tensors of rank > 2 must have one shape")
        s = next(iter(shapes.values()))
        two = (int(np.prod(s[:-1])), s[-1])
        shapes = {n: two for n in shapes}
    val: dict = {}
    el: dict = {}
    args = []
    for i, a in enumerate(inputs):
        val[a], el[a] = f"%a{i}", "f32" if stored_f32(a, produced) else element(a)
        args.append(f"%a{i}: {_t(shapes[a], el[a])}")
    body = ["  %zero = arith.constant 0.000000e+00 : f32"]
    consts: dict[str, str] = {}

    def const(v: float) -> str:
        text = _f(v)
        if text not in consts:
            consts[text] = f"%c{len(consts)}"
            body.append(f"  {consts[text]} = arith.constant {text} : f32")
        return consts[text]

    def ext(x: str, e: str) -> tuple[list[str], str]:
        return ([f"    {x}e = arith.extf {x} : {e} to f32"], f"{x}e") if e != "f32" else ([], x)

    def generic(ins: list, out_shape, lines_of) -> str:
        """An element-wise generic over `ins` (nodes or scalar names) into out_shape."""
        r = f"%v{len(body)}"
        ts = [a for a in ins if not isinstance(a, str)]
        rank = len(out_shape)
        ids = ", ".join(f"d{i}" for i in range(rank))
        maps = []
        for a in ts:
            s = shapes[a]
            if s == tuple(out_shape):
                m = ids
            elif len(s) == 1:
                m = "d1"
            elif s == (1, out_shape[1]):
                m = "0, d1"
            else:
                m = "d0, 0"
            maps.append(f"affine_map<({ids}) -> ({m})>")
        maps.append(f"affine_map<({ids}) -> ({ids})>")
        empty = f"%e{len(body)}"
        ot = _t(out_shape, "f32")
        body.append(f"  {empty} = tensor.empty() : {ot}")
        blk = [f"%i{k}: {el[a]}" for k, a in enumerate(ts)] + ["%o: f32"]
        lines, names = [], []
        k = 0
        for a in ins:
            if isinstance(a, str):
                names.append(a)
            else:
                ln, nm = ext(f"%i{k}", el[a])
                lines += ln
                names.append(nm)
                k += 1
        lines += lines_of(names)
        iters = ", ".join(['"parallel"'] * rank)
        body.append(f"  {r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                    f"iterator_types = [{iters}]}} "
                    f"ins({', '.join(val[a] for a in ts)} : "
                    f"{', '.join(_t(shapes[a], el[a]) for a in ts)}) outs({empty} : {ot}) {{")
        body.append(f"  ^bb0({', '.join(blk)}):")
        body.extend(lines)
        body.append("    linalg.yield %y : f32")
        body.append(f"  }} -> {ot}")
        return r

    for n in region:
        name, out = _name(n), shapes[n]
        if n in views:
            val[n], el[n] = val[n.args[0]], el[n.args[0]]
            continue
        if name in MATMUL:
            lhs, w = n.args
            ot = _t(out, "f32")
            e, z, r = f"%e{len(body)}", f"%z{len(body)}", f"%v{len(body)}"
            body += [f"  {e} = tensor.empty() : {ot}",
                     f"  {z} = linalg.fill ins(%zero : f32) outs({e} : {ot}) -> {ot}"]
            body.append(f"  {r} = linalg.matmul ins({val[lhs]}, {val[w]} : "
                        f"{_t(shapes[lhs], el[lhs])}, {_t(shapes[w], el[w])}) "
                        f"outs({z} : {ot}) -> {ot}")
        elif name in REDUCE:
            x = n.args[0]
            M, N = shapes[x]
            ct = _t((M, 1), "f32")
            e, z, r = f"%e{len(body)}", f"%z{len(body)}", f"%v{len(body)}"
            body += [f"  {e} = tensor.empty() : {ct}",
                     f"  {z} = linalg.fill ins(%zero : f32) outs({e} : {ct}) -> {ct}"]
            ln, nm = ext("%in", el[x])
            body += [f"  {r} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> "
                     f"(d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = "
                     f"[\"parallel\", \"reduction\"]}} ins({val[x]} : {_t((M, N), el[x])}) "
                     f"outs({z} : {ct}) {{",
                     f"  ^bb0(%in: {el[x]}, %o: f32):", *ln,
                     f"    %y = arith.addf {nm}, %o : f32", "    linalg.yield %y : f32",
                     f"  }} -> {ct}"]
            if name == "aten.mean.dim":
                val[n], el[n] = r, "f32"
                c = const(N)
                r = generic([n], (M, 1), lambda a, c=c: [f"    %y = arith.divf {a[0]}, {c} : f32"])
        elif name == "aten.pow.Tensor_Scalar":
            c = const(2.0)
            r = generic([n.args[0]], out,
                        lambda a, c=c: [f"    %y = math.powf {a[0]}, {c} : f32"])
        elif name in UNARY:
            r = generic([n.args[0]], out, lambda a, op=UNARY[name]: [f"    %y = {op} {a[0]} : f32"])
        elif name == "aten.silu.default":
            one = const(1.0)
            r = generic([n.args[0]], out, lambda a, one=one: [
                f"    %n = arith.negf {a[0]} : f32", "    %x = math.exp %n : f32",
                f"    %d = arith.addf %x, {one} : f32", f"    %y = arith.divf {a[0]}, %d : f32"])
        else:  # binary
            ins = [a if _is_tensor(a) else const(a) for a in n.args]
            r = generic(ins, out, lambda a, op=BINARY[name]: [f"    %y = {op} {a[0]}, {a[1]} : f32"])
        val[n], el[n] = r, "f32"
    rets = ", ".join(val[o] for o in outputs)
    rtypes = ", ".join(_t(shapes[o], "f32") for o in outputs)
    text = (f"func.func @{fname}({', '.join(args)}) -> ({rtypes}) {{\n" + "\n".join(body)
            + f"\n  return {rets} : {rtypes}\n}}\n")
    return Text(text, inputs, outputs, flat)


_TILE = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$")


def router_tile(tile: str, experts: int) -> str:
    """The dense tile with N = the experts (a row function needs whole rows)."""
    m = _TILE.match(tile.split(";")[0])
    if not m:
        raise ValueError(f"dense: tile '{tile}' is not MxN[xK]")
    return f"{m.group(1)}x{experts}" + (f"x{m.group(3)}" if m.group(3) else "")
