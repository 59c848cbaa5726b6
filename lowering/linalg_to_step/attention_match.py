"""The decode-attention recognizer: the public forms of one GQA decode step in a `torch.export` graph.

Two forms of `softmax(q K^T * scale) V` with one query row per head
(`q [B, Hq, 1, HD]`), keys/values `[B, Hkv, L + 1, HD]`:

- **SDPA**: `F.scaled_dot_product_attention(q, k, v)` with any `scale` (default
  `1/sqrt(HD)`), `enable_gqa=True` or keys/values already repeated, and an
  `attn_mask` only when it is an all-visible constant (`torch.ones(...,
  dtype=bool)`, `torch.zeros(...)`);
- **eager** (HuggingFace's `eager_attention_forward`): `torch.matmul(q,
  k.transpose(2, 3))`, times or divided by a scalar (`* self.scaling`, `/
  math.sqrt(d)`, `/ torch.full([], c)`), an additive mask, `torch.where(mask, w,
  fill)` or `w.masked_fill(mask, fill)` with a boolean mask and a fill no score
  survives, `softmax(dim=-1)` (a `dtype=` and `.to(q.dtype)` allowed, eval-mode
  dropout after it), `torch.matmul(p, v)`.

Keys and values are either `torch.cat([cache, new], dim=2)` (a KV cache: the
§8.4 graph reads the cache and appends the new row) or any tensor (no cache:
its last row is the "new" row, the rows before it the cache, bound through
`derive`). `repeat_kv` (`x[:, :, None].expand(...).reshape(...)`, or
`repeat_interleave(n, dim=1)`) in front of them is GQA: the KV heads are the
tensor before it. The scale goes into the graph as a `mul_scalar` on the
queries (`AttnShape.scale`).

`match_attention(anchor, kv_lengths)` returns an `AttnMatch` or None (the
anchor — a softmax — is not the eager attention form at all), and raises
`NotRecognized` at the node at fault when it is attention but not a form the
§8.4 graph computes.

Example: `examples/torch_zoo/gqa_decode.py`'s `LlamaDecodeAttention` (eager,
`* head_dim ** -0.5`) gives `AttnShape(16, 2, 0.25)`, 4 requests (B=2 x Hkv=2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steplus.lowering.linalg_to_step.attention_graph import TILE_N, AttnShape
from steplus.lowering.linalg_to_step.fx_graph import (
    BOOKKEEPING, NotRecognized, dtype_of, drop_shared, is_op, name_of, shape_of,
)

SDPA = "aten.scaled_dot_product_attention.default"
SOFTMAX = ("aten.softmax.int", "aten._softmax.default")
CASTS = ("aten.to.dtype", "aten._to_copy.default")
VIEWS = ("aten.reshape.default", "aten.view.default", "aten._unsafe_view.default")
MASKED_FILL = ("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
FILLS = {"aten.ones.default": 1, "aten.zeros.default": 0, "aten.full.default": None}


@dataclass
class AttnMatch:
    """One recognized decode attention (see the module doc)."""

    shape: AttnShape
    requests: int
    seq_len: list[int]
    offset: list[int]
    inputs: dict[str, str]
    covered: set
    out: Any  # the FX node whose value the graph computes
    derive: dict = field(default_factory=dict)
    form: str = "sdpa"


def _need(ok: bool, node, msg: str) -> None:
    if not ok:
        raise NotRecognized(node, f"GQA decode attention not recognized: {msg}")


def _skip_casts(node, cov: list):
    while name_of(node) in CASTS and dtype_of(node) == dtype_of(node.args[0]):
        cov.append(node)
        node = node.args[0]
    return node


def _unrepeat(t, cov: list):
    """(the KV-head tensor under a repeat_kv, repeats) — `(t, 1)` when there is none."""
    if is_op(t, "aten.repeat_interleave.self_int") and t.args[2:3] in ([1], [-3]):
        cov.append(t)
        return t.args[0], t.args[1]
    node, seen = t, []
    if name_of(node) in VIEWS:
        seen.append(node)
        node = node.args[0]
        if is_op(node, "aten.clone.default"):
            seen.append(node)
            node = node.args[0]
        if is_op(node, "aten.expand.default"):
            ex = node
            src = ex.args[0]
            if is_op(src, "aten.unsqueeze.default") and src.args[1] == 2:
                s5, s4 = shape_of(ex), shape_of(t)
                if s5 and s4 and len(s5) == 5 and len(s4) == 4 \
                        and s4 == (s5[0], s5[1] * s5[2], s5[3], s5[4]):
                    cov.extend([*seen, ex, src])
                    return src.args[0], s5[2]
    return t, 1


def _all_visible(mask) -> bool:
    """`mask` is a constant that masks nothing (all True, or additive zeros)."""
    name = name_of(mask)
    if name not in FILLS:
        return False
    fill = FILLS[name] if FILLS[name] is not None else (
        mask.args[1] if len(mask.args) > 1 else None)
    boolean = "bool" in dtype_of(mask)
    return fill is not None and ((boolean and fill in (1, True)) or (not boolean and fill == 0))


def _kv(t, which: str, j: int, cov: list, derive: dict):
    """(cache name, new-row name, cache shape, new shape) of keys/values `t`."""
    if is_op(t, "aten.cat.default"):
        parts, dim = t.args[0], t.args[1] if len(t.args) > 1 else 0
        _need(len(parts) == 2 and dim in (2, -2), t, f"the {which}s are cat(...) but not "
                                                    "cat([cache, new], dim=2)")
        cov.append(t)
        cache, new = parts
        return cache.name, new.name, shape_of(cache), shape_of(new)
    s = shape_of(t)
    _need(s is not None and len(s) == 4 and s[2] >= 1, t, f"the {which}s are not a static "
                                                           "[B, Hkv, L, HD] tensor")
    assert s is not None
    name = t.name
    derive[f"attn{j}:{which}_cache"] = lambda v: np.asarray(v[name])[:, :, :-1]
    derive[f"attn{j}:{which}_new"] = lambda v: np.asarray(v[name])[:, :, -1:]
    return (f"attn{j}:{which}_cache", f"attn{j}:{which}_new", (*s[:2], s[2] - 1, s[3]),
            (*s[:2], 1, s[3]))


def _build(anchor, q, k, v, scale, gqa: bool, kv_lengths, j: int, cov: list, out,
           form: str) -> AttnMatch:
    derive: dict = {}
    kk, nk = _unrepeat(k, cov)
    vv, nv = _unrepeat(v, cov)
    kc, kn, sc, sn = _kv(kk, "key", j, cov, derive)
    vc, vn, sv, svn = _kv(vv, "value", j, cov, derive)
    sq = shape_of(q)
    _need(all(s is not None and len(s) == 4 for s in (sq, sc, sn, sv, svn)), anchor,
          "expected static 4-D q [B, Hq, 1, HD] and keys/values [B, Hkv, L, HD]")
    assert sq is not None and sc is not None and sn is not None
    B, Hq, one, HD = sq
    _need(one == 1, q, f"a decode step has one query per head, got {one} (a prefill "
                       "is not the §8.4 decode graph: left to the dense lowering)")
    _need(sc == sv and sn == svn and sn == (B, sc[1], 1, HD) and sc[0] == B and sc[3] == HD,
          anchor, f"cache/new-row shapes {sc}, {sn}, {sv}, {svn} do not agree with q {sq}")
    _need(nk == nv, anchor, f"keys repeated {nk}x, values {nv}x")
    Hkv, L = sc[1], sc[2]
    _need(Hkv > 0 and Hq % Hkv == 0, anchor,
          f"{Hq} query heads do not group over {Hkv} KV heads")
    _need(Hq == Hkv * nk or gqa, anchor, "Hq != Hkv needs enable_gqa=True or repeat_kv")
    requests = B * Hkv
    lengths = list(kv_lengths) if kv_lengths is not None else [L] * requests
    _need(len(lengths) == requests, anchor, f"kv_lengths gives {len(lengths)} lengths for "
                                            f"{requests} requests (B x Hkv)")
    _need(math.isfinite(scale) and scale != 0, anchor, f"scale={scale} is not a finite "
                                                       "nonzero number")
    seq_len = [math.ceil((x + 1) / TILE_N) for x in lengths]
    offset = [x % TILE_N for x in lengths]
    inputs = {"q": q.name, "k_cache": kc, "k_new": kn, "v_cache": vc, "v_new": vn}
    covered = set(cov)
    drop_shared(covered, out)
    return AttnMatch(AttnShape(HD, Hq // Hkv, float(scale)), requests, seq_len, offset, inputs,
                     covered, out, derive, form)


@dataclass
class Pieces:
    """An attention `softmax(scale * q k^T [+ mask]) v` read off the graph, before any
    check of the decode form: `k`/`v` as the attention reads them (repeated or not),
    `mask` a node or None, `causal` SDPA's is_causal, `cov` the nodes it spans."""

    anchor: Any
    q: Any
    k: Any
    v: Any
    scale: float
    mask: Any
    causal: bool
    gqa: bool
    cov: list
    out: Any
    form: str
    fill: float = -math.inf  # a boolean mask's value where it is False (`torch.where`)
    inverted: bool = False  # `masked_fill(mask, fill)`: the fill where the mask is True


