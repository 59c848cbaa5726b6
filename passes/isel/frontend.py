"""Tensor IR -> e-graph terms (the importer of `isel`).

Recognised ops on static-shape f32 tensors become terms; every other value (function arguments, results
of ops isel does not model) is an opaque `Ten.leaf(i)`.  Recognised:
`linalg.matmul`, `linalg.batch_matmul`, `linalg.conv_2d_nchw_fchw` and (one image)
`linalg.conv_2d_ngchw_gfchw` into a zero init,
`linalg.transpose`, `tosa.reshape` (shape from its result type), `tosa.add`, `linalg.add`,
`tosa.max_pool2d`, and the elementwise `linalg.generic`s torch-mlir/IREE emit
for ONNX `Add` (body one `arith.addf` of the two inputs, projection maps: an
input indexed by fewer loops is broadcast, i.e. reshaped to size 1 there) and
for torch's elementwise ops on 2-D tensors (`+ · -`, negation, exp, tanh,
`1/x`, `x + 1`: the sigmoid as `1/(1+exp(-x))`), and 2-D column slices
`tensor.extract_slice` (the gates of a fused LSTM GEMM; `frontend_forms.py`).

Example: `Importer(func_op).run()` returns the values to re-select (those used
outside the recognised ops) with their terms.
"""

from __future__ import annotations

import functools
import math

from xdsl.dialects.builtin import IntegerAttr, TensorType, f32
from xdsl.ir import Operation, SSAValue

from steplus.passes.isel import fused as F
from steplus.passes.isel import terms as T
from steplus.dialects.semantics.constants import CONSTANT_OPS, splat_value
from steplus.utils.attrs import int_prop

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


def _splat(v: SSAValue) -> float | None:
    """The value of a scalar or splat constant defined outside a generic body, else None."""
    owner = v.owner
    return splat_value(owner) if isinstance(owner, Operation) and owner.name in CONSTANT_OPS else None


def sh(dims) -> T.Sh:
    """The shape term of `dims` (`Sh.s2(35, 64)`); the same term object for the same dims."""
    return _shape_term(tuple(int(d) for d in dims))


