"""Execute a tensor-level function: host ops in numpy, accelerator parts on ILAs.

`run_function(module, name, inputs, backend)` interprets `func.func @name`.
With `backend="ila"`, `ila.invoke`, `ila.store/compute/load` chains and
`ila.fragment`s run on the FlexASR / VTA / HLSCNN simulators; with
`backend="reference"` every accelerator function is its float32 numpy meaning.
It returns the results and `Stats` (invocations per target, MMIO counts).
Every other op means what the op-semantics table says (`dialects/semantics`,
the table isel-verify proves with too) over `NumpyDomain`; `Interpreter`
subclasses the table with the accelerator ops, which run on the simulators.

Example::

    outs, stats = run_function(module, "maxpool", [x], backend="ila")
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, ShapedType
from xdsl.ir import Block, Operation, SSAValue

from steplus.passes.isel.opcheck import op_problem
from steplus.dialects import ila
from steplus.dialects.semantics import (NumpyDomain, SemanticsError, TensorSemantics, accelerator_attrs, impl,
                                        register_semantics, result_shape)
from steplus.runtime.ila.accel import reference, run_accel
from steplus.runtime.ila.core import IlaError
from steplus.utils.attrs import shape_of


@dataclass
class Stats:
    """Accelerator invocations per target, and MMIO counts per `target.kind` (writes, reads, waits)."""

    invocations: Counter[str] = field(default_factory=Counter)
    mmio: Counter[str] = field(default_factory=Counter)

    def add(self, target: str, counts: dict[str, int]) -> None:
        for k, v in counts.items():
            self.mmio[f"{target}.{k}"] += v


@dataclass
class _Acc:
    """An accelerator-resident value: a stored host tensor or a computation."""

    target: str
    callee: str | None
    args: list[Any]
    attrs: dict[str, Any]


# the largest tensor one op may produce (elements); bounds what a program's types can make step-run allocate
MAX_RESULT_ELEMENTS = 1 << 27
_NUMPY_ERRORS = (ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, OverflowError,
                 FloatingPointError, MemoryError)


def _check_result_sizes(op: Operation) -> None:
    for r in op.results:
        shape = r.type.get_shape() if isinstance(r.type, ShapedType) else ()
        size = math.prod(max(d, 0) for d in shape)  # Python ints: exact, and ~20x cheaper than np.prod per op
        if size > MAX_RESULT_ELEMENTS:
            raise IlaError(f"step-run: '{op.name}' result has {size:.0f} elements, more than step-run's "
                           f"limit of {MAX_RESULT_ELEMENTS} per tensor", op)


@register_semantics
class Interpreter(TensorSemantics):
    """The numpy meaning of the tensor-op table plus the accelerator ops: `ila.invoke`,
    `ila.store/compute/load` chains and `ila.fragment`s run on the ILA simulators (`backend="ila"`)
    or as their float32 references (`backend="reference"`)."""

    max_elements = MAX_RESULT_ELEMENTS

    def __init__(self, backend: str = "ila"):
        if backend not in ("ila", "reference"):
            raise ValueError(backend)
        super().__init__(NumpyDomain())
        self.backend = backend
        self.stats = Stats()

    # -- accelerator parts ---------------------------------------------------
    def accelerator(self, callee: str, args: list[Any], attrs: dict[str, Any]) -> np.ndarray:
        """Run accelerator function `callee` (counted in `stats`)."""
        target = callee.split(".")[0]
        self.stats.invocations[target] += 1
        if self.backend == "reference":
            return reference(callee, args, attrs)
        y, counts = run_accel(callee, args, attrs)
        self.stats.add(target, counts)
        return y

    def force(self, acc: _Acc) -> np.ndarray:
        if acc.callee is None:
            return acc.args[0]
        chain, cur = [], acc
        while cur.callee in ("flexasr.maxpool", "flexasr.meanpool") and len(chain) < 64:
            chain.append(cur.callee)
            cur = cur.args[0]
        if chain and cur.callee is None and len(set(chain)) == 1 and self.backend == "ila":
            # one fragment: store once, pool len(chain) times in place, load once
            self.stats.invocations["flexasr"] += len(chain)
            y, counts = run_accel(chain[0], [cur.args[0]], {"pools": len(chain)})
            self.stats.add("flexasr", counts)
            return y
        return self.accelerator(acc.callee, [self.force(a) for a in acc.args], acc.attrs)

    @impl(ila.StoreOp)
    def store(self, op: ila.StoreOp, a: list[Any]) -> list[Any]:
        return [_Acc(op.res.type.target.data, None, [a[0]], {})]

    @impl(ila.ComputeOp)
    def compute(self, op: ila.ComputeOp, a: list[Any]) -> list[Any]:
        return [_Acc(op.res.type.target.data, op.callee.data, list(a), accelerator_attrs(op))]

    @impl(ila.LoadOp)
    def load(self, op: Operation, a: list[Any]) -> list[Any]:
        return [np.asarray(self.force(a[0]), np.float32).reshape(result_shape(op))]

    @impl(ila.FragmentOp)
    def fragment(self, op: Operation, a: list[Any]) -> list[Any]:
        from steplus.runtime.ila.fragments import run_fragment

        return run_fragment(self, op, a)

    # -- ops -------------------------------------------------------------------
    def eval_op(self, op: Operation, args: list[Any]) -> list[Any]:
        """`eval`, with any failure turned into an IlaError naming (and located at) `op`."""
        _check_result_sizes(op)
        problem = op_problem(op)
        if problem is not None:
            raise IlaError(f"step-run: '{op.name}': {problem}", op)
        try:
            return self.apply(op, args)
        except SemanticsError as e:
            raise IlaError(f"step-run: {e.message}", e.op or op) from None
        except IlaError as e:
            if e.op is None:
                e.op = op
            raise
        except _NUMPY_ERRORS as e:
            raise IlaError(f"step-run: cannot evaluate '{op.name}': {e}", op) from None

    def run_block(self, block: Block, env: dict[SSAValue, Any]) -> list[Any]:
        """Evaluate `block`; the operands of its terminator (`func.return`, `ila.yield`), or []."""
        outs = super().run_block(block, env)
        return [] if outs is None else outs


def run_function(module: ModuleOp, name: str, inputs: Sequence[Any], backend: str = "ila") -> tuple[list[Any], Stats]:
    """Run `func.func @name` on numpy inputs; return (outputs, Stats)."""

    fn = next((f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)
    if fn is None:  # the first such function: the walk stops there instead of visiting every op
        raise IlaError(f"no function @{name}")
    block = fn.body.blocks[0]
    if len(inputs) != len(block.args):
        raise IlaError(f"@{name} takes {len(block.args)} inputs, got {len(inputs)}")
    env: dict[SSAValue, Any] = {}
    for arg, x in zip(block.args, inputs):
        if not isinstance(arg.type, ShapedType):
            raise IlaError(f"@{name}: input {arg.index} is a {arg.type}, not a tensor")
        want = shape_of(arg)
        got = tuple(np.shape(x))
        if len(got) != len(want) or any(w >= 0 and g != w for g, w in zip(got, want)):
            raise IlaError(f"@{name}: input {arg.index} has shape {np.shape(x)}, expected {want}")
        env[arg] = np.asarray(x, np.float32)
    interp = Interpreter(backend)
    return interp.run_block(block, env), interp.stats


def random_argument(rng: np.random.Generator, shape: tuple[int, ...], position: int) -> np.ndarray:
    """A random float32 argument: the first (data) ~ N(0, 1), the later ones
    (parameters) ~ N(0, 1/fan_in) with fan_in the product of all but the first dim.

    Example: `[random_argument(rng, (16, 64), k) for k in range(2)]`."""
    fan_in = int(np.prod(shape[1:])) if position and len(shape) > 1 else 1
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def random_arguments(module: ModuleOp, name: str, seed: int = 0) -> list[np.ndarray]:
    """`random_argument` for every argument of `func.func @name` in `module`."""
    fn = next(f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    rng = np.random.default_rng(seed)
    return [random_argument(rng, shape_of(a), k)
            for k, a in enumerate(fn.body.blocks[0].args)]
