"""`isel-verify`: prove with z3 that isel's result equals the input program.

For every function, the pass runs `isel` (same options) on a copy, evaluates
both versions symbolically (`symbolic`) on the function's (small) shapes and
asks z3 for an input on which some output element differs (`solve`: one
bounded query per differing output, α-equivalent queries asked once).
`unsat` proves the mapping; a counterexample is an error located at the
function.  Arithmetic is
abstracted by uninterpreted functions (`arith=uf`, the default: FlexASR and
HLSCNN numerics; sigmoid, tanh, exp, reciprocal, rsqrt and subtraction are
uninterpreted functions too, so the fused FlexASR mappings — LSTM cell, layer
norm, attention — are proved up to associativity and commutativity of + and
commutativity of ·; torch's sigmoid `1/(1+exp(-x))` is the `sigmoid` the LSTM
specification applies, the same uninterpreted function on both sides) or exact
32-bit bit-vectors (`arith=bv`, VTA integers).  With `lstm=sequence` (the
default, as `isel`) the proof is of the whole-sequence FlexASR LSTM calls.

Options (besides isel's `targets`, `mode`, `iterations`, `node-limit`, `time-limit`):

- `timeout-ms` (60000): time budget of one function: isel on the copy (which
  stops by its own limits, so the proof is of the selection `isel` makes), the
  symbolic evaluation (it checks the clock
  every 16384 terms) and the z3 queries (none starts, or runs, past it).  When
  it runs out the result is the warning "not proven within timeout-ms=N (the
  time ran out while evaluating the input program symbolically, op 3 of 24
  ('linalg.conv_2d_nchw_fchw') | with K of the M outputs that differ as terms
  checked)", exit 0.  A proof that runs longer than 10 s prints a progress
  line on stderr every 10 s (`isel-verify: @f: progress after 20 s: ...`);
- `memory-mb` (2048): z3's memory ceiling (`memory_max_size`, counting all
  of z3's memory, the terms of the symbolic evaluation included) while it solves;
- `max-terms` (2000000): refuse, with an error at the function naming this
  option, a function whose symbolic evaluation is estimated to build more z3
  terms (input elements, plus per op its result elements × the terms each
  one needs, e.g. 2·k for a k-long dot product, 2·16 for a 4x4 max-pool
  window; about 1 KB of memory each), before building any of them.

Outcomes: `unsat` is a remark; `sat` is an error ("selected program differs
from the input"); `unknown` (time or memory ran out, or z3 gave up) is a
*warning* "could not prove equivalence (z3: unknown, REASON)" and does not
fail the pipeline (exit 0): nothing was shown wrong, the proof is just missing.
So is a `sat` whose terms use uninterpreted functions that no accelerator
specification is written with (`fdiv`, `fpow`, `neg`, ... from a frontend's
`x / n` where the spec multiplies by `1/n`): the two programs differ as terms,
which says nothing about their values.

Example:

```
step-opt -p 'isel-verify{targets=flexasr}' small_maxpool.mlir
small_maxpool.mlir:2:1: remark: isel-verify: @f: 2 invocations (flexasr=2) equivalent to the input on all 16 outputs (z3: unsat)
```
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
import z3
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ShapedType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from steplus.utils.diagnostics import OpDiagnosticError, emit
from steplus.passes.isel import (LSTM_FORMS, TIME_LIMIT, Limits, check_limits, check_mode, parse_targets,
                                  release_egraphs, select_function)
from steplus.passes.isel.lstm_fold import fold_lstm_steps
from steplus.passes.isel import symbolic as S
from steplus.dialects.ila import InvokeOp
from steplus.dialects.semantics import SemanticsError, TensorSemantics, register_semantics
from steplus.passes.isel.opcheck import check_ops
from steplus.passes.isel.solve import Verdict, check_outputs
from steplus.utils.attrs import int_prop, shape_of
from steplus.utils.layouts import map_dims


@register_semantics
class SymbolicSemantics(TensorSemantics):
    """The op-semantics table over z3 terms; `ila.invoke` means its accelerator's abstract spec."""

    def __init__(self, ctx: S.Ctx, label: str = "program"):
        super().__init__(S.SymbolicDomain(ctx))
        self.label, self.fn, self.where = label, None, ""

    def _locate(self, op: Operation) -> None:
        """Remember the function-level op being evaluated (for progress and time-out messages)."""
        if self.fn is not None and op.parent_op() is self.fn:
            block = self.fn.body.blocks[0]
            self.where = (f"evaluating the {self.label} symbolically, op {block.get_operation_index(op) + 1} of "
                          f"{len(block.ops)} ('{op.name}')")

    def accelerator(self, callee: str, args: list, attrs: dict) -> np.ndarray:
        try:
            return S.accel_spec(callee, args, attrs)
        except NotImplementedError as e:
            raise SemanticsError(str(e)) from None

    def eval_op(self, op: Operation, args: list) -> list:
        self._locate(op)
        try:
            return self.apply(op, args)
        except SemanticsError as e:
            raise OpDiagnosticError(e.op or op, f"isel-verify: {e.message}") from None
        except (ValueError, IndexError, TypeError, KeyError, AttributeError, z3.Z3Exception) as e:
            raise OpDiagnosticError(op, f"isel-verify: cannot evaluate '{op.name}' symbolically: {e}") from None

    def run(self, fn: func.FuncOp, inputs: list) -> list:
        """The outputs of `fn` on symbolic `inputs`."""
        self.fn = fn
        block = fn.body.blocks[0]
        outs = self.run_block(block, dict(zip(block.args, inputs)))
        if outs is None:
            raise OpDiagnosticError(fn, "isel-verify: function without func.return")
        return outs


