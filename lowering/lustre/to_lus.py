"""Lower one Lustre node (AST) to a `lus.node`.

Each op created is recorded in `offsets` with the source offset of the Lustre
expression it comes from, so that clock, causality and initialization errors
found on the lus program are reported at the Lustre source.

The translation (`x`, `y` flows, `c` a bool, `k` an enum variable):

- `a -> b` is `lus.merge "1(0)" a b`; `a fby b` is `lus.fby a b`; `pre a` is
  `lus.pre a`;
- `x when c` / `x when not c` / `x whenot c` / `x when true(c)` is `lus.when`;
  `x when C(k)` on an enum is `lus.when` on `e = (k = C)` (one `arith.cmpi`
  per constructor used, shared), so constructor C is the clock `ck on e`;
- `merge c (true -> a) (false -> b)` / `merge(c; a; b)` is `lus.merge`; an
  enum merge `merge k (C0 -> a0) ... (Cn -> an)` is the chain
  `r_i = merge e_i a_i (r_(i+1) when not e_i)`, every `r_i` on k's clock,
  ending with a constant that is never read (k is always a constructor):
  linear in the number of constructors;
- `current x` (x on `ck on c`) is `merge c x ((0 fby current x) when not c)`;
- a call `f(a)` is `lus.instance @f`; `(restart f every r)(a)` / `f(a) every r`
  instantiates `f$reset`, a copy of `f` with an extra input `r` where every
  `fby`/`->` restarts (`if r then init else ...`) and every instance inside is
  reset too; `(activate f every c)(a)` samples the arguments on `c`;
  `initial default (d)` / `condact(c, f(a), d)` holds the last result on the
  caller's clock (`d` before the first activation).

Example::

    node = NodeLowering(program, program.nodes["integr"], NodeKey("integr"),
                        offsets, requests.append).lower()   # a lus.NodeOp
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i1
from xdsl.dialects.test import TestOp
from xdsl.ir import Operation, SSAValue

from steplus.dialects import lus
from steplus.dialects.lus.input_ranges import (
    INPUT_RANGES,
    OBSERVERS,
    OUTPUT_NAMES,
    names_attr,
    observers_attr,
    ranges_attr,
)
from steplus.lowering.lustre import adts, ast, machine_ints, merges, poly, set_values, sets
from steplus.lowering.lustre.machine_ints import MACHINE_INTS
from steplus.lowering.lustre.automata import lower_automaton
from steplus.lowering.lustre.arrays import define_by_index, lower_array
from steplus.lowering.lustre.calls import lower_call
from steplus.lowering.lustre.oracles import hold
from steplus.passes.lus.causality import mark_lustre
from steplus.lowering.lustre.parser import LustreError
from steplus.lowering.lustre.transform import F32_MAX
from steplus.lowering.lustre.program import (
    INT_MAX,
    INT_MIN,
    NodeKey,
    Program,
    mlir_type,
    type_name,
    walk,
)


_INT_OPS = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivSIOp,
            "div": arith.DivSIOp, "mod": arith.RemSIOp}
_REAL_OPS = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}
_BOOL_OPS = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}
def _hint(name: str) -> str:
    """An SSA name for a Lustre variable, which step-run's `--input` uses: xDSL
    drops a `_2` suffix from SSA names (`in_1` and `in_2` would both be `in`),
    so `a[2]`, an array element, is `a.2` and a final `_2` is `-2` (`in_1` is
    `in-1`; `-` is in no Lustre name, so no other variable is named so)."""
    return re.sub(r"_(\d+)$", r"-\1", name.replace("[", ".").replace("]", ""))


def _carried(op: Operation) -> SSAValue | None:
    """The operand whose (Lustre) type an op's result has, if any."""
    if isinstance(op, lus.WhenOp | lus.PreOp):
        return op.input
    if isinstance(op, lus.FbyOp):
        return op.init
    if isinstance(op, lus.MergeOp):
        return op.on_true
    if isinstance(op, arith.SelectOp):
        return op.lhs
    return None


