"""Tensor IR -> e-graph terms (the importer of `isel`).

Recognised ops on static-shape f32 tensors become terms; every other value (function arguments, results
of ops isel does not model) is an opaque `Ten.leaf(i)`.  Recognised:
`linalg.matmul`, `linalg.batch_matmul` and `linalg.conv_2d_nchw_fchw` into a zero init,
`linalg.transpose`, `tosa.reshape` (shape from its result type), `tosa.add`, `linalg.add`,
`tosa.max_pool2d`, and the elementwise `linalg.generic`s torch-mlir/IREE emit
for ONNX `Add` (body one `arith.addf` of the two inputs, projection maps: an
input indexed by fewer loops is broadcast, i.e. reshaped to size 1 there).

Example: `Importer(func_op).run()` returns the values to re-select (those used
outside the recognised ops) with their terms.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation, SSAValue

from steplus.passes.isel import fused as F
from steplus.passes.isel import terms as T
from steplus.passes.isel.constants import CONSTANT_OPS, splat_value

_UNARY = {"tosa.sigmoid": F.sigmoid, "tosa.tanh": F.tanh, "tosa.exp": F.exp, "tosa.reciprocal": F.recip,
          "tosa.rsqrt": F.rsqrt}


# the largest n recorded as `inv_of(c) = n` for a constant c = 1/n (a row length; fits an i64)
MAX_INVERSE = 1 << 40


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


# the largest tensor isel models (larger ones stay opaque): a product of two sizes of such
# tensors in a rewrite guard cannot overflow the e-graph's i64
MAX_TENSOR_ELEMENTS = 1 << 31


def _static_f32(v: SSAValue) -> bool:
    """isel models static-shape f32 tensors of fewer than MAX_TENSOR_ELEMENTS elements only."""
    t = v.type
    if not (isinstance(t, TensorType) and t.element_type == f32 and all(d >= 0 for d in t.get_shape())):
        return False
    return math.prod(t.get_shape()) < MAX_TENSOR_ELEMENTS


def sh(dims) -> T.Sh:
    dims = [int(d) for d in dims]
    return getattr(T.Sh, f"s{len(dims)}")(*dims)


def _is_zero(v: SSAValue | None) -> bool:
    if v is None:
        return True
    op = v.owner
    if isinstance(op, Operation) and op.name in CONSTANT_OPS:
        return splat_value(op) == 0.0
    if isinstance(op, Operation) and op.name == "linalg.fill":
        src = op.operands[0].owner
        return isinstance(src, Operation) and splat_value(src) == 0.0
    return False


class Importer:
    """Builds terms for the ops of one function body (a single block)."""

    def __init__(self, block):
        self.block = block
        self.terms: dict[SSAValue, T.Ten] = {}
        self.leaves: list[SSAValue] = []
        self.modelled: list[Operation] = []

    def term(self, v: SSAValue) -> T.Ten:
        if v not in self.terms:
            self.terms[v] = T.Ten.leaf(len(self.leaves))
            self.leaves.append(v)
        return self.terms[v]

    def _import(self, op: Operation) -> T.Ten | None:
        name, ops = op.name, op.operands
        tensor_ops = ops[:1] if name == "tosa.reshape" else ops[:2] if name == "tosa.mul" else ops
        if len(op.results) != 1 or not all(_static_f32(v) for v in (*tensor_ops, op.results[0])):
            return None
        out = _shape(op.results[0])
        if name == "linalg.matmul" and len(ops) == 3 and _is_zero(ops[2]):
            (m, k), (_, n) = _shape(ops[0]), _shape(ops[1])
            return T.matmul(self.term(ops[0]), self.term(ops[1]), m, k, n)
        if name == "linalg.batch_matmul" and len(ops) == 3 and _is_zero(ops[2]):
            (nb, m, k), (_, _, n) = _shape(ops[0]), _shape(ops[1])
            return T.bmm(self.term(ops[0]), self.term(ops[1]), nb, m, k, n)
        if name == "linalg.transpose" and len(out) <= 4:
            perm = op.properties["permutation"].get_values()
            return T.transpose(self.term(ops[0]), sh(perm))
        if name == "tosa.reshape" and len(out) <= 4:
            return T.reshape(self.term(ops[0]), sh(out))
        if name in ("tosa.add", "linalg.add") and 1 <= len(out) <= 4:
            return T.add(self.term(ops[0]), self.term(ops[1]), sh(out))
        if name == "linalg.generic":
            return self._generic(op, out)
        if name in ("tosa.mul", "tosa.sub") and 1 <= len(out) <= 4 and _is_zero(ops[2] if len(ops) > 2 else None):
            f = F.mul if name == "tosa.mul" else F.sub
            return f(self.term(ops[0]), self.term(ops[1]), sh(out))
        if name in _UNARY:
            return _UNARY[name](self.term(ops[0]))
        if name == "tosa.reduce_sum" and len(out) == 2 and op.properties["axis"].value.data == 1:
            m, n = _shape(ops[0])
            return F.rsum(self.term(ops[0]), m, n)
        if name == "tosa.max_pool2d":
            (n, h, w, c) = _shape(ops[0])
            kh, kw = op.properties["kernel"].get_values()
            s_h, s_w = op.properties["stride"].get_values()
            pt, pb, pl, pr = op.properties["pad"].get_values()
            return T.maxpool(self.term(ops[0]), n, h, w, c, kh, kw, s_h, s_w, pt, pb, pl, pr)
        if name == "linalg.conv_2d_nchw_fchw" and _is_zero(ops[2]):
            strides = [int(x) for x in op.properties["strides"].get_values()]
            dil = [int(x) for x in op.properties["dilations"].get_values()]
            if dil != [1, 1]:
                return None
            n, c, h, w = _shape(ops[0])
            k, _, kh, kw = _shape(ops[1])
            return T.conv2d(self.term(ops[0]), self.term(ops[1]), n, c, h, w, k, kh, kw, *strides)
        return None

    def _generic(self, op, out) -> T.Ten | None:
        """An all-parallel generic computing `in0 + in1` (with broadcasting)."""
        from steplus.runtime.ila.generic import map_dims

        if len(op.inputs) != 2 or len(op.outputs) != 1 or not 1 <= len(out) <= 4:
            return None
        if any(str(it.data.value) != "parallel" for it in op.iterator_types.data):
            return None
        try:
            dims = map_dims(op)
        except Exception:
            return None
        n = len(out)
        if dims[2] != list(range(n)) or any(d != sorted(d) for d in dims[:2]):
            return None
        body = list(op.body.block.ops)
        args = op.body.block.args
        if len(body) != 2 or body[0].name != "arith.addf" or body[1].operands[0] is not body[0].results[0]:
            return None
        if set(body[0].operands) != {args[0], args[1]} or body[0].operands[0] is body[0].operands[1]:
            return None
        terms = []
        for v, ds in zip(op.inputs, dims[:2]):
            t = self.term(v)
            if len(ds) != n:
                shape = [out[d] if d in ds else 1 for d in range(n)]
                t = T.reshape(t, sh(shape))
            terms.append(t)
        return T.add(terms[0], terms[1], sh(out))

    def constant_facts(self) -> list:
        """Facts about splat f32 constants (opaque leaves): `inv_of(c) = n` for 1/n, `is_eps(c)`."""
        from egglog import set_

        facts = []
        for op in self.block.ops:
            if op.name not in CONSTANT_OPS or len(op.results) != 1 or not _static_f32(op.results[0]):
                continue
            c = splat_value(op)
            if c is None or not c > 0 or c == float("inf"):
                continue
            leaf = self.term(op.results[0])
            inv = round(1 / c) if c >= 1 / MAX_INVERSE else 0  # e-graph integers are i64
            if inv >= 1 and abs(1 / inv - c) <= 1e-6 * c:
                facts.append(set_(F.inv_of(leaf)).to(inv))
            if c <= 1e-3:
                facts.append(F.is_eps(leaf))
        return facts

    def run(self) -> list[tuple[SSAValue, T.Ten, Operation]]:
        """Import every op; return (value, term, first outside user) for each root."""
        for op in self.block.ops:
            t = self._import(op)
            if t is not None:
                self.terms[op.results[0]] = t
                self.modelled.append(op)
        modelled = set(self.modelled)
        roots = []
        for op in self.modelled:
            v = op.results[0]
            users = [u.operation for u in v.uses if u.operation not in modelled]
            if users:
                first = min(users, key=lambda u: self.block.get_operation_index(u))
                roots.append((v, self.terms[v], first))
        return roots
