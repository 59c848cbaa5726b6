"""The importer of `isel` on torch-mlir's linalg forms of N-D row-wise ops.

torch-mlir writes layer norm and softmax as `linalg.generic`s over 3-D / 4-D tensors
(`[1, seq, d]`, `[1, heads, seq, seq]`): elementwise bodies with broadcast operands,
reductions over the last axis into a `[..., 1]` tensor, and the f64 variance of layer norm
(`arith.extf` / `arith.truncf`).  `RealImporter` extends the `frontend.Importer` with these:
every such op is modelled on the 2-D view of its tensors, rows x last axis (`[1, 16, 64]`
is `[16, 64]`); the term of the value itself is `reshape(view, shape)`, and a later op
takes the view back without a reshape.  Recognised (static shapes, f32 or f64):

- elementwise generics (all loops parallel) whose operands are full, a broadcast row (indexed by the
  last loop only: γ, β) or a broadcast column (a `[..., 1]` tensor: a row statistic); bodies of
  `addf subf mulf divf negf exp tanh rsqrt extf truncf` over the operands and scalar constants;
- last-axis reductions into a zero (`addf`: `rsum`) or -inf (`maximumf`, also torch's max-with-index
  whose index result is unused: `rmaxr`) init;
- torch's softmax guard `select(all(x == -inf) over the row, 0, p)`: `guard(x, p)`;
- `tensor.collapse_shape` / `tensor.expand_shape` (rank <= 4): `reshape`.

Scalar constants become leaves with facts (`int_of(c) = n` for an integral c, `inv_of`, `is_eps`),
which `frontend_forms.REAL_FORMS` uses to bring the forms to the patterns of `fused`.

Example::

    imp = RealImporter(block)   # instead of frontend.Importer
    roots = imp.run()           # imp.views: value -> its 2-D view term
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, Float64Type, TensorType
from xdsl.dialects.arith import CmpfOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue

from steplus.passes.isel import fused as F
from steplus.passes.isel import frontend_forms as N
from steplus.passes.isel import terms as T
from steplus.dialects.semantics.constants import CONSTANT_OPS, splat_value
from steplus.passes.isel.frontend import MAX_INVERSE, MAX_TENSOR_ELEMENTS, Importer, sh
from steplus.utils.attrs import int_values

_BIN = {"arith.addf": T.add, "arith.subf": F.sub, "arith.mulf": F.mul, "arith.divf": F.div}
_UN = {"arith.negf": N.neg, "math.exp": F.exp, "math.tanh": F.tanh, "math.rsqrt": F.rsqrt,
       "arith.extf": N.ext, "arith.truncf": N.trunc}


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _float_tensor(v: SSAValue) -> bool:
    t = v.type
    return (isinstance(t, TensorType) and isinstance(t.element_type, (Float32Type, Float64Type))
            and 1 <= len(t.get_shape()) and all(d >= 1 for d in t.get_shape())
            and math.prod(t.get_shape()) < MAX_TENSOR_ELEMENTS)


def view_shape(shape) -> tuple[int, int]:
    """The 2-D view (rows, last axis) of a tensor shape."""
    return (math.prod(shape[:-1]), shape[-1]) if len(shape) >= 2 else (1, shape[0])


def _scalar_const(v: SSAValue) -> float | None:
    """The value of a scalar float constant (outside the body, or `truncf`/`extf` of one inside it)."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return None
    if owner.name in ("arith.truncf", "arith.extf"):
        return _scalar_const(owner.operands[0])
    if owner.name in CONSTANT_OPS and not isinstance(v.type, TensorType):
        return splat_value(owner)
    return None


def _scalar_const_tensor(v: SSAValue) -> float | None:
    """The value of a splat constant tensor (a TOSA zero point, a zero bias), else None."""
    owner = v.owner
    return splat_value(owner) if isinstance(owner, Operation) and owner.name in CONSTANT_OPS else None


def _const_root(v: SSAValue) -> SSAValue:
    owner = v.owner
    while isinstance(owner, Operation) and owner.name in ("arith.truncf", "arith.extf"):
        v = owner.operands[0]
        owner = v.owner
    return v


