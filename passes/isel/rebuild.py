"""Extracted terms -> IR (the rebuilding half of `isel`).

Terms that equal an imported term reuse the original SSA value; other nodes
are built before the root's first user: `ila.invoke` for accelerator calls,
`linalg`/`tosa`/`ila.windows`/`ila.im2col` for host ops the rewrites created.

Example: `Rebuilder(importer, anchor).value(term)` returns an `SSAValue`.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, tosa
from xdsl.dialects.builtin import (DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, TensorType, f32,
                                   i1, i8, i32, i64)
from xdsl.dialects.linalg.ops import MatmulOp, TransposeOp
from xdsl.dialects.tensor import EmptyOp, ExtractSliceOp
from xdsl.builder import Builder
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from steplus.dialects.ila import InvokeOp
from steplus.dialects.ila.host import Im2colOp, WindowsOp
from steplus.dialects.tosa_ext import EXTRA_OPS, ExpOp, RsqrtOp, SigmoidOp, TanhOp
from steplus.dialects.tosa_ext import reshape as tosa_reshape
from steplus.utils.diagnostics import OpDiagnosticError
from steplus.dialects.semantics.constants import splat_value
from steplus.passes.isel.terms import ACCEL


_UNARY_OPS = {"sigmoid": SigmoidOp, "tanh": TanhOp, "exp": ExpOp, "recip": tosa.ReciprocalOp, "rsqrt": RsqrtOp}
_TOSA_HOST = {op.name: op for op in EXTRA_OPS if op.name in ("tosa.equal", "tosa.select")}
_FUSED_HOST = {"mul", "mulc", "sub", "addc", "rsum", "concat4", "rows", *_UNARY_OPS}


class RebuildError(OpDiagnosticError):
    """An extracted term has a host op with no IR form here (a term no rule builds, such as a
    grouped convolution `gconv` whose input changed): `isel` leaves that value as it is."""


class Tree:
    """A term node with its interned structural key; `name` is None for literals (key ("lit", v))."""

    __slots__ = ("key", "name", "subs")

    def __init__(self, key, name, subs):
        self.key, self.name, self.subs = key, name, subs


def _callable_name(ref) -> str:
    return ref.method_name if hasattr(ref, "method_name") else ref.ident.name


def tree(term, intern: dict) -> Tree:
    """Key every node once.  Works on egglog's (shared, immutable) expression
    declarations, memoised by identity in `intern`, so a program's terms —
    which share their operands' subterms — are keyed in linear time (egglog's
    `str` pretty-prints with black, far too slowly)."""
    return _tree(term.__egg_typed_expr__.expr, intern)


def _tree(decl, intern: dict) -> Tree:
    hit = intern.get(id(decl))
    if hit is not None and hit[0] is decl:
        return hit[1]
    if not hasattr(decl, "callable"):
        node = Tree(("lit", decl.value), None, ())
    else:
        subs = tuple(_tree(a.expr, intern) for a in decl.args)
        name = _callable_name(decl.callable)
        key = intern.setdefault((name, tuple(t.key for t in subs)), len(intern))
        node = Tree(key, name, subs)
    intern[id(decl)] = (decl, node)
    return node


def _arr(vals) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in vals])


def _dims(shape: Tree) -> list[int]:
    return [int(t.key[1]) for t in shape.subs]


class Rebuilder:
    def __init__(self, importer, anchor: Operation, memo: dict | None = None, intern: dict | None = None):
        """`memo` (built values by key) and `intern` (the key table) may be shared between rebuilders."""
        self.imp = importer
        self.anchor = anchor
        self.intern = {} if intern is None else intern
        self.by_key = {tree(t, self.intern).key: v for v, t in importer.terms.items()}
        # 2-D views of N-D values (`views.RealImporter`): a reshape of the value
        self.view_keys = {tree(t, self.intern).key: v for v, t in getattr(importer, "views", {}).items()}
        self.memo: dict = {} if memo is None else memo
        self.created: list[Operation] = []
        self.builder = Builder(InsertPoint.before(anchor))  # every op a term needs goes before its user

    def _emit(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        self.created.append(op)
        return op.results[0]

    def _zeros(self, shape) -> SSAValue:
        t = TensorType(f32, list(shape))
        return self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [0.0])))

    def _reshape(self, v: SSAValue, shape) -> SSAValue:
        if tuple(v.type.get_shape()) == tuple(shape):
            return v
        c, r = tosa_reshape(v, shape)
        self._emit(c)
        return self._emit(r)

    def _transpose(self, v: SSAValue, perm) -> SSAValue:
        shape = v.type.get_shape()
        out = [shape[p] for p in perm]
        init = self._emit(EmptyOp([], TensorType(f32, out)))
        return self._emit(TransposeOp(v, init, _arr(perm), TensorType(f32, out)))

    def _matmul(self, a: SSAValue, b: SSAValue, m: int, n: int) -> SSAValue:
        z = self._zeros((m, n))
        return self._emit(MatmulOp([a, b], [z], [TensorType(f32, [m, n])]))

    def _dominates(self, v: SSAValue) -> bool:
        owner = v.owner
        if not isinstance(owner, Operation):
            return True
        block = self.anchor.parent_block()
        return owner.parent_block() is block and (
            block.get_operation_index(owner) < block.get_operation_index(self.anchor))

    def value(self, term) -> SSAValue:
        t = term if isinstance(term, Tree) else tree(term, self.intern)
        key = t.key
        if key in self.by_key and self._dominates(self.by_key[key]):
            return self.by_key[key]
        if key not in self.memo and key in self.view_keys and self._dominates(self.view_keys[key]):
            v = self.view_keys[key]
            shape = v.type.get_shape()
            self.memo[key] = self._reshape(v, (math.prod(shape[:-1]), shape[-1]))
        if key not in self.memo:
            self.memo[key] = self._build(t)
        return self.memo[key]

    def _build(self, t: Tree) -> SSAValue:
        name = t.name
        args = t.subs
        if name == "leaf":
            return self.imp.leaves[int(t.subs[0].key[1])]
        kids, ints = [], []
        for sub in t.subs:
            if sub.name is None:
                if isinstance(sub.key[1], int):
                    ints.append(sub.key[1])
            elif sub.name not in ("s1", "s2", "s3", "s4", "s5"):
                kids.append(self.value(sub))
        if name in ("mul", "mulc", "sub", "addc", "add", "div"):
            kids = [self._splat_scalar(v) for v in kids]
        if name == "flex_layernorm":
            return self._layernorm(args, kids, ints)
        if name in ("div", "mean", "rmaxr"):
            return self._real_form(name, args, kids, ints)
        if name == "guard":
            return self._guard(kids)
        if name in ("ext", "trunc"):
            # a rebuilt row-wise chain computes in f32 (step-run evaluates torch's f64 generics in f32 too)
            return kids[0]
        if name in ACCEL:
            return self._accel(name, kids, ints)
        if name in _FUSED_HOST:
            return self._fused_host(name, args, kids, ints)
        if name == "reshape":
            return self._reshape(kids[0], _dims(args[1]))
        if name == "transpose":
            return self._transpose(kids[0], _dims(args[1]))
        if name == "dense":
            m, _, n = ints
            return self._matmul(kids[0], self._transpose(kids[1], (1, 0)), m, n)
        if name == "matmul":
            m, _, n = ints
            return self._matmul(kids[0], kids[1], m, n)
        if name in ("bmm", "bpart"):
            return self._bmm(name, kids, ints)
        if name == "bsel":
            i, _, r, c = ints
            piece = self._emit(ExtractSliceOp.from_static_parameters(kids[0], [i, 0, 0], [1, r, c]))
            return self._reshape(piece, (r, c))
        if name == "bcat":
            cx, cy, m, n = ints
            return self._emit(tosa.ConcatOp(kids, IntegerAttr(0, i32), TensorType(f32, [cx + cy, m, n])))
        if name == "rcat":
            ra, rb, n = ints
            return self._emit(tosa.ConcatOp(kids, IntegerAttr(0, i32), TensorType(f32, [ra + rb, n])))
        if name in ("neg", "addone", "cols", "wrows", "vpart", "vadd"):
            return self._normalized(name, kids, ints)
        if name == "zeros":
            return self._zeros(ints)
        if name == "bias_add":
            m, n = ints
            b = self._reshape(kids[1], (1, n))
            return self._emit(tosa.AddOp(operands=[kids[0], b], result_types=[TensorType(f32, [m, n])]))
        if name == "add":
            out = _dims(args[2])
            return self._emit(tosa.AddOp(operands=kids, result_types=[TensorType(f32, out)]))
        if name in ("windows", "maxpool"):
            n, h, w, c, kh, kw, sh, sw, *pads = ints
            oh, ow = (h + pads[0] + pads[1] - kh) // sh + 1, (w + pads[2] + pads[3] - kw) // sw + 1
            props = {"kernel": _arr((kh, kw)), "stride": _arr((sh, sw)), "pad": _arr(pads)}
            if name == "windows":
                out = TensorType(f32, [kh * kw, n * oh * ow * c])
                return self._emit(WindowsOp(operands=[kids[0]], result_types=[out], properties=props))
            out = TensorType(f32, [n, oh, ow, c])
            return self._emit(tosa.MaxPool2DOp(operands=[kids[0]], result_types=[out], properties=props))
        if name == "conv2d":
            from xdsl.dialects.builtin import DenseIntOrFPElementsAttr as Dense
            from xdsl.dialects.linalg.ops import Conv2DNchwFchwOp

            n, c, h, w, k, kh, kw, sh, sw = ints
            out = TensorType(f32, [n, k, (h - kh) // sh + 1, (w - kw) // sw + 1])
            z = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(out, [0.0])))
            pair = TensorType(i64, [2])
            return self._emit(Conv2DNchwFchwOp(kids, [z], [out], strides=Dense.from_list(pair, [sh, sw]),
                                               dilations=Dense.from_list(pair, [1, 1])))
        if name == "im2col":
            n, c, h, w, kh, kw, sh, sw = ints
            oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
            props = {"kernel": _arr((kh, kw)), "stride": _arr((sh, sw)), "pad": _arr((0, 0, 0, 0))}
            out = TensorType(f32, [n * oh * ow, c * kh * kw])
            return self._emit(Im2colOp(operands=[kids[0]], result_types=[out], properties=props))
        if name == "rmax":
            t, p = ints
            r = self._emit(tosa.ReduceMaxOp(operands=[kids[0]], result_types=[TensorType(f32, [1, p])],
                                            properties={"axis": IntegerAttr(0, i32)}))
            return self._reshape(r, (p,))
        if name == "pool2":
            t, p = ints
            x4 = self._reshape(kids[0], (1, t, p, 1))
            props = {"kernel": _arr((2, 1)), "stride": _arr((2, 1)), "pad": _arr((0, 0, 0, 0))}
            r = self._emit(tosa.MaxPool2DOp(operands=[x4], result_types=[TensorType(f32, [1, t // 2, p, 1])],
                                            properties=props))
            return self._reshape(r, (t // 2, p))
        raise RebuildError(self.anchor, f"isel: cannot rebuild a '{name}' term here")

    def _splat_scalar(self, v: SSAValue) -> SSAValue:
        """A scalar constant operand of an elementwise term as a 1x1 f32 tensor (tosa ops broadcast it)."""
        if isinstance(v.type, TensorType):
            return v
        value = splat_value(v.owner) if isinstance(v.owner, Operation) else None
        if value is None:
            raise OpDiagnosticError(self.anchor, "isel: cannot rebuild an elementwise op on a non-constant scalar")
        return self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [1, 1]), [value])))

    def _real_form(self, name, args, kids, ints) -> SSAValue:
        """Host ops of the terms of torch's real forms (`views.py`, `frontend_forms.REAL_FORMS`)."""
        if name == "div":
            out = TensorType(f32, _dims(args[2]))
            inv = self._emit(tosa.ReciprocalOp(operands=[kids[1]], result_types=[kids[1].type]))
            shift = self._emit(tosa.ConstOp(DenseIntOrFPElementsAttr.from_list(TensorType(i8, [1]), [0])))
            return self._emit(tosa.MulOp(operands=[kids[0], inv, shift], result_types=[out]))
        m, n = ints
        col = TensorType(f32, [m, 1])
        if name == "rmaxr":
            return self._emit(tosa.ReduceMaxOp(operands=[kids[0]], result_types=[col],
                                               properties={"axis": IntegerAttr(1, i32)}))
        total = self._emit(tosa.ReduceSumOp(operands=[kids[0]], result_types=[col],
                                            properties={"axis": IntegerAttr(1, i32)}))
        inv_n = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [1, 1]), [1.0 / n])))
        shift = self._emit(tosa.ConstOp(DenseIntOrFPElementsAttr.from_list(TensorType(i8, [1]), [0])))
        return self._emit(tosa.MulOp(operands=[total, inv_n, shift], result_types=[col]))

    def _guard(self, kids) -> SSAValue:
        """torch's softmax guard `select(all(x == -inf) over the row, 0, p)` on the 2-D views, as TOSA:
        `tosa.equal` with a -inf splat, `tosa.reduce_all` over axis 1, `tosa.select` of a zero splat."""
        x, p = kids
        m, n = x.type.get_shape()
        ninf = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [1, 1]),
                                                                              [float("-inf")])))
        eq = self._emit(_TOSA_HOST["tosa.equal"](operands=[[x, ninf]], result_types=[TensorType(i1, [m, n])]))
        allr = self._emit(tosa.ReduceAllOp(operands=[eq], result_types=[TensorType(i1, [m, 1])],
                                           properties={"axis": IntegerAttr(1, i32)}))
        zero = self._zeros((1, 1))
        return self._emit(_TOSA_HOST["tosa.select"](operands=[[allr, zero, p]], result_types=[p.type]))

    def _normalized(self, name, kids, ints) -> SSAValue:
        """Host ops of the normalizing rewrites (`frontend_forms.py`)."""
        x = kids[0]
        if name == "neg":
            zero = self._zeros(x.type.get_shape())
            return self._emit(tosa.SubOp(operands=[zero, x], result_types=[x.type]))
        if name == "addone":
            one = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(x.type, [1.0])))
            return self._emit(tosa.AddOp(operands=[x, one], result_types=[x.type]))
        if name == "vadd":
            return self._emit(tosa.AddOp(operands=kids, result_types=[x.type]))
        if name == "cols":
            c0, cc, m, _ = ints
            return self._emit(ExtractSliceOp.from_static_parameters(x, [0, c0], [m, cc]))
        if name == "wrows":
            r0, rr, _, k = ints
            return self._emit(ExtractSliceOp.from_static_parameters(x, [r0, 0], [rr, k]))
        c0, cc, _ = ints  # vpart
        return self._emit(ExtractSliceOp.from_static_parameters(x, [c0], [cc]))

    def _bmm(self, name, kids, ints) -> SSAValue:
        """A host linalg.batch_matmul (of the batches [s, e) for a `bpart`)."""
        from steplus.dialects.linalg_ext import BatchMatmulOp

        a, b = kids
        if name == "bpart":
            s, e, nb, m, k, n = ints
            a = self._emit(ExtractSliceOp.from_static_parameters(a, [s, 0, 0], [e - s, m, k]))
            b = self._emit(ExtractSliceOp.from_static_parameters(b, [s, 0, 0], [e - s, k, n]))
            nb = e - s
        else:
            nb, m, k, n = ints
        out = TensorType(f32, [nb, m, n])
        z = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(out, [0.0])))
        return self._emit(BatchMatmulOp([a, b], [z], [out]))

    def _fused_host(self, name, args, kids, ints) -> SSAValue:
        """Host ops of the fused patterns (built only when a rewrite created them)."""
        if name in ("mul", "mulc", "sub", "addc"):
            out = TensorType(f32, _dims(args[2]))
            if name == "sub":
                return self._emit(tosa.SubOp(operands=kids, result_types=[out]))
            if name == "addc":
                return self._emit(tosa.AddOp(operands=kids, result_types=[out]))
            shift = self._emit(tosa.ConstOp(DenseIntOrFPElementsAttr.from_list(TensorType(i8, [1]), [0])))
            return self._emit(tosa.MulOp(operands=[*kids, shift], result_types=[out]))
        if name == "rsum":
            m, _ = ints
            return self._emit(tosa.ReduceSumOp(operands=[kids[0]], result_types=[TensorType(f32, [m, 1])],
                                               properties={"axis": IntegerAttr(1, i32)}))
        if name == "concat4":
            shape = list(kids[0].type.get_shape())
            shape[0] *= 4
            return self._emit(tosa.ConcatOp(kids, IntegerAttr(0, i32), TensorType(f32, shape)))
        if name == "rows":
            start, count, n = ints
            return self._emit(ExtractSliceOp.from_static_parameters(kids[0], [start, 0], [count, n]))
        cls = _UNARY_OPS[name]
        return self._emit(cls(operands=kids, result_types=[kids[0].type]))

    def _layernorm(self, args, kids, ints) -> SSAValue:
        """flexasr.layernorm(x, γ, β) with the program's ε as an attribute (the hardware's is 2^-14)."""
        x, g, b, eps = kids
        attrs = {"epsilon": FloatAttr(splat_value(eps.owner), f32)}  # is_eps holds only for splat constants
        return self._emit(InvokeOp("flexasr.layernorm", [x, g, b], x.type, attrs))

    def _accel(self, name, kids, ints) -> SSAValue:
        attrs = {}
        if name == "flex_lstm":
            t, _, n = ints
            return self._emit(InvokeOp(ACCEL[name], kids, TensorType(f32, [t + 1, n])))
        if name == "flex_attention":
            tq, _, d = ints
            return self._emit(InvokeOp(ACCEL[name], kids, TensorType(f32, [tq, d])))
        if name == "flex_maxpool":
            t, p = ints
            out = [t // 2, p]
        elif name in ("flex_linear", "vta_dense"):
            m, _, n = ints
            out = [m, n]
        else:
            n, c, h, w, k, kh, kw, sh, sw = ints
            out = [n, k, (h - kh) // sh + 1, (w - kw) // sw + 1]
            attrs["strides"] = _arr((sh, sw))
        return self._emit(InvokeOp(ACCEL[name], kids, TensorType(f32, out), attrs))