def sdpa_pieces(sdpa) -> Pieces:
    """The pieces of `F.scaled_dot_product_attention` (dropout is not supported)."""
    args = list(sdpa.args) + [None] * 7
    kw = dict(sdpa.kwargs)
    q, k, v = args[:3]
    mask = kw.get("attn_mask", args[3])
    _need(not kw.get("dropout_p", args[4] or 0.0), sdpa, "dropout is not supported")
    scale = kw.get("scale", args[6])
    if scale is None:
        sq = shape_of(q)
        _need(sq is not None and len(sq) == 4, sdpa, "expected a static 4-D q [B, Hq, S, HD]")
        assert sq is not None
        scale = 1.0 / math.sqrt(sq[3])
    return Pieces(sdpa, q, k, v, float(scale), mask, bool(kw.get("is_causal", args[5] or False)),
                  bool(kw.get("enable_gqa", False)), [sdpa], sdpa, "sdpa")


def eager_pieces(softmax) -> Pieces | None:
    """The pieces of the eager form around `softmax`; None if it is not attention."""
    if len(softmax.args) < 2 or softmax.args[1] not in (-1, 3):
        return None
    cov: list = [softmax]
    s = _skip_casts(softmax.args[0], cov)
    scale = 1.0
    mask = None
    fill = -math.inf
    inverted = False
    if name_of(s) in MASKED_FILL and len(s.args) == 3 and "bool" in dtype_of(s.args[1]):
        # `w.masked_fill(causal_mask, float("-inf"))`: the fill where the mask is True
        f = _scalar_of(s.args[2])
        if f is None or not (f == -math.inf or f <= -1e30):
            return None
        mask, fill, inverted = s.args[1], f, True
        cov.append(s)
        cov.extend(_scalar_nodes(s.args[2]))
        s = _skip_casts(s.args[0], cov)
    elif is_op(s, "aten.where.self") and len(s.args) == 3 and "bool" in dtype_of(s.args[0]):
        # GPT-2: `torch.where(causal_mask, w, mask_value)`, the value the dtype's min
        f = _scalar_of(s.args[2])
        if f is None or not (f == -math.inf or f <= -1e30):
            return None  # only a fill that no score survives is an additive mask
        mask, fill = s.args[0], f
        cov.append(s)
        cov.extend(_scalar_nodes(s.args[2]))
        s = _skip_casts(s.args[1], cov)
    elif is_op(s, "aten.add.Tensor") and len(s.args) == 2:
        a, b = s.args
        if is_op(a, "aten.matmul.default") or name_of(a) in ("aten.mul.Tensor",
                                                            "aten.div.Tensor"):
            mask, s = b, a
            cov.append(softmax.args[0])
    c = _scalar_of(s.args[1]) if name_of(s) in ("aten.mul.Tensor", "aten.div.Tensor") \
        and len(s.args) == 2 else None
    if c is not None:  # `* scaling`, `/ math.sqrt(d)`, `/ torch.full([], sqrt(d))` (GPT-2)
        if c == 0 or not math.isfinite(c):
            return None
        scale = c if is_op(s, "aten.mul.Tensor") else 1.0 / c
        cov.append(s)
        if hasattr(s.args[1], "op") and len(s.args[1].users) == 1:
            cov.append(s.args[1])
        s = s.args[0]
    if not is_op(s, "aten.matmul.default") or len(shape_of(s) or ()) != 4:
        return None
    q, kt = s.args
    if not (is_op(kt, "aten.transpose.int") and sorted(kt.args[1:3]) in ([2, 3], [-2, -1])):
        return None
    cov += [s, kt]
    c = _scalar_of(q.args[1]) if name_of(q) in ("aten.mul.Tensor", "aten.div.Tensor") \
        and len(q.args) == 2 and len(q.users) == 1 else None
    if c is not None and c != 0 and math.isfinite(c):
        # DistilBERT: `q = q / math.sqrt(dim_per_head)` before the product
        scale *= c if is_op(q, "aten.mul.Tensor") else 1.0 / c
        cov.append(q)
        cov.extend(_scalar_nodes(q.args[1]))
        q = q.args[0]

    def real(n) -> list:
        cov.extend(u for u in n.users if name_of(u) in BOOKKEEPING)
        return [u for u in n.users if name_of(u) not in BOOKKEEPING]

    users = real(softmax)
    p = users[0] if len(users) == 1 else None
    while p is not None and (name_of(p) in CASTS or _eval_dropout(p)) and len(real(p)) == 1:
        cov.append(p)
        p = real(p)[0]
    _need(p is not None and is_op(p, "aten.matmul.default") and p.args[0] in cov, softmax,
          "the softmax does not feed matmul(p, v) alone")
    assert p is not None
    cov.append(p)
    cov.extend(u for n in list(cov) for u in n.users  # shape checks of the nodes it spans
               if name_of(u) in BOOKKEEPING and u not in cov)
    return Pieces(softmax, q, kt.args[0], p.args[1], scale, mask, False, False, cov, p, "eager",
                  fill, inverted)


