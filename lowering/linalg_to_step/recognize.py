"""Recognition: a `func.func` on tensors -> a small DAG of tensor nodes.

Accepted (everything else is a located error naming the op):

- `tensor.empty`, `linalg.fill` of a scalar `arith.constant` (matmul inits);
- `linalg.matmul` into a zero fill;
- `linalg.transpose` (permutation [1, 0]) or a transposing `linalg.generic` of
  a function argument (a weight read transposed: `matmul_t`);
- element-wise `linalg.generic`s (identity maps, all "parallel") whose body is
  a tree of `arith.addf/mulf/divf/negf`, `math.exp` and scalar constants that
  maps onto the step function library: add, mul, div, exp, and silu (torch's
  `x * sigmoid(x)`, also split over two generics, and `x / (1 + exp(-x))`).

Example: torch-mlir's SwiGLU FFN gives `Matmul(arg0, arg1)`,
`Ewise("silu", [that])`, `Matmul(arg0, arg2)`, `Ewise("mul", ...)`, and
`Matmul(mul, arg3)` returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AffineMapAttr, AnyFloat, FloatAttr, IntegerAttr, TensorType, f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from steplus.utils.diagnostics import OpDiagnosticError

SUPPORTED = ("tensor.empty, linalg.fill, linalg.matmul, linalg.transpose, "
             "element-wise linalg.generic (add, mul, div, exp, silu)")


@dataclass(eq=False)
class Node:
    """A tensor value of the function.

    kind: "arg" (function argument `index`), "matmul" (`inputs` = [a, b];
    `transpose_b`: b is read transposed), "ewise" (`fn` over `inputs`),
    "sigmoid" (only as part of silu), "init" (an empty/zero-filled tensor)."""

    kind: str
    shape: tuple[int, ...]
    dtype: Attribute
    op: Operation | None = field(repr=False)
    inputs: list[Node] = field(default_factory=list, repr=False)
    fn: str = ""
    index: int = -1
    transpose_b: bool = False
    transposed: bool = False  # an "arg" read through a transpose
    number: int = -1  # matmuls: their index in program order


@dataclass
class Function:
    """The recognized function: arguments, nodes in program order, results."""

    op: func.FuncOp
    args: list[Node]
    nodes: list[Node]
    results: list[Node]


def _static_shape(t: Attribute, op: Operation, what: str) -> tuple[tuple[int, ...], Attribute]:
    if not isinstance(t, TensorType):
        raise OpDiagnosticError(op, f"{what} is {t}, not a ranked tensor: "
                                    "convert-linalg-to-step lowers functions on tensors")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise OpDiagnosticError(op, f"{what} has a dynamic shape {t}: convert-linalg-to-step "
                                    "needs static shapes (the tiling cannot express '?')")
    if len(shape) != 2:
        raise OpDiagnosticError(op, f"{what} is {t}: only 2-D tensors are supported")
    if not isinstance(t.get_element_type(), AnyFloat):
        raise OpDiagnosticError(op, f"{what} is {t}: convert-linalg-to-step lowers "
                                    "floating-point tensors (tiles compute in f32)")
    return shape, t.get_element_type()


def _is_identity(m: Attribute, rank: int) -> bool:
    return isinstance(m, AffineMapAttr) and m.data == AffineMap.identity(rank)


def _is_transpose(m: Attribute) -> bool:
    return isinstance(m, AffineMapAttr) and m.data == AffineMap.transpose_map()


class _Recognizer:
    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        self.env: dict[SSAValue, Node | float] = {}
        self.nodes: list[Node] = []
        self.matmuls = 0

    def node(self, v: SSAValue, user: Operation) -> Node:
        n = self.env.get(v)
        if not isinstance(n, Node):
            raise OpDiagnosticError(user, "operand is not a tensor this lowering produced "
                                          f"(defined by {_definer(v)})")
        return n

    def run(self) -> Function:
        fn = self.fn
        args = []
        for i, a in enumerate(fn.body.block.args):
            shape, dt = _static_shape(a.type, fn, f"argument {i}")
            n = Node("arg", shape, dt, fn, index=i)
            self.env[a] = n
            args.append(n)
        results: list[Node] = []
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                results = [self.stored(v, op) for v in op.operands]
                continue
            self.visit(op)
        if not results:
            raise OpDiagnosticError(fn, f"@{fn.sym_name.data} returns nothing: no result "
                                        "to store")
        return Function(fn, args, self.nodes, results)

    def stored(self, v: SSAValue, op: Operation) -> Node:
        n = self.node(v, op)
        if n.kind in ("arg", "init", "sigmoid"):
            raise OpDiagnosticError(op, f"a returned {n.kind} tensor is not computed by a "
                                        "matmul or an element-wise op: nothing to stream")
        return n

    def add(self, op: Operation, n: Node) -> None:
        self.env[op.results[0]] = n
        self.nodes.append(n)

    def visit(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            v = op.value
            if not isinstance(v, (FloatAttr, IntegerAttr)):
                raise OpDiagnosticError(op, "tensor constants are not supported: pass weights "
                                            "as function arguments")
            self.env[op.result] = float(v.value.data)
        elif isinstance(op, tensor.EmptyOp):
            shape, dt = _static_shape(op.tensor.type, op, "tensor.empty")
            self.env[op.tensor] = Node("init", shape, dt, op, fn="empty")
        elif isinstance(op, linalg.FillOp):
            val = self.env.get(op.inputs[0])
            if not isinstance(val, float):
                raise OpDiagnosticError(op, "linalg.fill of a value that is not a scalar "
                                            "arith.constant")
            shape, dt = _static_shape(op.res[0].type, op, "linalg.fill")
            self.env[op.res[0]] = Node("init", shape, dt, op, fn="zero" if val == 0 else "fill")
        elif isinstance(op, linalg.MatmulOp):
            self.matmul(op)
        elif isinstance(op, linalg.TransposeOp):
            perm = list(op.permutation.get_values())
            self.transpose(op, op.input, perm == [1, 0])
        elif isinstance(op, linalg.GenericOp):
            self.generic(op)
        else:
            raise OpDiagnosticError(op, f"'{op.name}' is not supported by convert-linalg-to-step "
                                        f"(supported: {SUPPORTED})")

    def matmul(self, op: linalg.MatmulOp) -> None:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise OpDiagnosticError(op, "linalg.matmul with other than 2 inputs and 1 init")
        a, b = (self.node(v, op) for v in op.inputs)
        init = self.node(op.outputs[0], op)
        if init.kind != "init" or init.fn != "zero":
            raise OpDiagnosticError(op, "linalg.matmul accumulates into a tensor that is not a "
                                        "zero linalg.fill: only C = A B is supported")
        if a.kind == "arg" and a.transposed:
            raise OpDiagnosticError(op, "a transposed left operand of linalg.matmul is not "
                                        "supported (only the right one, as matmul_t)")
        shape, dt = _static_shape(op.res[0].type, op, "linalg.matmul result")
        n = Node("matmul", shape, f32, op, [a, b], transpose_b=b.transposed,
                 number=self.matmuls)
        self.matmuls += 1
        self.add(op, n)

    def transpose(self, op: Operation, src: SSAValue, ok: bool) -> None:
        x = self.node(src, op)
        if not ok:
            raise OpDiagnosticError(op, "only the 2-D transpose [1, 0] is supported")
        if x.kind != "arg" or x.transposed:
            raise OpDiagnosticError(op, "only a function argument can be transposed (it is "
                                        "read transposed by the matmul that uses it)")
        self.add(op, Node("arg", (x.shape[1], x.shape[0]), x.dtype, op, index=x.index,
                          transposed=True))

    def generic(self, op: linalg.GenericOp) -> None:
        maps = list(op.indexing_maps.data)
        iters = [str(t.data) for t in op.iterator_types.data]
        if len(op.outputs) != 1:
            raise OpDiagnosticError(op, "linalg.generic with several results is not supported")
        if any("reduction" in t for t in iters):
            raise OpDiagnosticError(op, "reduction linalg.generic is not supported yet "
                                        "(element-wise generics only)")
        body = list(op.body.block.ops)
        if (len(op.inputs) == 1 and _is_transpose(maps[0]) and _is_identity(maps[1], 2)
                and len(body) == 1 and body[0].operands[0] is op.body.block.args[0]):
            self.transpose(op, op.inputs[0], True)
            return
        if not all(_is_identity(m, 2) for m in maps):
            raise OpDiagnosticError(op, "linalg.generic with non-identity indexing maps "
                                        "(broadcasts) is not supported")
        ins = [self.node(v, op) for v in op.inputs]
        shape, dt = _static_shape(op.res[0].type, op, "linalg.generic result")
        tree = _body_tree(op, self.env)
        self.env[op.results[0]] = self.lower_tree(op, tree, ins, shape, dt)

    def lower_tree(self, op: Operation, t: tuple, ins: list[Node], shape, dt) -> Node:
        """An expression tree over block arguments -> nodes (library functions)."""
        t = _match_functions(t)
        kind = t[0]
        if kind == "in":
            return ins[t[1]]
        if kind == "const":
            raise OpDiagnosticError(op, f"a scalar constant operand ({t[1]:g}) in an element-"
                                        "wise op is not supported (no constant tiles)")
        subs = [self.lower_tree(op, s, ins, shape, dt) for s in t[1:]]
        if kind == "sigmoid":  # completed into silu by a following x * sigmoid(x)
            return self.new(Node("sigmoid", shape, dt, op, subs))
        if kind == "mul" and len(subs) == 2:
            for x, s in (subs, subs[::-1]):
                if s.kind == "sigmoid" and s.inputs[0] is x:
                    return self.new(Node("ewise", shape, dt, op, [x], fn="silu"))
        if any(s.kind == "sigmoid" for s in subs):
            raise OpDiagnosticError(op, "sigmoid is supported only as x * sigmoid(x) (silu): "
                                        "the step function library has no sigmoid")
        if kind not in ("add", "mul", "div", "exp", "silu"):
            raise OpDiagnosticError(op, f"element-wise '{kind}' has no step library function")
        if any(s.kind == "init" for s in subs):
            raise OpDiagnosticError(op, "an element-wise op reads an uninitialized "
                                        "tensor.empty")
        return self.new(Node("ewise", shape, dt, op, subs, fn=kind))

    def new(self, n: Node) -> Node:
        self.nodes.append(n)
        return n


_BODY = {arith.AddfOp: "add", arith.MulfOp: "mul", arith.DivfOp: "div",
         arith.NegfOp: "neg", math.ExpOp: "exp"}


def _body_tree(op: linalg.GenericOp, env: dict) -> tuple:
    block = op.body.block
    trees: dict[SSAValue, tuple] = {a: ("in", i) for i, a in enumerate(block.args)
                                    if i < len(op.inputs)}
    for inner in block.ops:
        if isinstance(inner, linalg.YieldOp):
            if len(inner.operands) != 1 or inner.operands[0] not in trees:
                raise OpDiagnosticError(op, "linalg.generic yields a value it does not compute")
            return trees[inner.operands[0]]
        if isinstance(inner, arith.ConstantOp) and isinstance(inner.value, FloatAttr):
            trees[inner.result] = ("const", float(inner.value.value.data))
            continue
        kind = _BODY.get(type(inner))
        if kind is None:
            raise OpDiagnosticError(op, f"'{inner.name}' in a linalg.generic body has no step "
                                        "library function (supported: arith.addf, arith.mulf, "
                                        "arith.divf, arith.negf, math.exp)")
        args = []
        for v in inner.operands:
            if v in trees:
                args.append(trees[v])
            elif isinstance(env.get(v), float):
                args.append(("const", env[v]))
            else:
                raise OpDiagnosticError(op, f"'{inner.name}' reads a value from outside the "
                                            "body that is not a scalar constant")
        trees[inner.results[0]] = (kind, *args)
    raise OpDiagnosticError(op, "linalg.generic body without linalg.yield")


def _sigmoid_of(t: tuple) -> tuple | None:
    """x if `t` is 1 / (1 + exp(-x)) (either operand order of the add)."""
    if t[0] != "div" or t[1] != ("const", 1.0):
        return None
    den = t[2]
    if den[0] != "add":
        return None
    for e, one in ((den[1], den[2]), (den[2], den[1])):
        if one == ("const", 1.0) and e[0] == "exp" and e[1][0] == "neg":
            return e[1][1]
    return None


def _match_functions(t: tuple) -> tuple:
    """Rewrite the sigmoid and silu idioms of an expression tree into calls."""
    if t[0] in ("in", "const"):
        return t
    x = _sigmoid_of(t)
    if x is not None:
        return ("sigmoid", _match_functions(x))
    if t[0] == "div" and t[2][0] == "add":  # x / (1 + exp(-x))
        den = t[2]
        for e, one in ((den[1], den[2]), (den[2], den[1])):
            if one == ("const", 1.0) and e[0] == "exp" and e[1][0] == "neg" and e[1][1] == t[1]:
                return ("silu", _match_functions(t[1]))
    sub = tuple(_match_functions(s) for s in t[1:])
    if t[0] == "mul":
        for a, b in (sub, sub[::-1]):
            if b[0] == "sigmoid" and b[1] == a:
                return ("silu", a)
    return (t[0], *sub)


def _definer(v: SSAValue) -> str:
    owner = v.owner
    return f"'{owner.name}'" if isinstance(owner, Operation) else "a block argument"


def recognize(fn: func.FuncOp) -> Function:
    """The tensor DAG of `fn` (located errors for what is not supported)."""
    return _Recognizer(fn).run()
