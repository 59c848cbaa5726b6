"""Recognition: a `func.func` on tensors -> a small DAG of tensor nodes.

Tensors of rank 1 to 3 are held in an internal shape `(M, N)` or `(Bt, M, N)`
(the off-chip tensor row-major, seen as `Bt * M` rows of `N`): a 1-D
argument is a row `(1, N)`, a row reduction's result a column `(M, 1)`.

Accepted (everything else is a located error naming the op):

- `tensor.empty`, `linalg.fill` of a scalar `arith.constant` (inits);
- tensor constants (`dense`, `dense_resource`: torch-mlir's parameters):
  off-chip tensors, arguments numbered after the function's own, their values
  in `Function.constants`; one of equal values is also a fill as an init;
- a fill or a constant of equal values read as data by an element-wise
  `linalg.generic` is a scalar of its body (`max(x, zeros)` ->
  `max_scalar[0.0]`): neither loaded nor streamed;
- `linalg.matmul` (also with the transposed-B `indexing_maps`),
  `linalg.matmul_transpose_b`, `linalg.batch_matmul`,
  `linalg.batch_matmul_transpose_b` into a zero fill; the right operand is a
  function argument (a weight, read transposed for the `_transpose_b` forms);
- `linalg.transpose` (the last two dims) or a transposing `linalg.generic` of
  a function argument (a weight read transposed: `matmul_t`);
- element-wise `linalg.generic`s (all "parallel") whose body maps onto the
  step function library (`body.py`: add, sub, mul, div, max, neg, exp,
  rsqrt, square, silu, scalar operations); inputs broadcast along rows (a
  `[N]` argument, map `(d0, d1) -> (d1)`), columns (a row reduction's `[M]`
  or `[M, 1]`, map `(d0, d1) -> (d0)` or `(d0, 0)`) or the batch (`(d1, d2)`);
- row reductions: a `linalg.generic` with the last dim "reduction" whose body
  is `addf(in, out)` into a zero fill (sum) or `maximumf(in, out)` into a
  -inf fill (max; torch's max-with-index form when the index is unused);
- `tensor.collapse_shape`/`expand_shape`: any of a function argument (a
  view of row-major memory); of a computed tensor, the ones that keep the
  tiling expressible: adding or dropping a unit dim of a column or a row,
  merging the batch into the rows, splitting the rows into a batch.

Example: torch-mlir's SwiGLU FFN gives `Matmul(arg0, arg1)`,
`Ewise("silu", [that])`, `Matmul(arg0, arg2)`, `Ewise("mul", ...)`, and
`Matmul(mul, arg3)` returned; its RMSNorm `Ewise("square")`,
`Reduce("row_sum")`, `Ewise("div_scalar[16.0]")`, `Ewise("add_scalar[...]")`,
`Ewise("rsqrt")`, `Ewise("mul")` (column broadcast), `Ewise("mul")` (row
broadcast of the weight).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr, AnyFloat, FloatAttr, IntegerAttr, TensorType, f32,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

from steplus.dialects.step.functions import get_function
from steplus.lowering.linalg_to_step.body import body_tree, match_functions
from steplus.lowering.linalg_to_step.constants import tensor_values
from steplus.utils.diagnostics import OpDiagnosticError

SUPPORTED = ("tensor.empty, linalg.fill, linalg.matmul, linalg.matmul_transpose_b, "
             "linalg.batch_matmul, linalg.transpose, element-wise and row-reduction "
             "linalg.generic, tensor.collapse_shape, tensor.expand_shape")
MATMULS = {"linalg.matmul": (2, False), "linalg.matmul_transpose_b": (2, True),
           "linalg.batch_matmul": (3, False), "linalg.batch_matmul_transpose_b": (3, True)}
REDUCE = {"add": ("row_sum", "add", "zero", 0.0), "max": ("row_max", "max", "neg_inf",
                                                           float("-inf"))}


@dataclass(eq=False)
class Node:
    """A tensor value of the function.

    kind: "arg" (function argument `index`, possibly a view: `transposed`, or
    another shape), "matmul" (`inputs` = [a, b]; `transpose_b`: b is read
    transposed), "ewise" (`fn` over `inputs`, broadcast per input in
    `bcast`: "full", "row", "col", "batch"), "reduce" (`fn` the row function,
    `combine` the accumulation), "view" (`fn` "same", "flatten" or "split" of
    its input), "sigmoid" (completed into silu by a following x * sigmoid(x), else
    the library's `sigmoid`: emit makes it element-wise), "init" (empty/filled).
    `shape` is the internal shape (see the module doc); `col`: a column."""

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
    col: bool = False
    bcast: list[str] = field(default_factory=list)
    combine: str = ""
    init: str = ""
    fill: float = 0.0  # "init": the fill value
    tensor: tuple[int, ...] = ()  # the MLIR tensor shape

    @property
    def batch(self) -> int | None:
        return self.shape[0] if len(self.shape) == 3 else None

    @property
    def rows(self) -> int:
        return self.shape[-2]

    @property
    def cols(self) -> int:
        return self.shape[-1]


@dataclass
class Function:
    """The recognized function: arguments, nodes in program order, results.
    `args` ends with the tensor constants (off-chip tensors, `constants`: their
    values by argument index; see `constants.py`)."""

    op: func.FuncOp
    args: list[Node]
    nodes: list[Node]
    results: list[Node]
    constants: dict = field(default_factory=dict)


def tensor_shape(t: Attribute, op: Operation, what: str, any_element: bool = False
                 ) -> tuple[tuple[int, ...], Attribute]:
    """The static shape (rank 1..3) and float element type of a tensor type
    (`any_element`: an integer init, e.g. the unused index of a max reduction)."""
    if not isinstance(t, TensorType):
        raise OpDiagnosticError(op, f"{what} is {t}, not a ranked tensor: "
                                    "convert-linalg-to-step lowers functions on tensors")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise OpDiagnosticError(op, f"{what} has a dynamic shape {t}: convert-linalg-to-step "
                                    "needs static shapes (the tiling cannot express '?')")
    if not 1 <= len(shape) <= 3:
        raise OpDiagnosticError(op, f"{what} is {t}: only tensors of rank 1 to 3 are "
                                    "supported (rows, columns and one batch dim)")
    if not isinstance(t.get_element_type(), AnyFloat) and not any_element:
        raise OpDiagnosticError(op, f"{what} is {t}: convert-linalg-to-step lowers "
                                    "floating-point tensors (tiles compute in f32)")
    return shape, t.get_element_type()


def internal(shape: tuple[int, ...], col: bool = False) -> tuple[int, ...]:
    """The internal shape of a tensor shape (a 1-D tensor: a row, or a column)."""
    if len(shape) == 1:
        return (shape[0], 1) if col else (1, shape[0])
    return shape


def _dims(m: Attribute) -> list[int | str] | None:
    """A map's results as dim positions, "0" for a constant 0; None otherwise."""
    if not isinstance(m, AffineMapAttr) or m.data.num_symbols:
        return None
    out: list[int | str] = []
    for e in m.data.results:
        if isinstance(e, AffineDimExpr):
            out.append(e.position)
        elif isinstance(e, AffineConstantExpr) and e.value == 0:
            out.append("0")
        else:
            return None
    return out


def _bcast_kind(dims: list, rank: int) -> str | None:
    """How an input indexed by `dims` broadcasts over a `rank`-D parallel space."""
    full = list(range(rank))
    if dims == full:
        return "full"
    if rank >= 2 and dims in ([rank - 1], ["0", rank - 1]):
        return "row"
    if rank >= 2 and dims in (full[:-1], full[:-1] + ["0"]):
        return "col"
    if rank == 3 and dims == [1, 2]:
        return "batch"
    return None


def _transposed_b_maps(op: Operation) -> bool | None:
    """linalg.matmul's indexing_maps: False (C = A B), True (C = A B^T), None (other)."""
    maps = getattr(op, "indexing_maps", None)
    if maps is None:
        return False
    got = [_dims(m) for m in maps.data]
    if got == [[0, 2], [2, 1], [0, 1]]:
        return False
    if got == [[0, 2], [1, 2], [0, 1]]:
        return True
    return None


class _Recognizer:
    def __init__(self, fn: func.FuncOp, lookup=None):
        self.fn = fn
        self.env: dict[SSAValue, Node | float] = {}
        self.nodes: list[Node] = []
        self.matmuls = 0
        self.lookup = lookup or (lambda key: None)
        self.const_args: list[Node] = []
        self.constants: dict = {}
        self.splats: dict[Node, Node] = {}  # a constant of equal values -> its fill

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
            shape, dt = tensor_shape(a.type, fn, f"argument {i}")
            n = Node("arg", internal(shape), dt, fn, index=i, tensor=shape)
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
        return Function(fn, args + self.const_args, self.nodes, results, self.constants)

    def stored(self, v: SSAValue, op: Operation) -> Node:
        n = self.node(v, op)
        while n.kind == "view" and n.fn == "same":
            n = n.inputs[0]
        if n.kind in ("arg", "init"):
            raise OpDiagnosticError(op, f"a returned {n.kind} tensor is not computed by a "
                                        "matmul, an element-wise op or a reduction: nothing "
                                        "to stream")
        return n

    def add(self, op: Operation, n: Node) -> None:
        self.env[op.results[0]] = n
        self.nodes.append(n)

    def visit(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            v = op.value
            if not isinstance(v, (FloatAttr, IntegerAttr)):
                self.constant(op)
                return
            self.env[op.result] = float(v.value.data)
        elif isinstance(op, tensor.EmptyOp):
            shape, dt = tensor_shape(op.tensor.type, op, "tensor.empty", any_element=True)
            self.env[op.tensor] = Node("init", internal(shape), dt, op, fn="empty",
                                       tensor=shape)
        elif isinstance(op, linalg.FillOp):
            val = self.env.get(op.inputs[0])
            if not isinstance(val, float):
                raise OpDiagnosticError(op, "linalg.fill of a value that is not a scalar "
                                            "arith.constant")
            shape, dt = tensor_shape(op.res[0].type, op, "linalg.fill", any_element=True)
            self.env[op.res[0]] = Node("init", internal(shape), dt, op,
                                       fn="zero" if val == 0 else "fill", fill=val,
                                       tensor=shape)
        elif op.name in MATMULS:
            self.matmul(op)
        elif isinstance(op, linalg.TransposeOp):
            perm = list(op.permutation.get_values())
            rank = len(perm)
            self.transpose(op, op.inputs[0], perm == list(range(rank - 2)) + [rank - 1, rank - 2])
        elif isinstance(op, linalg.GenericOp):
            self.generic(op)
        elif isinstance(op, (tensor.CollapseShapeOp, tensor.ExpandShapeOp)):
            self.reshape(op)
        else:
            raise OpDiagnosticError(op, f"'{op.name}' is not supported by convert-linalg-to-step "
                                        f"(supported: {SUPPORTED})")

    def constant(self, op: arith.ConstantOp) -> None:
        """A tensor constant: an off-chip tensor numbered after the arguments, its
        values carried; equal values also make it a fill where it initializes."""

        values = tensor_values(op, self.lookup)
        if isinstance(op.result.type, TensorType) and not op.result.type.get_shape():
            self.env[op.result] = float(values)  # a 0-D tensor: a scalar (torch-mlir's clamp)
            return
        shape, dt = tensor_shape(op.result.type, op, "a tensor constant")
        index = len(self.fn.body.block.args) + len(self.const_args)
        arg = Node("arg", internal(shape), dt, op, index=index, tensor=shape)
        self.const_args.append(arg)
        self.constants[index] = values
        self.env[op.result] = arg
        if values.size and bool((values == values.flat[0]).all()):
            c = float(values.flat[0])
            self.splats[arg] = Node("init", internal(shape), dt, op, fn="zero" if c == 0
                                    else "fill", fill=c, tensor=shape)

    def matmul(self, op: Operation) -> None:
        rank, trans = MATMULS[op.name]
        ins, outs = list(op.operands[:-1]), list(op.operands[-1:])
        if len(op.operands) != 3 or len(op.results) != 1:
            raise OpDiagnosticError(op, f"{op.name} with other than 2 inputs and 1 init")
        if op.name == "linalg.matmul":
            trans = _transposed_b_maps(op)
            if trans is None:
                raise OpDiagnosticError(op, "linalg.matmul with indexing_maps other than "
                                            "C = A B or C = A B^T is not supported")
        a, b = (self.node(v, op) for v in ins)
        init = self.node(outs[0], op)
        init = self.splats.get(init, init)
        if init.kind != "init" or init.fn != "zero":
            raise OpDiagnosticError(op, f"{op.name} accumulates into a tensor that is not a "
                                        "zero linalg.fill: only C = A B is supported")
        shape, _dt = tensor_shape(op.results[0].type, op, f"{op.name} result")
        for x, what in ((a, "left"), (b, "right"), (init, "init")):
            if len(x.tensor) != rank:
                raise OpDiagnosticError(op, f"{op.name}: the {what} operand is "
                                            f"{len(x.tensor)}-D, expected {rank}-D")
        if a.kind == "arg" and a.transposed:
            raise OpDiagnosticError(op, f"a transposed left operand of {op.name} is not "
                                        "supported (only the right one, as matmul_t)")
        if trans:  # the logical right operand: b read transposed
            if b.kind != "arg":
                raise OpDiagnosticError(op, f"{op.name}: the right operand must be a function "
                                            "argument (a weight read transposed)")
            b = Node("arg", (*b.shape[:-2], b.shape[-1], b.shape[-2]), b.dtype, op,
                     index=b.index, transposed=not b.transposed, tensor=b.tensor)
        n = Node("matmul", shape, f32, op, [a, b], transpose_b=b.transposed,
                 number=self.matmuls, tensor=shape)
        self.matmuls += 1
        self.add(op, n)

    def transpose(self, op: Operation, src: SSAValue, ok: bool) -> None:
        x = self.node(src, op)
        if not ok:
            raise OpDiagnosticError(op, "only a transpose of the last two dims is supported")
        if x.kind != "arg" or x.transposed or len(x.tensor) < 2:
            raise OpDiagnosticError(op, "only a function argument of rank 2 or 3 can be "
                                        "transposed (it is read transposed by the matmul that "
                                        "uses it)")
        shape = (*x.shape[:-2], x.shape[-1], x.shape[-2])
        self.add(op, Node("arg", shape, x.dtype, op, index=x.index, transposed=True,
                          tensor=shape))

    def reshape(self, op: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> None:
        x = self.node(op.src, op)
        shape, dt = tensor_shape(op.result.type, op, f"{op.name} result")
        if x.kind == "arg":
            if x.transposed:
                raise OpDiagnosticError(op, f"{op.name} of a transposed argument is not "
                                            "supported")
            self.add(op, Node("arg", internal(shape), x.dtype, op, index=x.index,
                              tensor=shape, col=x.col))
            return
        if x.kind in ("init", "sigmoid"):
            raise OpDiagnosticError(op, f"{op.name} of a {x.kind} tensor is not supported")
        new = internal(shape, col=x.col)
        if new == x.shape:
            fn = "same"
        elif len(x.shape) == 3 and new == (x.shape[0] * x.shape[1], x.shape[2]):
            fn = "flatten"
        elif len(new) == 3 and x.shape == (new[0] * new[1], new[2]):
            fn = "split"
        else:
            raise OpDiagnosticError(op, f"{op.name} of a computed {_show(x.tensor)} into "
                                        f"{_show(shape)} changes the tiling: only unit dims, "
                                        "merging the batch into the rows and splitting rows "
                                        "into a batch are supported (reshape arguments "
                                        "instead: they are views of memory)")
        self.add(op, Node("view", new, x.dtype, op, [x], fn=fn, col=x.col, tensor=shape))

    def generic(self, op: linalg.GenericOp) -> None:
        maps = [_dims(m) for m in op.indexing_maps.data]
        iters = [str(t.data) for t in op.iterator_types.data]
        rank = len(iters)
        body = list(op.body.block.ops)
        if (len(op.inputs) == 1 and len(op.outputs) == 1 and rank in (2, 3)
                and maps[1] == list(range(rank))
                and maps[0] == list(range(rank - 2)) + [rank - 1, rank - 2]
                and len(body) == 1 and body[0].operands[0] is op.body.block.args[0]):
            self.transpose(op, op.inputs[0], True)
            return
        if any(m is None for m in maps):
            raise OpDiagnosticError(op, "linalg.generic with indexing maps that are not "
                                        "projections (strides, offsets) is not supported")
        maps = [m for m in maps if m is not None]  # all of them (for the type checker)
        if iters[:-1] and any("reduction" in t for t in iters[:-1]) or not iters:
            raise OpDiagnosticError(op, "only reductions over the last dim are supported "
                                        "(row sums and row maxima)")
        if "reduction" in iters[-1]:
            self.reduction(op, maps, rank)
            return
        if len(op.outputs) != 1:
            raise OpDiagnosticError(op, "linalg.generic with several results is not supported")
        if maps[-1] != list(range(rank)):
            raise OpDiagnosticError(op, "an element-wise linalg.generic must write its whole "
                                        "output (identity output map)")
        # a scalar input (a 0-D tensor constant, map `-> ()`) is a constant of the body;
        # so is a tensor of one value read as data (a splat constant, a linalg.fill): no
        # tile stream, no load (`x + zeros` -> `add_scalar[0.0]`)
        scalars = {i: c for i, v in enumerate(op.inputs)
                   if isinstance(c := self.env.get(v), float) and maps[i] == []}
        for i, v in enumerate(op.inputs):
            if i not in scalars and isinstance(n := self.env.get(v), Node):
                fill = self.splats.get(n, n)
                if fill.kind == "init" and fill.fn in ("zero", "fill"):
                    scalars[i] = fill.fill
        ins = [self.node(v, op) for i, v in enumerate(op.inputs) if i not in scalars]
        kinds = []
        for x, m in zip(ins, [m for i, m in enumerate(maps[:-1]) if i not in scalars]):
            k = _bcast_kind(m, rank)
            if k is None or (x.kind != "arg" and (k in ("row", "batch") or
                                                  k == "col" and not x.col)):
                what = "" if k is None else " of a computed tensor"
                raise OpDiagnosticError(op, f"input map {op.indexing_maps.data[len(kinds)]} is "
                                            f"not a broadcast the tiling can express{what} "
                                            "(rows of a [N] argument, columns of a row "
                                            "reduction, the batch of an argument)")
            kinds.append(k)
        shape, dt = tensor_shape(op.results[0].type, op, "linalg.generic result")
        col = any(x.col for x, k in zip(ins, kinds) if k == "full" and x.kind != "arg")
        (tree,) = body_tree(op, self.env, consts=scalars)
        if scalars:  # renumber the tensor inputs past the scalars
            pos = [i for i in range(len(op.inputs)) if i not in scalars]
            tree = _renumber(tree, {old: new for new, old in enumerate(pos)})
        self.env[op.results[0]] = self.lower_tree(op, match_functions(tree, op), ins, kinds,
                                                  internal(shape, col), dt, shape, col)

    def reduction(self, op: linalg.GenericOp, maps: list, rank: int) -> None:
        if len(op.inputs) != 1 or maps[0] != list(range(rank)):
            raise OpDiagnosticError(op, "a reduction linalg.generic must read one tensor "
                                        "whole (identity input map)")
        if rank == 1:
            raise OpDiagnosticError(op, "a reduction to a scalar (0-D tensor) is not supported")
        if maps[1] not in (list(range(rank - 1)), list(range(rank - 1)) + ["0"]):
            raise OpDiagnosticError(op, "a reduction must write one value per row (output "
                                        "map (d0, ..) or (d0, .., 0))")
        if len(op.outputs) == 2 and op.results[1].uses:
            raise OpDiagnosticError(op, "the index result of a max reduction (argmax) is used: "
                                        "not supported (only the values)")
        if len(op.outputs) not in (1, 2):
            raise OpDiagnosticError(op, "linalg.generic with several results is not supported")
        (tree,) = body_tree(op, self.env)
        kind = tree[0]
        if kind not in REDUCE or sorted(tree[1:]) != [("in", 0), ("out", 0)]:
            raise OpDiagnosticError(op, "a reduction body must be addf(in, out) (a row sum) "
                                        "or maximumf(in, out) (a row max)")
        fn, combine, init_fn, identity = REDUCE[kind]
        x = self.node(op.inputs[0], op)
        init = self.node(op.outputs[0], op)
        init = self.splats.get(init, init)
        if init.kind != "init" or init.fn == "empty" or init.fill != identity:
            raise OpDiagnosticError(op, f"a row {'sum' if kind == 'add' else 'max'} must start "
                                        f"from a linalg.fill of {identity} (its identity)")
        if x.kind in ("init", "sigmoid"):
            raise OpDiagnosticError(op, f"reduction of a {x.kind} tensor")
        if x.col:
            raise OpDiagnosticError(op, "reduction of a column (one value per row) is not "
                                        "supported")
        shape, dt = tensor_shape(op.results[0].type, op, "linalg.generic result")
        self.add(op, Node("reduce", (*x.shape[:-1], 1), f32, op, [x], fn=fn, combine=combine,
                          init=init_fn, col=True, tensor=shape))

    def lower_tree(self, op: Operation, t: tuple, ins: list[Node], kinds: list[str], shape,
                   dt, tshape, col: bool) -> Node:
        """An expression tree over block arguments -> nodes (library functions)."""
        kind = t[0]
        if kind == "in":
            x = ins[t[1]]
            if kinds[t[1]] != "full" or x.shape != shape:
                raise OpDiagnosticError(op, "an element-wise op that yields a broadcast input "
                                            "unchanged is not supported")
            return x
        if kind == "out":
            raise OpDiagnosticError(op, "an element-wise linalg.generic reads its output "
                                        "(an accumulation): not supported")
        if kind == "const":
            raise OpDiagnosticError(op, f"an element-wise op yields the constant {t[1]:g} "
                                        "(no constant tiles: use linalg.fill)")
        subs, sub_kinds = [], []
        for s in t[1:]:
            if s[0] == "in":
                subs.append(ins[s[1]])
                sub_kinds.append(kinds[s[1]])
            else:
                subs.append(self.lower_tree(op, s, ins, kinds, shape, dt, tshape, col))
                sub_kinds.append("full")
        if kind == "sigmoid":  # completed into silu by a following x * sigmoid(x)
            return self.new(Node("sigmoid", shape, dt, op, subs, bcast=sub_kinds, col=col,
                                 tensor=tshape))
        if kind == "mul" and len(subs) == 2:
            for x, s in (subs, subs[::-1]):
                if s.kind == "sigmoid" and s.inputs[0] is x:
                    return self.new(Node("ewise", shape, dt, op, [x], fn="silu",
                                         bcast=["full"], col=col, tensor=tshape))
        f = get_function(kind)
        if f is None or f.arity != len(subs) or f.arity == 0:
            raise OpDiagnosticError(op, f"element-wise '{kind}' has no step library function")
        if any(s.kind == "init" for s in subs):
            raise OpDiagnosticError(op, "an element-wise op reads an uninitialized "
                                        "tensor.empty")
        if all(k != "full" for k in sub_kinds):
            raise OpDiagnosticError(op, "an element-wise op needs one input of its full "
                                        "shape (every input is broadcast)")
        return self.new(Node("ewise", shape, dt, op, subs, fn=kind, bcast=sub_kinds, col=col,
                             tensor=tshape))

    def new(self, n: Node) -> Node:
        self.nodes.append(n)
        return n


def _renumber(t: tuple, index: dict[int, int]) -> tuple:
    """An expression tree with its `("in", i)` leaves renumbered (trees are at most
    `body.MAX_DEPTH` deep)."""
    if t[0] == "in":
        return ("in", index[t[1]])
    if t[0] in ("out", "const"):
        return t
    return (t[0], *(_renumber(s, index) for s in t[1:]))


def _show(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _definer(v: SSAValue) -> str:
    owner = v.owner
    return f"'{owner.name}'" if isinstance(owner, Operation) else "a block argument"


def recognize(fn: func.FuncOp, lookup=None) -> Function:
    """The tensor DAG of `fn` (located errors for what is not supported); `lookup`
    gives a `dense_resource` blob by key (`constants.resource_lookup(ctx)`)."""
    return _Recognizer(fn, lookup).run()