# what `torch.tensor(c)` in a forward exports as: a lifted constant placeholder, copied
LIFTED = ("aten.lift_fresh_copy.default", "aten.detach_.default", "aten.detach.default",
          "aten.alias.default")


def _scalar_nodes(x) -> list:
    """The nodes computing the scalar `x` (`torch.full([], c)`, `torch.tensor(c)`'s copies)
    that only it reads: covered with the op reading it."""
    chain = []
    while hasattr(x, "op") and x.op == "call_function" and len(x.users) == 1:
        chain.append(x)
        if name_of(x) not in LIFTED:
            break
        x = x.args[0]
    return chain


def _lifted_constant(x) -> float | None:
    """`torch.tensor(c)` in a forward (DistilBERT's `torch.tensor(torch.finfo(dtype).min)`):
    `lift_fresh_copy` / `detach_` of a 0-D constant placeholder, whose value export keeps in
    the placeholder's fake tensor (`.constant`); None otherwise."""
    while getattr(x, "op", None) == "call_function" and name_of(x) in LIFTED:
        x = x.args[0]
    if getattr(x, "op", None) != "placeholder":
        return None
    const = getattr(getattr(x, "meta", {}).get("val"), "constant", None)
    if const is None or tuple(const.shape) != () or not const.dtype.is_floating_point:
        return None
    return float(const.item())