@functools.lru_cache(maxsize=4096)
def _shape_term(dims: tuple[int, ...]) -> T.Sh:
    # an egglog term is an immutable value: one per distinct shape serves every term that holds it
    # (building it through egglog's Python bindings was ~40 % of LSTM-WLM's term import: 1,978
    # shapes, 9 distinct)
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
            perm = int_prop(op, "permutation")
            return T.transpose(self.term(ops[0]), sh(perm))
        if name == "tosa.reshape" and len(out) <= 4:
            return T.reshape(self.term(ops[0]), sh(out))
        if name in ("tosa.add", "linalg.add") and 1 <= len(out) <= 4:
            return T.add(self.term(ops[0]), self.term(ops[1]), sh(out))
        if name == "linalg.generic":
            return self._generic(op, out)
        if name == "tensor.extract_slice":
            return self._slice(op, out)
        if name in ("tosa.mul", "tosa.sub") and 1 <= len(out) <= 4 and _is_zero(ops[2] if len(ops) > 2 else None):
            f = F.mul if name == "tosa.mul" else F.sub
            return f(self.term(ops[0]), self.term(ops[1]), sh(out))
        if name in _UNARY:
            return _UNARY[name](self.term(ops[0]))
        if name == "tosa.reduce_sum" and len(out) == 2 and isinstance(axis := op.properties["axis"], IntegerAttr) and axis.value.data == 1:
            m, n = _shape(ops[0])
            return F.rsum(self.term(ops[0]), m, n)
        if name == "tosa.max_pool2d":
            (n, h, w, c) = _shape(ops[0])
            kh, kw = int_prop(op, "kernel")
            s_h, s_w = int_prop(op, "stride")
            pt, pb, pl, pr = int_prop(op, "pad")
            return T.maxpool(self.term(ops[0]), n, h, w, c, kh, kw, s_h, s_w, pt, pb, pl, pr)
        if name == "linalg.conv_2d_ngchw_gfchw" and _is_zero(ops[2]):
            strides, dil = list(int_prop(op, "strides")), list(int_prop(op, "dilations"))
            n, g, c, h, w = _shape(ops[0])
            _, f, _, kh, kw = _shape(ops[1])
            if dil != [1, 1] or n != 1:
                return None
            return T.gconv(self.term(ops[0]), self.term(ops[1]), g, c, h, w, f, kh, kw, *strides)
        if name == "linalg.conv_2d_nchw_fchw" and _is_zero(ops[2]):
            strides, dil = list(int_prop(op, "strides")), list(int_prop(op, "dilations"))
            if dil != [1, 1]:
                return None
            n, c, h, w = _shape(ops[0])
            k, _, kh, kw = _shape(ops[1])
            return T.conv2d(self.term(ops[0]), self.term(ops[1]), n, c, h, w, k, kh, kw, *strides)
        return None

    def _slice(self, op, out) -> T.Ten | None:
        """A 2-D column slice `a[:, c0:c0+cc]` (the gate chunks of a fused LSTM GEMM)."""
        from steplus.passes.isel.frontend_forms import cols

        src = _shape(op.operands[0])
        if len(op.operands) != 1 or len(src) != 2 or len(out) != 2:
            return None
        offs = [int(v) for v in op.properties["static_offsets"].get_values()]
        steps = [int(v) for v in op.properties["static_strides"].get_values()]
        if steps != [1, 1] or offs[0] != 0 or out[0] != src[0] or offs[1] < 0:
            return None
        return cols(self.term(op.operands[0]), offs[1], out[1], src[0], src[1])

    def _generic(self, op, out) -> T.Ten | None:
        """An all-parallel elementwise generic: `in0 + in1` (with broadcasting, the add the
        biases of torch-mlir/IREE linears use), or a body of `addf`/`mulf`/`subf` of its
        inputs, `negf`, `math.exp`, `math.tanh`, `1/x` and `x + 1` on 2-D tensors (the
        LSTM cell's elementwise ops, the sigmoid as `1/(1+exp(-x))`)."""
        from steplus.utils.layouts import map_dims

        if len(op.outputs) == 1 and len(op.inputs) in (1, 2) and len(out) == 2:
            t = self._body_terms(op, out)
            if t is not None:
                return t
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

    def _body_terms(self, op, out) -> T.Ten | None:
        """Terms for a 2-D elementwise generic whose inputs have the result's shape."""
        from steplus.passes.isel import frontend_forms as N
        from steplus.utils.layouts import map_dims

        if any(str(it.data.value) != "parallel" for it in op.iterator_types.data):
            return None
        try:
            dims = map_dims(op)
        except Exception:
            return None
        if any(d != [0, 1] for d in dims) or any(_shape(v) != out for v in op.inputs):
            return None
        block = op.body.block
        env = {arg: self.term(v) for arg, v in zip(block.args, op.inputs)}
        s2 = sh(out)
        for bop in block.ops:
            if bop.name == "linalg.yield":
                return env.get(bop.operands[0]) if len(bop.operands) == 1 else None
            if len(bop.results) != 1:
                return None
            ins = [env.get(v) for v in bop.operands]
            consts = [_splat(v) for v in bop.operands]
            name = bop.name
            known = [t for t in ins if t is not None]
            if name in ("arith.addf", "arith.mulf", "arith.subf") and len(known) == len(ins) == 2:
                f = {"arith.addf": T.add, "arith.mulf": F.mul, "arith.subf": F.sub}[name]
                r = f(known[0], known[1], s2)
            elif name == "arith.addf" and 1.0 in consts and known:
                r = N.addone(known[0])
            elif name == "arith.divf" and consts[0] == 1.0 and ins[1] is not None:
                r = F.recip(ins[1])
            elif name in ("arith.negf", "math.exp", "math.tanh") and ins[0] is not None:
                r = {"arith.negf": N.neg, "math.exp": F.exp, "math.tanh": F.tanh}[name](ins[0])
            else:
                return None
            env[bop.results[0]] = r
        return None

    def constant_facts(self) -> list:
        """Facts about splat f32 constants (opaque leaves): `inv_of(c) = n` for 1/n, `is_eps(c)`."""
        from egglog import i64, set_

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
                facts.append(set_(F.inv_of(leaf)).to(i64(inv)))
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