_PER_ELEMENT = {"tosa.reduce_max": 2, "tosa.reduce_sum": 1, "tosa.reduce_min": 2, "tosa.reduce_product": 1, "tosa.add": 1, "linalg.add": 1, "tosa.mul": 1,
                "tosa.sub": 1, **{k: 1 for k in ("tosa.sigmoid", "tosa.tanh", "tosa.exp", "tosa.reciprocal",
                                                 "tosa.rsqrt")}}


def _elements(v: SSAValue) -> int:
    t = v.type
    return math.prod(t.get_shape()) if isinstance(t, ShapedType) else 1


def _dims(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _invoke_terms(op: InvokeOp, out: int) -> int:
    callee, ins = op.callee.data, [_dims(v) for v in op.operands]
    if callee == "flexasr.maxpool":
        return 2 * out  # a comparison and an If per output
    if callee in ("flexasr.linear", "vta.dense") and len(ins) >= 2 and len(ins[0]) == 2:
        return 2 * out * ins[0][1]
    if callee == "hlscnn.conv2d" and len(ins) >= 2 and len(ins[1]) == 4:
        return 2 * out * math.prod(ins[1][1:])
    if callee == "flexasr.lstm" and len(ins) == 6 and len(ins[0]) == 2 and len(ins[4]) == 2:
        (t, k), n = ins[0], ins[4][1]
        return 2 * t * 4 * n * (k + n) + 12 * t * n
    if callee == "flexasr.attention" and len(ins) == 3 and len(ins[0]) == 2 and len(ins[1]) == 2:
        (tq, d), tk = ins[0], ins[1][0]
        return 4 * tq * tk * d + 4 * tq * tk
    return 8 * out + sum(math.prod(d) for d in ins)


# contractions: terms per output element are 2 x the product of these dims of operand 1 (the weights)
_CONTRACTED_WEIGHT_DIMS = {"linalg.conv_2d_nchw_fchw": slice(1, None), "linalg.conv_1d_ncw_fcw": slice(1, None),
                           "linalg.depthwise_conv_2d_nchw_chw": slice(1, None), "linalg.conv_2d_ngchw_gfchw":
                           slice(2, None), "tosa.conv2d": slice(1, None), "tosa.depthwise_conv2d": slice(0, 2),
                           "linalg.pooling_nchw_max": slice(None), "linalg.pooling_nchw_sum": slice(None)}


def _generic_terms(op: GenericOp, out: int) -> int:
    """A generic's body runs once per point of its iteration domain (all loops, reductions included)."""
    try:
        size: dict[int, int] = {}
        for v, ds in zip(op.operands, map_dims(op)):
            size |= {d: n for d, n in zip(ds, _dims(v)) if d >= 0}
        points = math.prod(size.values())
    except (ValueError, AttributeError):
        points = out
    return max(points, out) * len(op.body.block.ops)


def op_terms(op: Operation) -> int:
    """About how many z3 terms evaluating `op` symbolically builds (layout ops: their element count)."""
    out = sum(_elements(r) for r in op.results)
    n = op.name
    if n in ("linalg.matmul", "linalg.batch_matmul", "tosa.matmul"):
        return 2 * out * (_dims(op.operands[0]) or (1,))[-1]
    if n in _CONTRACTED_WEIGHT_DIMS and len(op.operands) > 1:
        return 2 * out * math.prod(_dims(op.operands[1])[_CONTRACTED_WEIGHT_DIMS[n]])
    if n in ("tosa.max_pool2d", "tosa.avg_pool2d"):
        return 2 * out * math.prod(int_prop(op, "kernel"))
    if isinstance(op, InvokeOp):
        return _invoke_terms(op, out)
    if isinstance(op, GenericOp):
        return _generic_terms(op, out)
    if n in _PER_ELEMENT:
        return _PER_ELEMENT[n] * sum(_elements(v) for v in op.operands)
    return out


def estimate_terms(fn: func.FuncOp) -> int:
    """`op_terms` summed over a function, plus one term per input element."""
    args = sum(_elements(a) for a in fn.body.blocks[0].args)
    return args + sum(op_terms(op) for op in fn.body.blocks[0].ops)  # a generic's body is in its cost


def _disequalities(ref: list[Any], sel: list[Any]) -> tuple[list[z3.BoolRef], int]:
    """One z3 disequality per output element whose two terms are not syntactically equal."""
    diffs = []
    for r, s in zip(ref, sel):
        for x, y in zip(np.asarray(r).reshape(-1), np.asarray(s).reshape(-1)):
            if x is S.PAD or y is S.PAD:
                if x is not y:
                    diffs.append(z3.BoolVal(True))  # padding leaked into an output
            elif x is not y and not z3.eq(x.t, y.t):
                diffs.append(x.t != y.t)
    return diffs, sum(np.asarray(r).size for r in ref)


@dataclass
class AbstractionGap(Verdict):
    """z3 found a counterexample, but over uninterpreted functions the accelerator specifications do
    not use (e.g. `fdiv` where a spec multiplies by an inverse): nothing is shown wrong."""


# isel-verify prints a progress line on stderr at most this often (seconds) while a proof runs
PROGRESS_S = 10.0


class Progress:
    """Progress lines `isel-verify: @f: progress after 12 s: ...` on stderr, at most every `every`
    seconds (a proof that ends sooner prints none).  The diagnostics engine prints its remarks at
    the end of the pipeline, so these are written directly."""

    def __init__(self, name: str, every: float = PROGRESS_S, stream: TextIO | None = None):
        self.name, self.every, self.stream = name, every, stream
        self.t0 = time.monotonic()
        self.next = self.t0 + every

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + self.every
        print(f"isel-verify: @{self.name}: progress after {now - self.t0:.0f} s: {text}",
              file=self.stream or sys.stderr, flush=True)


def prove(fn_ref: func.FuncOp, fn_sel: func.FuncOp, mode: str, timeout_ms: int = 60000,
          memory_mb: int = 2048, progress: Progress | None = None,
          deadline: float | None = None) -> tuple[Verdict, int]:
    """(verdict, n_outputs): `unsat` proves equality of every output element.

    `timeout_ms` budgets the whole proof (symbolic evaluation included; `deadline`, a
    `time.monotonic()` instant, overrides it): past it the verdict is `unknown` with a reason
    saying where the time ran out."""
    deadline = time.monotonic() + timeout_ms / 1000 if deadline is None else deadline
    n = sum(math.prod(t.get_shape()) for t in fn_ref.function_type.outputs.data if isinstance(t, ShapedType))
    sems: list[SymbolicSemantics] = []

    def tick(built: int) -> None:
        if progress is not None and sems:
            progress(f"{sems[-1].where}, {built} terms built")

    ctx = S.Ctx(mode, deadline, tick)
    args = fn_ref.body.blocks[0].args
    try:
        inputs = [S.tensor(ctx, a.name_hint or f"arg{a.index}", shape_of(a)) for a in args]
        sems.append(SymbolicSemantics(ctx, "input program"))
        ref = sems[-1].run(fn_ref, inputs)
        sems.append(SymbolicSemantics(ctx, "selected program"))
        sel = sems[-1].run(fn_sel, inputs)
        diffs, n = _disequalities(ref, sel)
    except S.OutOfTime:
        return Verdict("unknown", f"the time ran out while {sems[-1].where if sems else 'building the inputs'}"), n
    verdict = check_outputs(diffs, deadline, memory_mb, progress)
    if verdict.status == "unknown" and verdict.reason in ("timeout", "canceled"):
        verdict.reason = (f"the time ran out with {verdict.checked} of the {len(diffs)} outputs that differ as terms "
                          f"checked ({verdict.queries} z3 queries)")
    opaque = ctx.opaque_functions(diffs) if mode == "uf" and verdict.status == "sat" else []
    if opaque:  # a difference of abstractions, not of programs
        return AbstractionGap("unknown", f"a counterexample only under uninterpreted {', '.join(opaque)}, which "
                                         "no accelerator specification is written with", verdict.queries,
                              verdict.unknown), n
    return verdict, n


def _select_copy(fn: func.FuncOp, targets: tuple[str, ...], flexible: bool, limits: Limits,
                 fold: bool = False) -> func.FuncOp:
    """isel on a clone of `fn` (with `fold`, an LSTM's per-step calls folded as `isel{lstm=sequence}`
    does); an error on a cloned op is reported at the original op."""
    sel = fn.clone()
    originals = dict(zip(sel.walk(), fn.walk()))
    try:
        select_function(sel, targets, flexible, limits)
        if fold:
            fold_lstm_steps(sel)
    except OpDiagnosticError as e:
        raise OpDiagnosticError(fn if e.op is None else originals.get(e.op, fn), e.message) from None
    return sel


MAX_Z3_PARAM = 2**32 - 1
"""The largest `timeout-ms` / `memory-mb`: z3 reads both as unsigned 32-bit (a larger
memory ceiling was a z3 WARNING on stderr and no ceiling at all)."""


def _positive(p: ModulePass, option: str, value: object, most: int | None = None) -> None:
    if not (isinstance(value, int) and value >= 1):
        raise ValueError(f"{p.name}: {option} must be a positive integer, got {value!r}")
    if most is not None and value > most:
        raise ValueError(f"{p.name}: {option} must be at most {most}, got {value}")


@dataclass(frozen=True)
class IselVerifyPass(ModulePass):
    """Prove with z3 that isel preserves each function's meaning (small shapes).

    Example: `step-opt f.mlir -p 'isel-verify{targets=flexasr timeout-ms=10000 max-terms=500000}'`
    remarks "equivalent to the input on all N outputs (z3: unsat)" per function (see the module doc
    for the options, their defaults and the outcomes)."""

    name = "isel-verify"

    targets: tuple[str, ...] = ("flexasr", "hlscnn", "vta")
    """Accelerators isel selects onto before the proof.
    One of: flexasr, hlscnn, vta."""
    mode: str = "flexible"
    """isel's matching mode (see `isel`).
    One of: exact, flexible."""
    arith: str = "uf"
    """`uf`: floating-point arithmetic as uninterpreted functions; `bv`: exact 32-bit bit-vectors.
    One of: uf, bv."""
    iterations: int = 40
    """isel's saturation iteration limit."""
    node_limit: int = 100_000
    """isel's saturation e-node limit."""
    time_limit: float = TIME_LIMIT
    """isel's saturation time limit in seconds, per function."""
    timeout_ms: int = 60_000
    """Time budget of one function (isel, symbolic evaluation, z3), in milliseconds."""
    memory_mb: int = 2048
    """z3's memory ceiling in MiB."""
    max_terms: int = 2_000_000
    """Refuse a function whose symbolic evaluation needs more terms than this."""
    lstm: str = "sequence"
    """isel's LSTM form (see `isel`): `sequence` proves the whole-sequence FlexASR call, `step` the per-step ones.
    One of: sequence, step."""

    def __post_init__(self) -> None:
        check_limits(self)
        check_mode(self)
        parse_targets(self)
        if self.arith not in ("uf", "bv"):
            raise ValueError(f"isel-verify: arith must be 'uf' or 'bv', got '{self.arith}'")
        _positive(self, "timeout-ms", self.timeout_ms, MAX_Z3_PARAM)
        _positive(self, "memory-mb", self.memory_mb, MAX_Z3_PARAM)
        _positive(self, "max-terms", self.max_terms)
        if self.lstm not in LSTM_FORMS:
            raise ValueError(f"{self.name}: lstm must be one of {', '.join(LSTM_FORMS)}, got '{self.lstm}'")

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        targets = parse_targets(self)
        limits = Limits(self.iterations, self.node_limit, self.time_limit)
        try:
            for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
                if len(fn.body.blocks) == 1:
                    self._verify(fn, targets, limits)
        finally:
            release_egraphs()

    def _verify(self, fn: func.FuncOp, targets: tuple[str, ...], limits: Limits) -> None:
        name = fn.sym_name.data
        for a in fn.body.blocks[0].args:
            if not isinstance(a.type, builtin.TensorType) or any(d < 0 for d in a.type.get_shape()):
                raise OpDiagnosticError(fn, f"isel-verify: @{name}: argument {a.index} has type {a.type}; "
                                            "only static-shape tensor arguments are supported")
        check_ops(fn, "isel-verify")
        # timeout-ms bounds the whole function: isel's saturation, the symbolic evaluation and z3
        deadline = time.monotonic() + self.timeout_ms / 1000
        sel = _select_copy(fn, targets, self.mode == "flexible", limits, self.lstm == "sequence")
        terms = estimate_terms(fn) + estimate_terms(sel)
        if terms > self.max_terms:
            raise OpDiagnosticError(fn, f"isel-verify: @{name}: the proof would build about {terms} symbolic terms, "
                                        f"more than max-terms={self.max_terms}; raise isel-verify{{max-terms=...}} "
                                        "(about 1 KB of memory each) or verify at smaller shapes")
        calls = Counter(o.callee.data.split(".")[0] for o in sel.walk() if isinstance(o, InvokeOp))
        verdict, n = prove(fn, sel, self.arith, self.timeout_ms, self.memory_mb, Progress(name), deadline)
        if verdict.status == "sat":
            raise OpDiagnosticError(fn, f"isel-verify: @{name}: selected program differs from the input (z3: sat)")
        per = ",".join(f"{k}={v}" for k, v in sorted(calls.items())) or "none"
        if isinstance(verdict, AbstractionGap):
            emit(fn, "warning", f"isel-verify: @{name}: could not prove equivalence ({verdict.reason}); "
                                "verify the mapping on a form written with +, ·, max and the specs' functions")
            return
        if verdict.status == "unknown" and verdict.reason.startswith("the time ran out"):
            emit(fn, "warning", f"isel-verify: @{name}: not proven within timeout-ms={self.timeout_ms} ({verdict.reason}); "
                                "raise isel-verify{timeout-ms=...} or verify at smaller shapes")
            return
        if verdict.status == "unknown":
            emit(fn, "warning", f"isel-verify: @{name}: could not prove equivalence (z3: unknown, {verdict.reason}); "
                                f"raise isel-verify{{timeout-ms=...}} "
                                f"(now {self.timeout_ms}) or {{memory-mb=...}} (now {self.memory_mb})")
            return
        emit(fn, "remark", f"isel-verify: @{name}: {sum(calls.values())} invocations ({per}) equivalent "
                           f"to the input on all {n} outputs (z3: unsat)")