_CMPI = {"=": "eq", "<>": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
_CMPF = {"=": "oeq", "<>": "one", "<": "olt", "<=": "ole", ">": "ogt", ">=": "oge"}

# A clock of the Lustre source: (variable name, True/False or constructor index).
ClockSpec = tuple[str, "bool | int"]


class NodeLowering:
    """Builds the `lus.node` of one variant of one Lustre node."""

    def __init__(self, prog: Program, node: ast.Node, key: NodeKey,
                 offsets: dict[Operation, int], request: Callable[[NodeKey], None]):
        self.prog, self.ast, self.key = prog, node, key
        self.offsets, self.request = offsets, request
        self.local_consts = {c.name: c for c in node.consts}
        self.ltypes: dict[str, str] = {}
        self.decls: dict[str, ast.Decl] = {}
        statics = [d for d in node.inputs if d.static]
        inputs = [d for d in node.inputs if not d.static and (key.observe or not d.witness)]
        for d in [*node.inputs, *node.outputs, *node.locals]:
            if d.name in self.decls:
                raise LustreError(d.pos, f"variable '{d.name}' is declared twice")
            self.decls[d.name] = d
            self.ltypes[d.name] = prog.resolve_type(d.type)
        for d in node.inputs:
            if d.clock is not None:
                raise LustreError(d.clock.pos, "unsupported construct: node inputs on a "
                                  "sub-clock (inputs are on the node's base clock)")
        in_types = [mlir_type(self.ltypes[d.name]) for d in inputs]
        extra = [i1] * (key.reset + key.tick)
        observers = node.observers if key.observe else []
        self.op = lus.NodeOp(key.symbol, in_types + extra,
                             [mlir_type(self.ltypes[d.name]) for d in node.outputs]
                             + [i1] * len(observers),
                             static=[mlir_type(self.ltypes[d.name]) for d in statics])
        self.op.attributes[OUTPUT_NAMES] = names_attr(
            [d.name for d in node.outputs] + [o.name for o in observers])
        unsigned = [(k, machine_ints.bits(t)) for k, d in enumerate(node.outputs)
                    if (t := self.ltypes[d.name]) in MACHINE_INTS and not MACHINE_INTS[t][1]]
        if unsigned:  # step-run prints them unsigned
            self.op.attributes[machine_ints.UNSIGNED_OUTPUTS] = \
                machine_ints.unsigned_outputs_attr(unsigned)
        shown = set_values.collections_attr(prog, node.outputs)
        if shown is not None:  # step-run prints set and map outputs as sets and maps
            self.op.attributes[set_values.COLLECTIONS] = shown
        if observers:
            self.op.attributes[OBSERVERS] = observers_attr(
                [(o.kind, o.name, o.pos) for o in observers])
        offsets[self.op] = node.pos
        mark_lustre(self.op)
        ranges = {_hint(d.name): (t, 0, prog.enum_size(t) - 1)
                  for d in inputs if prog.is_enum(t := self.ltypes[d.name])}
        for d in inputs:  # Kind 2 subrange inputs: assumed, so checked at the input too
            if (r := prog.int_range(d.type)) is not None:
                ranges[_hint(d.name)] = (f"subrange [{r[0]}, {r[1]}] of int", r[0], r[1])
        if ranges:  # enum inputs: step-run rejects a value that is no constructor
            self.op.attributes[INPUT_RANGES] = ranges_attr(ranges)
        self.block = self.op.body.block
        self.env: dict[str, SSAValue] = {}
        args = list(self.op.static_args) + list(self.op.input_args)
        # The Lustre type of values of an enumerated type (an i32 in MLIR):
        # enums are their own types (`k = 1`, `k + 1` are type errors).
        self.vtypes: dict[SSAValue, str] = {}
        for d, arg in zip([*statics, *inputs], args):
            arg.name_hint = _hint(d.name)
            self.env[d.name] = arg
            self.tag(arg, self.ltypes[d.name])
        self.reset: SSAValue | None = self.op.input_args[len(inputs)] if key.reset else None
        if self.reset is not None:
            self.reset.name_hint = "reset"
        if key.tick:
            self.op.input_args[-1].name_hint = "tick"
        self.placeholders: dict[str, Operation] = {}
        self._resolved: dict[SSAValue, SSAValue] = {}
        for d in [*node.outputs, *node.locals]:
            if d.witness and not key.observe:
                continue  # a local of the check variant only
            ph = TestOp(result_types=[mlir_type(self.ltypes[d.name])])
            ph.results[0].name_hint = _hint(d.name)
            self.block.add_op(ph)
            self.placeholders[d.name] = ph
            self.env[d.name] = ph.results[0]
            self.tag(ph.results[0], self.ltypes[d.name])
        self.defs: dict[str, tuple[SSAValue, int]] = {}
        self.sampling: ClockSpec | None = None
        self._sampled: dict[tuple[str, ClockSpec], SSAValue] = {}
        self._enum_tests: dict[tuple[str, int], SSAValue] = {}
        for d in inputs:  # free constants: the first value, held (oracles.py)
            if d.held:
                self.env[d.name] = hold(self, self.env[d.name], d.pos)

    # -- emission -----------------------------------------------------------------
    def emit(self, op: Operation, pos: int) -> SSAValue:
        self.block.add_op(op)
        self.offsets[op] = pos
        carried = _carried(op)
        if carried is not None:  # the result has the type of that operand
            self.tag(op.results[0], self.lt(carried))
        return op.results[0]

    def tag(self, v: SSAValue, ltype: str) -> None:
        if ltype not in ("int", "real", "bool"):
            self.vtypes[v] = ltype

    def lt(self, v: SSAValue) -> str:
        """The Lustre type of a value: `int`, `real`, `bool` or an enum's name."""
        return self.vtypes.get(v) or type_name(v.type)

    def const(self, value: object, ltype: str, pos: int) -> SSAValue:
        t = mlir_type(ltype)
        if ltype == "real":
            v = float(value)  # a folded constant (1.0e38 * 10.0) may leave f32's range
            if math.isfinite(v) and abs(v) > F32_MAX:
                raise LustreError(pos, f"real constant {v} does not fit in real (32-bit float)")
            return self.emit(arith.ConstantOp(FloatAttr(v, t)), pos)
        if ltype == "bool":
            return self.emit(arith.ConstantOp(IntegerAttr(1 if value else 0, t)), pos)
        if ltype in MACHINE_INTS:
            return machine_ints.constant(self, int(value), ltype, pos)
        if not INT_MIN <= int(value) <= INT_MAX:
            raise LustreError(pos, f"integer literal {value} does not fit in int (32-bit)")
        v = self.emit(arith.ConstantOp(IntegerAttr(int(value), t)), pos)
        self.tag(v, ltype)
        return v

    # -- the node -------------------------------------------------------------------
    def lower(self) -> lus.NodeOp:
        adts.canonicalize_inputs(self)
        sets.canonicalize_inputs(self)
        machine_ints.normalize_inputs(self)
        for eq in self.ast.equations:
            if isinstance(eq, ast.Automaton):
                lower_automaton(self, eq)
                continue
            assert isinstance(eq, ast.Equation)  # blocks are desugared first (frames.py)
            if not self.key.observe and eq.lhs and all(
                    n.name in self.decls and self.decls[n.name].witness for n in eq.lhs):
                continue  # a local of the check variant only (quantifiers.py's history)
            if eq.index is not None:
                define_by_index(self, eq)
                continue
            values = self.expr(eq.rhs)
            lhs = self.expand_lhs(eq.lhs)
            if len(values) != len(lhs):
                raise LustreError(eq.pos, f"{len(lhs)} variable(s) defined by an "
                                  f"expression with {len(values)} value(s)")
            for name, v in zip(lhs, values):
                self.define(name, v)
        for d in [*self.ast.outputs, *self.ast.locals]:
            if d.name not in self.defs and (self.key.observe or not d.witness):
                raise LustreError(d.pos, f"variable '{d.name}' has no equation")
        observed = []
        if self.key.observe:
            for ob in self.ast.observers:
                v = self.expr1(ob.expr)
                self._want(ob.expr, v, "bool", f"the {ob.kind} '{ob.name}'")
                observed.append(v)
        self._resolve_placeholders()
        outs = [self.env[d.name] for d in self.ast.outputs]
        outs += [self._resolved.get(v, v) for v in observed]
        yield_op = lus.YieldOp(outs)
        self.block.add_op(yield_op)
        self.offsets[yield_op] = self.ast.pos
        return self.op

    def expand_lhs(self, names: list[ast.Name]) -> list[ast.Name]:
        """An array variable on the left of `=` is its elements."""
        return [ast.Name(n.pos, e) for n in names for e in self.ast.arrays.get(n.name, [n.name])]

    def define(self, name: ast.Name, value: SSAValue) -> None:
        if name.name not in self.placeholders:
            what = "an input" if name.name in self.decls else "not declared"
            raise LustreError(name.pos, f"cannot define '{name.name}': it is {what}")
        if name.name in self.defs:
            raise LustreError(name.pos, f"variable '{name.name}' is defined twice")
        want = self.ltypes[name.name]
        if self.lt(value) != want:
            raise LustreError(name.pos, f"'{name.name}' is {want} but its "
                              f"equation gives {self.lt(value)}")
        self.defs[name.name] = (value, name.pos)

    def _resolve_placeholders(self) -> None:
        owner_name = {ph.results[0]: n for n, ph in self.placeholders.items()}
        for name, (value, _) in self.defs.items():
            if value not in owner_name and not value.name_hint:
                value.name_hint = _hint(name)  # the variable whose equation computes it
        resolved: dict[str, SSAValue] = {}
        for name, ph in self.placeholders.items():
            value, pos = self.defs[name]
            seen = {name}
            while value in owner_name:  # `x = y;` with y a local: follow the alias
                alias = owner_name[value]
                if alias in seen:
                    raise LustreError(pos, f"'{name}' is defined as itself "
                                      "(instantaneous dependency cycle)")
                seen.add(alias)
                value = self.defs[alias][0]
            resolved[name] = value
        self._resolved = {ph.results[0]: resolved[n] for n, ph in self.placeholders.items()}
        for name, ph in self.placeholders.items():
            ph.results[0].replace_all_uses_with(resolved[name])
        for name, ph in self.placeholders.items():
            # `z = x; y = z;`: y is x too (not z's placeholder, erased below)
            self.env[name] = resolved[name]
            self.defs[name] = (resolved[name], self.defs[name][1])
            ph.detach()
            ph.erase()

    # -- expressions ----------------------------------------------------------------
    def expr1(self, e: ast.Expr) -> SSAValue:
        values = self.expr(e)
        if len(values) != 1:
            raise LustreError(e.pos, f"expected one value, got {len(values)}")
        return values[0]

    def expr(self, e: ast.Expr) -> list[SSAValue]:
        done = sets.reuse(self, e)  # lowered by sets.lower_expr already
        if done is not None:
            return done
        if isinstance(e, ast.Binary | ast.Index | ast.RecordUpdate | ast.Call | ast.Var):
            coll = sets.lower_expr(self, e)  # Kind 2 sets and maps (sets.py)
            if coll is not None:
                return coll
        if isinstance(e, ast.Var | ast.Call | ast.Match | ast.Tester | ast.Ascription
                      | ast.BitConcat | ast.BitExtract):
            typed = poly.lower_expr(self, e)  # Kind 2 data types (poly.py)
            if typed is not None:
                return typed
        if isinstance(e, ast.Const):
            return [self.const(e.value, e.kind, e.pos)]
        if isinstance(e, ast.Var):
            if e.name in self.ast.arrays:
                return [self.var(ast.Var(e.pos, n)) for n in self.ast.arrays[e.name]]
            return [self.var(e)]
        if isinstance(e, ast.ArrayLit | ast.Repeat | ast.Index | ast.Iterate | ast.Field
                      | ast.RecordLit | ast.RecordUpdate):
            return lower_array(self, e)
        if isinstance(e, ast.Tuple):
            return [v for item in e.items for v in self.expr(item)]
        if isinstance(e, ast.Unary):
            return self.unary(e)
        if isinstance(e, ast.Binary):
            return self.binary(e)
        if isinstance(e, ast.If):
            try:  # a constant condition (`if i = 0` in `A[i] = ...`): one branch
                cv, ct = self.prog.fold(e.cond, self.local_consts)
            except LustreError:
                cv, ct = None, ""
            if ct == "bool" and not any(isinstance(x, ast.Var) and x.name in self.env
                                        for x in walk(e.cond)):
                return self.expr(e.then if cv else e.other)
            c = self.expr1(e.cond)
            self._want(e.cond, c, "bool", "the condition of 'if'")
            return [self.emit(arith.SelectOp(c, a, b), e.pos)
                    for a, b in self._pairs(e, self.expr(e.then), self.expr(e.other))]
        if isinstance(e, ast.When):
            spec = self.clock_spec(e.clock)
            return [self.sample(v, spec, e.pos) for v in self.expr(e.arg)]
        if isinstance(e, ast.Merge):
            return merges.merge(self, e)
        if isinstance(e, ast.Call):
            return lower_call(self, e)
        raise LustreError(e.pos, "unsupported expression")  # pragma: no cover

    def var(self, e: ast.Var) -> SSAValue:
        if e.name in self.env:
            value = self.env[e.name]
            if self.sampling is not None:
                key = (e.name, self.sampling)
                if key not in self._sampled:
                    self._sampled[key] = self.sample(value, self.sampling, e.pos)
                value = self._sampled[key]
            return value
        if e.name.startswith("__") and e.name[2:] in self.ast.modes:  # Kind 2's `::m`
            return self.expr1(self.ast.modes[e.name[2:]])
        if e.name not in self.local_consts and e.name not in self.prog.consts \
                and e.name not in self.prog.ctors:  # a flow is meant: no constant wording
            raise LustreError(e.pos, f"unknown variable '{e.name}'")
        v, ltype = self.prog.const_value(e.name, e.pos, self.local_consts)
        return self.const(v, ltype, e.pos)

    def _want(self, e: ast.Expr, v: SSAValue, ltype: str, what: str) -> None:
        if self.lt(v) != ltype:
            raise LustreError(e.pos, f"{what} must be {ltype}, not {self.lt(v)}")

    def _pairs(self, e: ast.Expr, a: list[SSAValue], b: list[SSAValue]):
        if len(a) != len(b):
            raise LustreError(e.pos, f"operands of different arity ({len(a)} and {len(b)})")
        for x, y in zip(a, b):
            if self.lt(x) != self.lt(y):
                raise LustreError(e.pos, f"operands of different types "
                                  f"({self.lt(x)} and {self.lt(y)})")
        return list(zip(a, b))

    def request_check(self, name: str) -> None:
        """Lower the check node `name$check` of node `name` too (a sized instance's)."""
        self.request(NodeKey(name, observe=True))

    def constant_pre(self, e: ast.Unary) -> list[SSAValue] | None:
        """`pre k` of a constant expression read as Kind 2 does (`.lus`): `k fby k`.

        Kind 2 accepts the program and leaves the first value unconstrained;
        steplus picks `k`. Heptagon (`.ept`) and Lustre V6 (`--format
        lustre-v6`) reject it: None, so the `pre` stays and the initialization
        check reports it."""
        if self.prog.dialect in ("heptagon", "lustre-v6"):
            return None
        try:  # first: it stops at the first `pre` or flow, so a chain of n pres is O(n)
            self.prog.fold(e.arg, self.local_consts)
        except LustreError:
            return None
        if any(isinstance(x, ast.Var) and x.name in self.env or
               not isinstance(x, ast.Var | ast.Const | ast.Unary | ast.Binary | ast.If)
               for x in walk(e.arg)):  # the branch of an `if` that fold did not take too
            return None
        return [self._restart(self.emit(lus.FbyOp(v, v), e.pos), v, e.pos)
                for v in self.expr(e.arg)]

    def unary(self, e: ast.Unary) -> list[SSAValue]:
        if e.op == "pre":
            folded = self.constant_pre(e)
            if folded is not None:
                return folded
            pres = [lus.PreOp(v) for v in self.expr(e.arg)]
            out = [self.emit(p, e.pos) for p in pres]
            parts = [self.lt(v) for v in out]  # the oracle's, if read undefined
            for p in pres:
                self.prog.pre_ltypes[p] = parts
            return out
        if e.op == "-" and isinstance(e.arg, ast.Const) and e.arg.kind == "int":
            return [self.const(-int(e.arg.value), "int", e.pos)]  # -2147483648: no int literal
        out = []
        for v in self.expr(e.arg):
            t = self.lt(v)
            if e.op == "pre":
                out.append(self.emit(lus.PreOp(v), e.pos))
            elif e.op == "current":
                out.append(merges.current(self, e, v))
            elif e.op in MACHINE_INTS or (t in MACHINE_INTS and e.op in ("int", "real")):
                out.append(machine_ints.convert(self, e, v))
            elif t in MACHINE_INTS:
                out.append(machine_ints.unary(self, e, v))
            elif e.op == "-" and t == "int":
                out.append(self.emit(arith.SubiOp(self.const(0, "int", e.pos), v), e.pos))
            elif e.op == "-" and t == "real":
                out.append(self.emit(arith.NegfOp(v), e.pos))
            elif e.op == "not" and t == "bool":
                out.append(self.emit(arith.XOrIOp(v, self.const(True, "bool", e.pos)), e.pos))
            elif e.op == "int" and t in ("int", "real"):
                out.append(v if t == "int" else
                           self.emit(arith.FPToSIOp(v, mlir_type("int")), e.pos))
            elif e.op == "real" and t in ("int", "real"):
                out.append(v if t == "real" else
                           self.emit(arith.SIToFPOp(v, mlir_type("real")), e.pos))
            else:
                raise LustreError(e.pos, f"'{e.op}' cannot be applied to {t}")
        return out

    def binary(self, e: ast.Binary) -> list[SSAValue]:
        pairs = self._pairs(e, self.expr(e.lhs), self.expr(e.rhs))
        out = [self._binary1(e, a, b) for a, b in pairs]
        if e.op in ("=", "<>") and len(out) > 1:  # arrays and records: all / any part
            acc = out[0]
            for v in out[1:]:
                acc = self.emit((arith.AndIOp if e.op == "=" else arith.OrIOp)(acc, v), e.pos)
            return [acc]
        return out

    def _binary1(self, e: ast.Binary, a: SSAValue, b: SSAValue) -> SSAValue:
        op, t = e.op, self.lt(a)
        if op == "->":
            v = self.emit(lus.MergeOp(a, b, word="1(0)"), e.pos)
            return self._restart(v, a, e.pos)
        if op == "fby":
            return self._restart(self.emit(lus.FbyOp(a, b), e.pos), a, e.pos)
        if t in MACHINE_INTS:
            return machine_ints.binary(self, e, a, b)
        if op in _CMPI and (op in ("=", "<>") or t in ("int", "real")):
            if t == "real":
                return self.emit(arith.CmpfOp(a, b, _CMPF[op]), e.pos)
            return self.emit(arith.CmpiOp(a, b, _CMPI[op]), e.pos)
        if t == "int" and op in _INT_OPS:
            return self.emit(_INT_OPS[op](a, b), e.pos)
        if t == "real" and op in _REAL_OPS:
            return self.emit(_REAL_OPS[op](a, b), e.pos)
        if t == "bool" and op in _BOOL_OPS:
            return self.emit(_BOOL_OPS[op](a, b), e.pos)
        if t == "bool" and op == "=>":
            na = self.emit(arith.XOrIOp(a, self.const(True, "bool", e.pos)), e.pos)
            return self.emit(arith.OrIOp(na, b), e.pos)
        raise LustreError(e.pos, f"'{op}' cannot be applied to {t}")

    def _restart(self, v: SSAValue, init: SSAValue, pos: int) -> SSAValue:
        """In a reset variant, `if reset then init else v`."""
        if self.reset is None:
            return v
        r = self.reset
        if self.sampling is not None:
            r = self.sample(r, self.sampling, pos)
        return self.emit(arith.SelectOp(r, init, v), pos)

    # -- clocks ---------------------------------------------------------------------
    def clock_spec(self, clock: ast.Clock) -> ClockSpec:
        if clock.var not in self.env:
            raise LustreError(clock.pos, f"unknown clock variable '{clock.var}'")
        ltype = self.ltypes.get(clock.var, type_name(self.env[clock.var].type))
        if isinstance(clock.ctor, bool):
            if ltype != "bool":
                raise LustreError(clock.pos, f"clock '{clock.var}' must be bool, not {ltype}")
            return (clock.var, clock.ctor)
        if not self.prog.is_enum(ltype) or clock.ctor not in self.prog.ctor_names(ltype):
            raise LustreError(clock.pos, f"'{clock.ctor}' is not a constructor of the type "
                              f"of '{clock.var}' ({ltype})")
        return (clock.var, self.prog.ctor_names(ltype).index(clock.ctor))

    def _is(self, var: str, index: int, pos: int) -> SSAValue:
        """For an enum clock variable `k`: the bool `k = C_index`, on k's clock
        (one per constructor used, shared by every `when`/`merge` on it, so
        that the clocks `ck on (k = C_i)` are one clock)."""
        key = (var, index)
        if key not in self._enum_tests:
            self._enum_tests[key] = self.emit(
                arith.CmpiOp(self.env[var], self.const(index, "int", pos), "eq"), pos)
        return self._enum_tests[key]

    def sample(self, v: SSAValue, spec: ClockSpec, pos: int) -> SSAValue:
        """`v when spec`; `v when C_i(k)` is `v when (k = C_i)`."""
        var, tag = spec
        if isinstance(tag, bool):
            return self.emit(lus.WhenOp(v, condition=self.env[var], negated=not tag), pos)
        return self.emit(lus.WhenOp(v, condition=self._is(var, tag, pos)), pos)

    def merge_chain(self, var: str, vals: list[SSAValue], pos: int) -> SSAValue:
        """`merge k (C_0 -> vals[0]) ...` on an enum-typed variable `k`, each
        `vals[i]` on the clock `ck on (k = C_i)`.

        r_i = merge (k = C_i) v_i (r_(i+1) when not (k = C_i)): every r_i on
        k's clock, so each step is O(1); the default behind the last case is
        never read (k is always a constructor: enum inputs are checked)."""
        t = self.lt(vals[0])
        acc = self.const({"real": 0.0, "bool": False}.get(t, 0), t, pos)
        for i in reversed(range(len(vals))):
            c = self._is(var, i, pos)
            rest = self.emit(lus.WhenOp(acc, condition=c, negated=True), pos)
            acc = self.emit(lus.MergeOp(vals[i], rest, condition=c), pos)
        return acc