def _scalar_of(x) -> float | None:
    """A Python number, a 0-D `torch.full([], c)` node (GPT-2's scale and mask value) or a
    0-D `torch.tensor(c)` constant (DistilBERT's mask value), as a float; None otherwise."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if getattr(x, "op", None) == "call_function" and name_of(x) in LIFTED:
        return _lifted_constant(x)
    if not is_op(x, "aten.full.default"):
        return None
    args: Any = getattr(x, "args", ())
    if len(args) >= 2 and list(args[0]) == [] and isinstance(args[1], (int, float)) \
            and not isinstance(args[1], bool):
        return float(args[1])
    return None


def _eval_dropout(n) -> bool:
    """`nn.Dropout` in eval mode (`aten.dropout(x, p, train=False)`): the identity."""
    return is_op(n, "aten.dropout.default") and len(n.args) == 3 and n.args[2] is False


def match_sdpa(sdpa, kv_lengths, j: int = 0) -> AttnMatch:
    """`F.scaled_dot_product_attention` as a decode step (see the module doc)."""
    p = sdpa_pieces(sdpa)
    if p.mask is not None:
        _need(hasattr(p.mask, "op") and _all_visible(p.mask), sdpa,
              "an attn_mask is not supported (the cache holds exactly the valid rows; only an "
              "all-visible constant mask is dropped)")
        if len(p.mask.users) == 1:
            p.cov.append(p.mask)
    _need(not p.causal, sdpa, "is_causal is not a decode step")
    return _build(sdpa, p.q, p.k, p.v, p.scale, p.gqa, kv_lengths, j, p.cov, sdpa, "sdpa")


def match_eager(softmax, kv_lengths, j: int = 0) -> AttnMatch | None:
    """The eager form around `softmax` as a decode step; None if it is not attention."""
    p = eager_pieces(softmax)
    if p is None:
        return None
    if p.mask is not None:
        _need(hasattr(p.mask, "op") and _all_visible(p.mask), softmax.args[0],
              "an attention mask is not supported (the cache holds exactly the valid rows; "
              "only an all-visible constant mask is dropped)")
    return _build(softmax, p.q, p.k, p.v, p.scale, False, kv_lengths, j, p.cov, p.out, "eager")
