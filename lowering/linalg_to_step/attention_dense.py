"""Attention that is not a decode step, lowered densely: a static `convert-linalg-to-step` graph.

An attention the §8.4 recognizer does not take (`attention_match`: a prefill with
several query rows, a mask that masks something, `is_causal`) is still
`softmax(scale * q k^T + mask) v`. `dense_attention_part(pieces, ...)` builds it
as one linalg-on-tensors function over the `B * H` (batch, head) pairs and lowers
it with `convert-linalg-to-step`:

- `linalg.batch_matmul_transpose_b(q, k)` (the keys an off-chip argument read
  transposed), a `mul_scalar[scale]` map, the mask added (an argument: a boolean
  mask or `is_causal` become additive 0 / -inf when the part is bound);
- the row softmax: a row max, `exp(x - max)`, a row sum, the division (one tile
  spans the `Sk` keys of a row: the scores are not re-read);
- `linalg.batch_matmul(p, v)`.

GQA (`enable_gqa`, or keys/values under a `repeat_kv`) reads each KV head's keys
for its `H / Hkv` query heads: the values are bound repeated. Tiles: `tile_m`
rows of queries (a divisor of `Sq`), the keys whole.

Example: `nn.TransformerEncoderLayer`'s self-attention (`[2, 4, 6, 8]` q/k/v)
gives `@layer_attention_dense0` over 8 (batch, head) pairs of 6 x 6 scores.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from steplus.dialects.linalg_ext import BatchMatmulOp, BatchMatmulTransposeBOp
from steplus.lowering.linalg_to_step import lower_module
from steplus.lowering.linalg_to_step.attention_match import Pieces, _unrepeat
from steplus.lowering.linalg_to_step.linalg_build import LinalgFunc, tensor_type
from steplus.lowering.linalg_to_step.options import parse_tiles
from steplus.lowering.linalg_to_step.fx_graph import (
    NotRecognized, drop_shared, dtype_of, name_of, shape_of,
)

def _need(ok: bool, node, msg: str) -> None:
    if not ok:
        raise NotRecognized(node, f"attention not lowered densely: {msg}")


def attention_module(fname: str, bh: int, sq: int, sk: int, d: int, scale: float,
                     masked: bool) -> ModuleOp:
    """The linalg function of the module doc (f32; `masked`: a 4th argument, added)."""
    q_t, kv_t, s_t = (bh, sq, d), (bh, sk, d), (bh, sq, sk)
    args = [tensor_type(q_t), tensor_type(kv_t), tensor_type(kv_t)]
    fn = LinalgFunc(fname, args + ([tensor_type(s_t)] if masked else []))
    q, k, v = fn.args[:3]
    zero, ninf = fn.const(0.0), fn.const(-math.inf)
    c = fn.const(float(np.float32(scale)))
    e_s = fn.empty(s_t)
    s = fn.named(BatchMatmulTransposeBOp, [q, k], fn.fill(zero, e_s))
    full, col = "d0, d1, d2", "d0, d1, 0"
    x = fn.generic([s], e_s, [full, full], "ppp", lambda b, a: b.mul(a[0], c))
    if masked:
        x = fn.generic([x, fn.args[3]], e_s, [full] * 3, "ppp", lambda b, a: b.add(a[0], a[1]))
    e_c = fn.empty((bh, sq, 1))
    mx = fn.generic([x], fn.fill(ninf, e_c), [full, col], "ppr",
                    lambda b, a: b.max(a[0], a[1]))
    sub = fn.generic([x, mx], e_s, [full, col, full], "ppp", lambda b, a: b.sub(a[0], a[1]))
    ex = fn.generic([sub], e_s, [full, full], "ppp", lambda b, a: b.exp(a[0]))
    total = fn.generic([ex], fn.fill(zero, e_c), [full, col], "ppr",
                       lambda b, a: b.add(a[0], a[1]))
    p = fn.generic([ex, total], e_s, [full, col, full], "ppp", lambda b, a: b.div(a[0], a[1]))
    o = fn.named(BatchMatmulOp, [p, v], fn.fill(zero, q_t))
    return fn.module([o])


def _heads(name: str, rep: int, shape: tuple[int, ...]):
    """values -> the keys/values `[B * H, S, D]`, each KV head repeated `rep` times."""
    b, h, s, d = shape

    def get(values: dict) -> np.ndarray:
        x = np.asarray(values[name], np.float64).reshape(b, h, s, d)
        return np.repeat(x, rep, axis=1).reshape(b * h * rep, s, d)
    return get


# views of a constant mask folded into its binding: (x, args) -> the view's value
_MASK_VIEWS = {
    "aten.slice.Tensor": lambda x, a: x[(slice(None),) * (a[0] % x.ndim) + (slice(
        a[1] if len(a) > 1 else None, a[2] if len(a) > 2 else None,
        a[3] if len(a) > 3 else 1),)],
    "aten.unsqueeze.default": lambda x, a: np.expand_dims(x, a[0] % (x.ndim + 1)),
    "aten.alias.default": lambda x, a: x,
    "aten.view.default": lambda x, a: x.reshape(a[0]),
    "aten.reshape.default": lambda x, a: x.reshape(a[0]),
    "aten.expand.default": lambda x, a: x,  # the mask is broadcast to the scores at the end
    "aten.expand_as.default": lambda x, a: x,
    # a compare with a number (nanoGPT's `self.bias[:, :, :T, :T] == 0`, DistilBERT's
    # `mask == 0`): the boolean mask it gives, from the tensor it compares
    "aten.eq.Scalar": lambda x, a: x == a[0], "aten.ne.Scalar": lambda x, a: x != a[0],
    "aten.lt.Scalar": lambda x, a: x < a[0], "aten.le.Scalar": lambda x, a: x <= a[0],
    "aten.gt.Scalar": lambda x, a: x > a[0], "aten.ge.Scalar": lambda x, a: x >= a[0],
    # HF Llama's prefill mask: `torch.full((T, T), finfo.min).triu(1)`
    "aten.triu.default": lambda x, a: np.triu(x, a[0] if a else 0),
    "aten.tril.default": lambda x, a: np.tril(x, a[0] if a else 0),
    # transformers 4.34's Mistral sliding window: `torch.log(triu(tril(full(1)), -w)).to(dtype)`
    # (log 1 = 0 where a key is seen, log 0 = -inf elsewhere)
    "aten.log.default": lambda x, a: _log(x),
    "aten.to.dtype": lambda x, a: np.asarray(x, np.float64),
    "aten._to_copy.default": lambda x, a: np.asarray(x, np.float64),
    # Swin's relative position bias: `table[index.view(-1)].view(N, N, -1).permute(2, 0, 1)
    # .contiguous().unsqueeze(0)` (the index a registered buffer, read when bound)
    "aten.index.Tensor": lambda x, a: x[np.asarray(a[0], np.int64)],
    "aten.permute.default": lambda x, a: np.transpose(x, a[0]),
    "aten.contiguous.default": lambda x, a: x,
    "aten.clone.default": lambda x, a: x,
}
_INDEX_VIEWS = ("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default")


class _Bound:
    """An index tensor a mask op reads, `table[index.view(-1)]`: a placeholder's value (a
    buffer), reshaped, when the part is bound."""

    def __init__(self, name: str, shape):
        self.name, self.shape = name, shape

    def value(self, values: dict) -> np.ndarray:
        v = np.asarray(values[self.name])
        return v.reshape(self.shape) if self.shape is not None else v


def _index_of(node, cov: list):
    """`_Bound` of `index` or `index.view(shape)` of a placeholder (an integer buffer read
    only there), covering the view; None otherwise."""
    shape = None
    if getattr(node, "op", None) == "call_function" and name_of(node) in _INDEX_VIEWS \
            and _readers(node) == 1 and len(node.args) == 2 \
            and isinstance(node.args[1], (list, tuple)) \
            and all(isinstance(i, int) for i in node.args[1]):
        cov.append(node)
        shape, node = list(node.args[1]), node.args[0]
    if getattr(node, "op", None) != "placeholder" or "int" not in dtype_of(node):
        return None
    return _Bound(node.name, shape)


def _bind_args(args: list, values: dict) -> list:
    return [a.value(values) if isinstance(a, _Bound) else a for a in args]
_CASTS = ("aten.to.dtype", "aten._to_copy.default")


def _log(x) -> np.ndarray:
    with np.errstate(divide="ignore"):  # log 0 = -inf: a masked key
        return np.log(np.asarray(x, np.float64))
MAX_FILL_ELEMS = 1 << 24  # a constant mask built in the program, bound larger than this: refused
_FILL_VALUE = {"aten.full.default": None, "aten.ones.default": 1.0, "aten.zeros.default": 0.0}


def _fill_of(node):
    """`(shape, value)` of `torch.full(shape, c)` / `ones` / `zeros` with a static shape of at
    most MAX_FILL_ELEMS elements (the source of a mask built in the forward); None otherwise."""
    name = name_of(node) if getattr(node, "op", None) == "call_function" else None
    if name not in _FILL_VALUE or not node.args or not isinstance(node.args[0], (list, tuple)) \
            or not all(isinstance(i, int) and i >= 0 for i in node.args[0]):
        return None
    value = _FILL_VALUE[name] if name != "aten.full.default" else (
        node.args[1] if len(node.args) > 1 else None)
    if not isinstance(value, (int, float)) or isinstance(value, bool) \
            or math.prod(node.args[0]) > MAX_FILL_ELEMS:
        return None
    return tuple(node.args[0]), float(value)


def _readers(node) -> int:
    """The users of `node` that read its values (export's `_assert_tensor_metadata` checks
    only its dtype)."""
    return sum(name_of(u) != "aten._assert_tensor_metadata.default" for u in node.users)


def _static_args(node) -> bool:
    """A mask view's arguments are numbers or lists of ints (`expand_as`'s other tensor
    gives only a shape)."""
    if name_of(node) == "aten.index.Tensor":  # one index tensor (checked by _index_of)
        return len(node.args) == 2 and isinstance(node.args[1], (list, tuple)) \
            and len(node.args[1]) == 1
    if name_of(node) in _CASTS:  # a cast to a float dtype (its only argument)
        return set(node.kwargs) <= {"dtype"} and "float" in dtype_of(node) and len(node.args) <= 2
    args = node.args[1:] if name_of(node) != "aten.expand_as.default" else ()
    return all(a is None or (isinstance(a, (int, float)) and not isinstance(a, bool))
               or (isinstance(a, (list, tuple)) and all(isinstance(i, int) for i in a))
               for a in args)


def _mask_views(mask, cov: list) -> tuple:
    """(the tensor a mask is a view of, the views) when `mask` is slices, unsqueezes,
    views, expands and compares with a number of a placeholder read by nothing else
    (GPT-2's `self.bias[:, :, k - q:k, :k]` of its causal buffer, nanoGPT's
    `self.bias[:, :, :T, :T] == 0`, DistilBERT's `(mask == 0).view(...).expand_as(s)`), or
    `triu`/`tril` and views of a `torch.full` the forward builds (HF Llama's prefill
    `torch.full((T, T), finfo.min).triu(1)`): the ops are covered and applied to the
    placeholder's (the fill's) value when the part is bound, as the boolean mask itself is
    read as the additive one there. Otherwise `(mask, [])`."""
    chain, node, bound, idx_cov = [], mask, {}, []
    while getattr(node, "op", None) == "call_function" and name_of(node) in _MASK_VIEWS \
            and _static_args(node) and _readers(node) == 1:
        if name_of(node) == "aten.index.Tensor":
            b = _index_of(node.args[1][0], idx_cov)
            if b is None:
                break
            bound[node] = [b]
        chain.append(node)
        node = node.args[0]
    fill = _fill_of(node) if chain and _readers(node) == 1 else None
    if not chain or (getattr(node, "op", None) != "placeholder" and fill is None):
        return mask, []
    cov.extend(idx_cov)
    cov.extend(chain + ([node] if fill is not None else []))
    cov.extend(u for n in chain + [node] for u in n.users if name_of(u) not in _MASK_VIEWS
               and name_of(u) == "aten._assert_tensor_metadata.default")
    return node, [(_MASK_VIEWS[name_of(v)], bound.get(v, list(v.args[1:])))
                  for v in reversed(chain)]


def _mask(p: Pieces, b: int, h: int, sq: int, sk: int, cov: list):
    """values -> the additive mask `[B * H, Sq, Sk]` (a boolean mask: 0 where True, its
    `fill` — -inf, or `torch.where`'s value — where False, the other way round for
    `masked_fill`; is_causal: torch's top-left aligned lower triangle)."""
    src, views = _mask_views(p.mask, cov) if p.mask is not None else (None, [])
    mask = src.name if src is not None else None
    fill_src = _fill_of(src) if views else None  # a mask the forward builds from a fill
    boolean = p.mask is not None and "bool" in dtype_of(p.mask)
    fill, inverted = p.fill, p.inverted

    def get(values: dict) -> np.ndarray:
        add = np.zeros((b, h, sq, sk))
        if mask is not None:
            m = np.full(*fill_src) if fill_src is not None else np.asarray(values[mask])
            for view, args in views:
                m = view(m, _bind_args(args, values))
            if boolean:
                m = np.where(m.astype(bool) != inverted, 0.0, fill)
            else:
                m = m.astype(np.float64)
            add = add + np.broadcast_to(m, (b, h, sq, sk))
        if p.causal:
            add = add + np.where(np.tril(np.ones((sq, sk), bool)), 0.0, -np.inf)
        return add.reshape(b * h, sq, sk)
    return get


def dense_attention_part(p: Pieces, tile: str, schedule: str, fname: str) -> dict:
    """The fields of the static attention `LoweredPart` of `p` (see the module doc;
    `aten.py` builds the part); `NotRecognized` (at the anchor) when its shapes or the
    tiling do not fit."""
    cov = list(p.cov)
    k, rk = _unrepeat(p.k, cov)
    v, rv = _unrepeat(p.v, cov)
    sq_, sk_, sv_ = shape_of(p.q), shape_of(k), shape_of(v)
    _need(all(s is not None and len(s) == 4 for s in (sq_, sk_, sv_)), p.anchor,
          "expected static 4-D q [B, H, Sq, D] and keys/values [B, Hkv, Sk, D]")
    assert sq_ is not None and sk_ is not None and sv_ is not None
    b, h, sq, d = sq_
    _need(sk_ == sv_ and sk_[0] == b and sk_[3] == d, p.anchor,
          f"keys {sk_} / values {sv_} do not agree with q {sq_}")
    _need(rk == rv and sk_[1] > 0 and h % sk_[1] == 0 and (h == sk_[1] * rk or p.gqa), p.anchor,
          f"{h} query heads over {sk_[1]} KV heads (repeated {rk}x)")
    _need(p.mask is None or (hasattr(p.mask, "op") and shape_of(p.mask) is not None), p.anchor,
          "the mask is not a static tensor")
    sk = sk_[2]
    _need(min(b, h, sq, sk, d) > 0, p.anchor, f"an empty attention (q {sq_}, keys {sk_})")
    rep = h // sk_[1]
    tile_m = parse_tiles(tile)[None][0]
    _need(math.isfinite(p.scale), p.anchor, f"scale={p.scale} is not finite")
    tm = max(m for m in range(1, min(tile_m, sq) + 1) if sq % m == 0)
    masked = p.mask is not None or p.causal
    module = attention_module(fname, b * h, sq, sk, d, p.scale, masked)
    tile = f"{tm}x{sk}x{d};1={tm}x{d}x{sk}"
    (low,) = lower_module(module, tile=tile, schedule=schedule)
    derive = {f"{fname}:q": lambda values, n=p.q.name: np.asarray(values[n], np.float64)
              .reshape(b * h, sq, d),
              f"{fname}:k": _heads(k.name, rep, sk_), f"{fname}:v": _heads(v.name, rep, sv_)}
    inputs = {"arg0": f"{fname}:q", "arg1": f"{fname}:k", "arg2": f"{fname}:v"}
    if masked:
        derive[f"{fname}:mask"] = _mask(p, b, h, sq, sk, cov)
        inputs["arg3"] = f"{fname}:mask"  # read from the mask's value: not covered
    covered = set(cov)
    drop_shared(covered, p.out)
    return {"kind": "dense", "module": module, "shape": None, "inputs": inputs, "batch": b * h,
            "outputs": [p.out.name], "lowered": low, "role": "attention",
            "out_shapes": [(b, h, sq, d)], "covered": covered, "derive": derive}