class RealImporter(Importer):
    """`frontend.Importer` plus torch-mlir's N-D row-wise generics on 2-D views."""

    def __init__(self, block):
        super().__init__(block)
        self.views: dict[SSAValue, T.Ten] = {}
        self.scalars: list[SSAValue] = []

    # -- views

    def view(self, v: SSAValue) -> T.Ten:
        """The 2-D (rows x last axis) view of `v`."""
        if v in self.views:
            return self.views[v]
        shape = _shape(v)
        if len(shape) == 2:
            return self.term(v)
        return T.reshape(self.term(v), sh(view_shape(shape)))

    def _result(self, op, inner: T.Ten) -> T.Ten:
        shape = _shape(op.results[0])
        if len(shape) == 2:
            return inner
        self.views[op.results[0]] = inner
        return T.reshape(inner, sh(shape))

    def _scalar(self, v: SSAValue) -> T.Ten:
        root = _const_root(v)
        if root not in self.terms:
            self.scalars.append(root)
        return self.term(root)

    # -- import

    def _import(self, op: Operation) -> T.Ten | None:
        name = op.name
        if name == "linalg.generic" and op.results and _float_tensor(op.results[0]):
            out = _shape(op.results[0])
            # N-D generics on 2-D views first; 2-D ones (LSTM cells, biases) as `frontend` imports them
            if len(out) != 2 and len(out) <= 4:
                t = self._row_generic(op, out)
                if t is not None:
                    return t
        t = super()._import(op)
        if t is not None:
            return t
        if name == "linalg.generic" and op.results and _float_tensor(op.results[0]):
            out = _shape(op.results[0])
            if len(out) == 2:
                return self._row_generic(op, out)
            return None
        if name == "tosa.matmul" and len(op.results) == 1 and len(op.operands) >= 2:
            a, b = op.operands[:2]
            if not all(_float_tensor(v) for v in (a, b, op.results[0])) or len(_shape(a)) != 3:
                return None
            if any(_scalar_const_tensor(v) != 0.0 for v in op.operands[2:]):
                return None
            (nb, m, k), (_, _, n) = _shape(a), _shape(b)
            return T.bmm(self.term(a), self.term(b), nb, m, k, n)
        if name == "tosa.conv2d" and len(op.results) == 1:
            return self._tosa_conv2d(op)
        if name == "linalg.conv_1d_ncw_fcw" and len(op.results) == 1:
            return self._pointwise_conv1d(op)
        if name == "tensor.extract_slice" and len(op.results) == 1 and len(op.operands) == 1:
            return self._nd_slice(op)
        if name == "tensor.concat" and len(op.results) == 1 and op.operands:
            return self._row_concat(op)
        if name in ("tensor.collapse_shape", "tensor.expand_shape") and len(op.results) == 1:
            src, res = op.operands[0], op.results[0]
            if _float_tensor(src) and _float_tensor(res) and len(_shape(res)) <= 4 and len(_shape(src)) <= 4:
                if view_shape(_shape(src)) == view_shape(_shape(res)):
                    if len(_shape(res)) == 2:
                        return self.view(src)  # the value is the source's view
                    self.views[res] = self.view(src)
                return T.reshape(self.term(src), sh(_shape(res)))
        return None

    def _tosa_conv2d(self, op) -> T.Ten | None:
        """torch-mlir's TOSA convolution (NHWC input, OHWI weights, a bias, zero points 0), unpadded and
        undilated: the NCHW `conv2d` term between transposes, plus the bias over the channels.  (A
        padded one stays on the host: HLSCNN has no padding and isel has no pad term.)"""
        ops = op.operands
        if len(ops) < 3 or not all(_float_tensor(v) for v in (*ops[:2], op.results[0])):
            return None
        if any(_scalar_const_tensor(v) != 0.0 for v in ops[3:]):
            return None
        attrs = {**op.attributes, **op.properties}  # torch-mlir's generic form carries them as attributes
        ints = {k: [int(v) for v in attrs[k].get_values()] for k in ("pad", "stride", "dilation")
                if k in attrs and hasattr(attrs[k], "get_values")}
        if ints.get("pad") != [0, 0, 0, 0] or ints.get("dilation") != [1, 1] or len(ints.get("stride", [])) != 2:
            return None
        (n, h, w, c), (k, kh, kw, _) = _shape(ops[0]), _shape(ops[1])
        sh_, sw_ = ints["stride"]
        x = T.transpose(self.term(ops[0]), sh((0, 3, 1, 2)))
        wt = T.transpose(self.term(ops[1]), sh((0, 3, 1, 2)))
        y = T.transpose(T.conv2d(x, wt, n, c, h, w, k, kh, kw, sh_, sw_), sh((0, 2, 3, 1)))
        out = _shape(op.results[0])
        bias = _scalar_const_tensor(ops[2])
        if bias == 0.0:
            return y
        if not (_float_tensor(ops[2]) and math.prod(_shape(ops[2])) == k):
            return None
        return T.add(y, T.reshape(self.term(ops[2]), sh((1, 1, 1, k))), sh(out))

    def _pointwise_conv1d(self, op) -> T.Ten | None:
        """A kernel-1, stride-1 `linalg.conv_1d_ncw_fcw` on a batch of 1 (ResMLP's cross-patch linear)
        is the GEMM `W[F, C] · x[C, L]`, plus its init: zero or torch's bias broadcast over L."""
        if len(op.operands) != 3 or not all(_float_tensor(v) for v in (*op.operands, op.results[0])):
            return None
        x, w, init = op.operands
        (n, c, length), (f, _, kw) = _shape(x), _shape(w)
        attrs = {**op.attributes, **op.properties}
        ints = [int_values(attrs.get(k)) for k in ("strides", "dilations")]
        if n != 1 or kw != 1 or ints != [(1,), (1,)]:
            return None
        gemm = T.matmul(T.reshape(self.term(w), sh((f, c))), self.view(x), f, c, length)
        owner = init.owner
        if isinstance(owner, Operation) and owner.name == "linalg.broadcast":
            dims = int_values(owner.properties.get("dimensions"))
            b = owner.operands[0]
            if dims != (0, 2) or _shape(b) != (f,) or not _float_tensor(b):
                return None
            return self._result(op, T.add(gemm, T.reshape(self.term(b), sh((f, 1))), sh((f, length))))
        from steplus.passes.isel.frontend import _is_zero

        return self._result(op, gemm) if _is_zero(init) else None

    def _nd_slice(self, op) -> T.Ten | None:
        """A static slice that is a column block (leading axes whole) or a row block (last axis
        whole, one partial axis, size-1 axes before it, whole axes after it) of the 2-D view."""
        src, res = op.operands[0], op.results[0]
        if not (_float_tensor(src) and _float_tensor(res)) or len(_shape(src)) > 4:
            return None
        shape = _shape(src)
        props = [op.properties.get(k) for k in ("static_offsets", "static_sizes", "static_strides")]
        if not all(hasattr(p, "get_values") for p in props):
            return None
        offs, sizes, steps = ([int(x) for x in p.get_values()] for p in props)
        if len(offs) != len(shape) or any(x != 1 for x in steps) or math.prod(sizes) != math.prod(_shape(res)):
            return None
        rows, n = view_shape(shape)
        lead = list(range(len(shape) - 1))
        if all(sizes[a] == shape[a] for a in lead):
            if sizes[-1] == n:
                return self._result(op, self.view(src))
            from steplus.passes.isel.frontend_forms import cols

            return self._result(op, cols(self.view(src), offs[-1], sizes[-1], rows, n))
        if sizes[-1] != n:
            return None
        a = next(a for a in lead if sizes[a] != shape[a])
        if any(sizes[b] != 1 for b in lead[:a]) or any(sizes[b] != shape[b] for b in lead[a + 1:]):
            return None
        inner = math.prod(shape[a + 1:-1])
        start = 0
        for b in lead[:a + 1]:
            start = start * shape[b] + offs[b]
        return self._result(op, F.rows(self.view(src), start * inner, sizes[a] * inner, n))

    def _row_concat(self, op) -> T.Ten | None:
        """`tensor.concat` along axis 0 (rank >= 2): a balanced tree of 2-D row concatenations."""
        res = op.results[0]
        dim = op.properties.get("dim")
        if dim is None or int(dim.value.data) != 0 or not 2 <= len(_shape(res)) <= 4:
            return None
        if not all(_float_tensor(v) for v in (*op.operands, res)) or len(op.operands) > 4096:
            return None
        n = _shape(res)[-1]
        parts = [(self.view(v), view_shape(_shape(v))[0]) for v in op.operands]
        while len(parts) > 1:
            nxt = [(N.rcat(a, b, ra, rb, n), ra + rb) for (a, ra), (b, rb) in zip(parts[0::2], parts[1::2])]
            parts = nxt + ([parts[-1]] if len(parts) % 2 else [])
        return self._result(op, parts[0][0])

    def _row_generic(self, op, out) -> T.Ten | None:
        from steplus.utils.layouts import map_dims

        try:
            dims = map_dims(op)
        except Exception:
            return None
        its = [str(it.data.value) for it in op.iterator_types.data]
        loops = len(its)
        if its == ["parallel"] * loops and len(op.outputs) == 1 and dims[-1] == list(range(loops)):
            g = self._guard(op, out, dims)
            return g if g is not None else self._elementwise(op, out, dims)
        if (its == ["parallel"] * (loops - 1) + ["reduction"] and len(op.inputs) == 1 and loops <= 4
                and dims[0] == list(range(loops)) and _float_tensor(op.inputs[0])
                and dims[1] in (list(range(loops - 1)) + [-1], list(range(loops - 1)))):
            return self._reduction(op, out, keep=len(dims[1]) == loops)
        return None

    def _operand(self, v: SSAValue, ds: list[int], out) -> T.Ten | None:
        """The view of a generic operand: full, a broadcast row (last loop only) or a column
        (every loop but the last); loops of size 1 do not count."""
        if not _float_tensor(v):
            return None
        r = len(out)
        shape = _shape(v)
        rows, n = view_shape(out)
        live = [d for d in ds if d >= 0]
        if live != sorted(live) or len(set(live)) != len(live):
            return None  # a transposing map
        loops = [d for d in range(r) if out[d] != 1]
        eff = [d for d in live if out[d] != 1]
        size = math.prod(shape)
        if eff == loops and size == rows * n:
            return self.view(v) if view_shape(shape) == (rows, n) else T.reshape(self.term(v), sh((rows, n)))
        if out[-1] != 1 and eff == [r - 1] and size == n:
            return T.reshape(self.term(v), sh((1, n)))
        if eff == [d for d in loops if d != r - 1] and size == rows:
            return self.view(v) if view_shape(shape) == (rows, 1) else T.reshape(self.term(v), sh((rows, 1)))
        return None

    def _elementwise(self, op, out, dims) -> T.Ten | None:
        block = op.body.block
        env = {}
        full = set()  # values of the output's shape; a broadcast row or column alone is not (a broadcast copy)
        rows_n = view_shape(out)
        for arg, v, ds in zip(block.args, op.inputs, dims):
            t = self._operand(v, ds, out)
            if t is None:
                return None
            env[arg] = t
            if math.prod(_shape(v)) == math.prod(rows_n):
                full.add(arg)
        s2 = sh(view_shape(out))
        for bop in block.ops:
            if bop.name == "linalg.yield":
                res = env.get(bop.operands[0]) if len(bop.operands) == 1 else None
                return None if res is None or bop.operands[0] not in full else self._result(op, res)
            if any(v in full for v in bop.operands):
                full.update(bop.results)
            if len(bop.results) != 1:
                return None
            if bop.name in ("arith.truncf", "arith.extf") and _scalar_const(bop.operands[0]) is not None:
                continue  # a constant converted in the body: used through _scalar
            ins = [env.get(v) for v in bop.operands]
            consts = [_scalar_const(v) if env.get(v) is None else None for v in bop.operands]
            name = bop.name
            if name in _UN and ins[0] is not None:
                res = _UN[name](ins[0])
            elif name == "arith.divf" and consts[0] == 1.0 and ins[1] is not None:
                res = F.recip(ins[1])
            elif name == "arith.addf" and 1.0 in consts and (x := next((x for x in ins if x is not None), None)) is not None:
                res = N.addone(x)
            elif name in _BIN and len(ins) == 2 and all(x is not None or k is not None for x, k in zip(ins, consts)):
                a, b = (x if x is not None else self._scalar(v) for x, v in zip(ins, bop.operands))
                res = _BIN[name](a, b, s2)
            else:
                return None
            env[bop.results[0]] = res
        return None

    def _guard(self, op, out, dims) -> T.Ten | None:
        """torch's softmax guard: `select(all(x == -inf) over the row, 0, p)` -> `guard(x, p)`."""
        body = list(op.body.block.ops)
        if len(op.inputs) != 3 or len(body) != 2 or body[0].name != "arith.select":
            return None
        args = op.body.block.args
        if list(body[0].operands) != list(args[:3]) or body[1].operands[0] is not body[0].results[0]:
            return None
        mask, zero, p = op.inputs
        zop = zero.owner
        if not (isinstance(zop, Operation) and zop.name in CONSTANT_OPS and splat_value(zop) == 0.0):
            return None
        red = mask.owner
        if not (isinstance(red, GenericOp) and len(red.inputs) == 1):
            return None
        rbody = [o.name for o in red.body.block.ops]
        cmp = red.inputs[0].owner
        if rbody != ["arith.andi", "linalg.yield"] or not isinstance(cmp, GenericOp):
            return None
        cbody = list(cmp.body.block.ops)
        names = [o.name for o in cbody]
        if names not in (["arith.cmpf", "linalg.yield"], ["arith.extf", "arith.cmpf", "linalg.yield"]):
            return None
        c = cbody[-2]
        if not isinstance(c, CmpfOp):
            return None
        lim = _scalar_const(c.operands[1])
        if lim != float("-inf") or c.predicate.value.data != 1 or len(cmp.inputs) != 1:  # oeq
            return None
        x = cmp.inputs[0]
        if _shape(x) != tuple(out) or _shape(p) != tuple(out):
            return None
        return self._result(op, N.guard(self.view(x), self.view(p)))

    def _reduction(self, op, out, keep: bool) -> T.Ten | None:
        """`rsum` / `rmaxr` over the last axis (a zero / -inf init; an unused index result is allowed)."""
        block = op.body.block
        y = block.last_op
        if y is None or y.name != "linalg.yield":
            return None
        comb = y.operands[0].owner
        args = block.args
        if not isinstance(comb, Operation) or set(comb.operands) != {args[0], args[1]}:
            return None
        if any(True for res in op.results[1:] for _ in res.uses):
            return None
        init = op.outputs[0].owner
        fill = None
        if isinstance(init, Operation) and init.name == "linalg.fill":
            fill = _scalar_const(init.operands[0])
        x = op.inputs[0]
        rows, n = view_shape(_shape(x))
        if comb.name == "arith.addf" and fill == 0.0:
            t = F.rsum(self.view(x), rows, n)
        elif comb.name in ("arith.maximumf", "arith.maxnumf") and fill == float("-inf"):
            t = N.rmaxr(self.view(x), rows, n)
        else:
            return None
        return self._result(op, t) if keep else T.reshape(t, sh(out))

    def constant_facts(self) -> list:
        """The facts of `Importer.constant_facts` for the scalar constants too, and `int_of(c) = n`."""
        from egglog import i64, set_

        facts = super().constant_facts()
        for v in self.scalars:
            c = splat_value(v.owner) if isinstance(v.owner, Operation) else None
            if c is None or not c > 0 or c == float("inf"):
                continue
            leaf = self.term(v)
            if c == int(c) and c < MAX_INVERSE:
                facts.append(set_(F.int_of(leaf)).to(i64(int(c))))
            inv = round(1 / c) if c >= 1 / MAX_INVERSE else 0
            if inv >= 1 and abs(1 / inv - c) <= 1e-6 * c:
                facts.append(set_(F.inv_of(leaf)).to(i64(inv)))
            if c <= 1e-3:
                facts.append(F.is_eps(leaf))
        for v in self.leaves:  # the shape rules (`frontend_forms.SHAPES`) give the other terms theirs
            shape = _shape(v)
            if len(shape) == 2:
                t = self.terms[v]
                facts += [set_(N.nrows(t)).to(shape[0]), set_(N.ncols(t)).to(shape[1])]
        return facts
