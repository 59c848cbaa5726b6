"""Kind 2 finite sets `set<T>` and maps `map<K, V>`, with a bounded
representation scalarized like records (lus stays scalar).

A value of `set<T>` is K *slots* (`CAPACITY`, 8, unless imported `with
capacity(k)`: the tools' `--set-capacity K`, 1 to 64) and a header: the
header (an i32 typed as the set, `s`) is 0, or 1 once the set overflowed;
slot i is a valid bit `s.has<i>` and an element `s.key<i>` (its leaves, for a
composite T). A `map<K, V>` adds a value `m.val<i>` per slot. The set is the
elements of the valid slots; a slot that is not valid holds anything, so two
equal sets may differ slot by slot (`=` compares them as sets). Sets and maps
are typed by their elements' scalar leaves: `set<R>` for a record `R {x, y:
int}` is `set<[int, int]>`, the type of a literal `{'(3, 4)}` too.

- `{a, b}`, `{}@<T>`, `map[k1 := v1; k2 := v2]`, `map[]@<K, V>`: literals
  (each element inserted in the first free slot, a duplicate once);
- `x in s` (membership), `k in m` (a key of m);
- `s1 + s2` (union), `s1 - s2` (difference), `m - s` (m without the keys in
  s); `s1 = s2`, `<>` as sets (maps: the same keys with equal values; sets
  and maps nested as elements or values compared as sets too);
- `m[k]`: the value at key k, 0 / 0.0 / false (an empty set for a set value)
  when k is not a key (where Kind 2 leaves it unconstrained);
  `m[k := v]`: m with k mapped to v;
- `pre`, `->`, `if`, `when`, `merge`, node arguments and results work on the
  slots, as on records; an input set is its valid slots (an element out of
  the subrange of T is not in it; a map's duplicate keys count once, the
  first), what `step-run --check` draws.

Capacity: a union, an insertion or an update that needs a K+1-th slot sets
the header to 1 (kept by every operation on that value); each set or map
output and local of a node is a property `capacity of 'x'`
(`x` not overflowed) which `step-run --check` reports at the declaration.

Example::

    node N(x: int) returns (s: set<int>; b: bool);
    let
      s = {x, 3} -> pre s + {x};
      b = 3 in s;
    tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i1, i32
from xdsl.ir import Operation, SSAValue

from steplus.lowering.lustre import ast
from steplus.lowering.lustre.grammar import renamed
from steplus.lowering.lustre.machine_ints import MACHINE_INTS
from steplus.lowering.lustre.set_types import (CAPACITY, EMPTY_MAP, FITS, KINDS, MAX_CAPACITY,
                                               MAX_COMPARISONS, SET_LIT, SMALL, Coll, _make,
                                               capacity, coll_named, coll_of_type)
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering

__all__ = ["CAPACITY", "EMPTY_MAP", "FITS", "KINDS", "MAX_CAPACITY", "MAX_COMPARISONS",
           "SET_LIT", "SMALL", "Coll", "canonicalize_inputs", "capacity", "coll_named",
           "coll_of_type", "lower_expr", "reuse", "values_equal"]

def _coll_of_values(low: NodeLowering, vals: list[SSAValue]) -> Coll | None:
    if not vals:
        return None
    c = coll_named(low.prog, low.lt(vals[0]))
    return c if c is not None and len(vals) == len(c.leaves) else None


def _leaves_of_values(low: NodeLowering, vals: list[SSAValue], pos: int
                      ) -> list[tuple[str, ast.TypeRef]]:
    out = []
    for j, v in enumerate(vals):
        t = low.lt(v)
        base = t in ("int", "real", "bool") or t in MACHINE_INTS
        out.append((f"[{j}]" if len(vals) > 1 else "", ast.TypeRef(pos, t, tag=not base)))
    return out


# -- helpers on SSA values ----------------------------------------------------------


def _const_bool(low: NodeLowering, b: bool, pos: int) -> SSAValue:
    return low.const(b, "bool", pos)


def _known(v: SSAValue) -> bool | None:
    """The value of a bool known at compile time (an `arith.constant`), else None.
    The helpers below fold such operands: the empty set's valid bits are
    false, so a literal or an update of `map[]` emits no test of them."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) \
            and v.type == i1:
        return op.value.value.data != 0
    return None


def _and(low: NodeLowering, a: SSAValue, b: SSAValue, pos: int) -> SSAValue:
    ka, kb = _known(a), _known(b)
    if ka is False or kb is True:
        return a
    if kb is False or ka is True:
        return b
    return low.emit(arith.AndIOp(a, b), pos)


def _or(low: NodeLowering, a: SSAValue, b: SSAValue, pos: int) -> SSAValue:
    ka, kb = _known(a), _known(b)
    if ka is True or kb is False:
        return a
    if kb is True or ka is False:
        return b
    return low.emit(arith.OrIOp(a, b), pos)


def _not(low: NodeLowering, a: SSAValue, pos: int) -> SSAValue:
    ka = _known(a)
    if ka is not None:
        return _const_bool(low, not ka, pos)
    return low.emit(arith.XOrIOp(a, _const_bool(low, True, pos)), pos)


def _all(low: NodeLowering, items: list[SSAValue], pos: int) -> SSAValue:
    if not items:
        return _const_bool(low, True, pos)
    acc = items[0]
    for x in items[1:]:
        acc = _and(low, acc, x, pos)
    return acc


def _any(low: NodeLowering, items: list[SSAValue], pos: int) -> SSAValue:
    if not items:
        return _const_bool(low, False, pos)
    acc = items[0]
    for x in items[1:]:
        acc = _or(low, acc, x, pos)
    return acc


def _select(low: NodeLowering, c: SSAValue, a: list[SSAValue], b: list[SSAValue], pos: int
            ) -> list[SSAValue]:
    kc = _known(c)
    if kc is not None:
        return list(a if kc else b)
    return [x if x is y else low.emit(arith.SelectOp(c, x, y), pos) for x, y in zip(a, b)]


def _zero(low: NodeLowering, v: SSAValue, pos: int) -> SSAValue:
    t = low.lt(v)
    return low.const({"real": 0.0, "bool": False}.get(t, 0), t, pos)


def values_equal(low: NodeLowering, a: list[SSAValue], b: list[SSAValue], pos: int
                 ) -> SSAValue:
    """`a = b` leaf by leaf, a set or map part of them compared as a set."""
    if len(a) != len(b):
        raise LustreError(pos, f"operands of different arity ({len(a)} and {len(b)})")
    parts: list[SSAValue] = []
    j = 0
    while j < len(a):
        if low.lt(a[j]) != low.lt(b[j]):
            raise LustreError(pos, f"operands of different types ({low.lt(a[j])} and "
                              f"{low.lt(b[j])})")
        c = coll_named(low.prog, low.lt(a[j]))
        if c is not None and j + len(c.leaves) <= len(a):
            n = len(c.leaves)
            parts.append(_coll_equal(low, c, a[j:j + n], b[j:j + n], pos))
            j += n
            continue
        if low.lt(a[j]) == "real":
            parts.append(low.emit(arith.CmpfOp(a[j], b[j], "oeq"), pos))
        else:
            parts.append(low.emit(arith.CmpiOp(a[j], b[j], "eq"), pos))
        j += 1
    return _all(low, parts, pos)


# -- slots ------------------------------------------------------------------------


Slot = tuple[SSAValue, list[SSAValue], list[SSAValue]]  # valid, key, value


def _slots(c: Coll, vals: list[SSAValue]) -> list[Slot]:
    nk, w = len(c.key), c.width
    out = []
    for i in range(c.cap):
        s = vals[1 + i * w: 1 + (i + 1) * w]
        out.append((s[0], s[1:1 + nk], s[1 + nk:]))
    return out


def _pack(header: SSAValue, slots: list[Slot]) -> list[SSAValue]:
    return [header] + [v for has, k, val in slots for v in (has, *k, *val)]


def _poison(low: NodeLowering, c: Coll, header: SSAValue, full: SSAValue, pos: int
            ) -> SSAValue:
    return _select(low, full, [low.const(1, c.name, pos)], [header], pos)[0]


def _member(low: NodeLowering, c: Coll, x: list[SSAValue], vals: list[SSAValue], pos: int
            ) -> SSAValue:
    return _any(low, [_and(low, has, values_equal(low, k, x, pos), pos)
                      for has, k, _ in _slots(c, vals)], pos)


def _insert(low: NodeLowering, c: Coll, vals: list[SSAValue], key: list[SSAValue],
            val: list[SSAValue], pos: int) -> list[SSAValue]:
    """vals with key (mapped to val) added: in its slot if it is a key, else in
    the first free slot (none: the header says overflowed)."""
    slots = _slots(c, vals)
    hits = [_and(low, has, values_equal(low, k, key, pos), pos) for has, k, _ in slots]
    present = _any(low, hits, pos)
    absent = _not(low, present, pos)
    free_before = _const_bool(low, False, pos)
    out: list[Slot] = []
    for (has, k, v), hit in zip(slots, hits):
        free = _not(low, has, pos)
        place = _and(low, _and(low, absent, free, pos), _not(low, free_before, pos), pos)
        free_before = _or(low, free_before, free, pos)
        new_has = _or(low, has, place, pos)
        new_k = _select(low, place, key, k, pos)
        new_v = _select(low, _or(low, place, hit, pos), val, v, pos) if val else []
        out.append((new_has, new_k, new_v))
    full = _and(low, absent, _not(low, free_before, pos), pos)
    return _pack(_poison(low, c, vals[0], full, pos), out)


def _empty(low: NodeLowering, c: Coll, pos: int) -> list[SSAValue]:
    header = low.const(0, c.name, pos)
    no = _const_bool(low, False, pos)
    zeros: list[SSAValue] = []
    for _, t in [*c.key, *c.val]:
        lt = low.prog.resolve_type(t)
        zeros.append(low.const({"real": 0.0, "bool": False}.get(lt, 0), lt, pos))
    nk = len(c.key)
    return _pack(header, [(no, zeros[:nk], zeros[nk:]) for _ in range(c.cap)])


def _union(low: NodeLowering, c: Coll, a: list[SSAValue], b: list[SSAValue], pos: int
           ) -> list[SSAValue]:
    s = a
    for has, k, v in _slots(c, b):
        s = _select(low, has, _insert(low, c, s, k, v, pos), s, pos)
    bad = low.emit(arith.CmpiOp(b[0], low.const(0, c.name, pos), "ne"), pos)
    return [_poison(low, c, s[0], bad, pos), *s[1:]]


def _without(low: NodeLowering, c: Coll, a: list[SSAValue], s: Coll, b: list[SSAValue],
             pos: int, keep_members: bool = False) -> list[SSAValue]:
    """a without (with only, `keep_members`) the keys that are elements of b."""
    out: list[Slot] = []
    for has, k, v in _slots(c, a):
        m = _member(low, s, k, b, pos)
        out.append((_and(low, has, m if keep_members else _not(low, m, pos), pos), k, v))
    return _pack(a[0], out)


def _subset(low: NodeLowering, c: Coll, a: list[SSAValue], b: list[SSAValue], pos: int
            ) -> SSAValue:
    """Every (key, value) of a is in b."""
    bs = _slots(c, b)
    parts = []
    for has, k, v in _slots(c, a):
        found = _any(low, [_and(low, hb, values_equal(low, [*kb, *vb], [*k, *v], pos), pos)
                           for hb, kb, vb in bs], pos)
        parts.append(_or(low, _not(low, has, pos), found, pos))
    return _all(low, parts, pos)


def _count(low: NodeLowering, c: Coll, vals: list[SSAValue], pos: int) -> SSAValue:
    """The number of valid slots of `vals` (its elements: no two valid slots
    of a set or map hold the same element or key)."""
    count = low.const(0, "int", pos)
    for has, _, _ in _slots(c, vals):
        count = low.emit(arith.AddiOp(count, low.emit(arith.ExtUIOp(has, i32), pos)), pos)
    return count


def _within(low: NodeLowering, c: Coll, vals: list[SSAValue], small: bool, pos: int
            ) -> SSAValue:
    """`$fits` (not `small`): the value has not overflowed; `$small`: it holds
    at most K/2 elements. Either also of each set or map nested in a valid slot."""
    if small:
        cap = low.const(c.cap // 2, "int", pos)
        test = low.emit(arith.CmpiOp(_count(low, c, vals, pos), cap, "sle"), pos)
    else:
        test = low.emit(arith.CmpiOp(vals[0], low.const(0, c.name, pos), "eq"), pos)
    parts = [test]
    for has, k, v in _slots(c, vals):
        leaves = [*k, *v]
        j = 0
        while j < len(leaves):
            inner = coll_named(low.prog, low.lt(leaves[j]))
            if inner is not None and j + len(inner.leaves) <= len(leaves):
                nested = _within(low, inner, leaves[j:j + len(inner.leaves)], small, pos)
                parts.append(_or(low, _not(low, has, pos), nested, pos))
                j += len(inner.leaves)
            else:
                j += 1
    return _all(low, parts, pos)


def _coll_equal(low: NodeLowering, c: Coll, a: list[SSAValue], b: list[SSAValue], pos: int
                ) -> SSAValue:
    """Equality as sets. A map's keys are unique (insertions replace, an
    input's later duplicate keys are dropped), so two maps are equal when they
    have as many keys and each key of a is one of b with an equal value, the
    value looked up once per key: K^2 key comparisons and K value
    comparisons, where comparing every (key, value) pair both ways takes
    2 K^2 value comparisons (K^4 scalar ones for a map of maps)."""
    if c.kind != "map":
        return _and(low, _subset(low, c, a, b, pos), _subset(low, c, b, a, pos), pos)
    same = low.emit(arith.CmpiOp(_count(low, c, a, pos), _count(low, c, b, pos), "eq"), pos)
    parts = [same]
    bs = _slots(c, b)
    for has, k, v in _slots(c, a):
        hits = [_and(low, hb, values_equal(low, kb, k, pos), pos) for hb, kb, _ in bs]
        found = v
        for hit, (_, _, vb) in zip(hits, bs):
            found = _select(low, hit, vb, found, pos)
        match = _and(low, _any(low, hits, pos), values_equal(low, found, v, pos), pos)
        parts.append(_or(low, _not(low, has, pos), match, pos))
    return _all(low, parts, pos)


def _lookup(low: NodeLowering, c: Coll, vals: list[SSAValue], key: list[SSAValue], pos: int
            ) -> list[SSAValue]:
    slots = _slots(c, vals)
    res = [_zero(low, v, pos) for v in slots[0][2]]
    j = 0
    while j < len(res):  # a set or map value: the empty one
        inner = coll_named(low.prog, low.lt(res[j]))
        if inner is not None:
            res[j:j + len(inner.leaves)] = _empty(low, inner, pos)
            j += len(inner.leaves)
        else:
            j += 1
    for has, k, v in reversed(slots):
        hit = _and(low, has, values_equal(low, k, key, pos), pos)
        res = _select(low, hit, v, res, pos)
    return res


# -- expressions ------------------------------------------------------------------


def _memo(low: NodeLowering) -> dict[int, list[SSAValue]]:
    return low.__dict__.setdefault("_set_memo", {})


def reuse(low: NodeLowering, e: ast.Expr) -> list[SSAValue] | None:
    """The values of `e` lowered already by `lower_expr` (which found no set)."""
    memo = low.__dict__.get("_set_memo")
    return memo.pop(id(e), None) if memo else None


def _peek(low: NodeLowering, e: ast.Expr) -> tuple[list[SSAValue], Coll | None]:
    vals = low.expr(e)
    c = _coll_of_values(low, vals)
    if c is None:
        _memo(low)[id(e)] = vals
    return vals, c


def _type_arg_coll(low: NodeLowering, e: ast.Var, kind: str) -> Coll:
    targs = e.targs or []
    c = coll_of_type(low.prog, ast.TypeRef(e.pos, kind, args=targs))
    assert c is not None
    return c


def _constant_key(vals: list[SSAValue]) -> tuple[object, ...] | None:
    """The compile-time value of an element all of whose leaves are
    `arith.constant`s (reals as f32, how `arith.cmpf` compares them), else None."""
    key: list[object] = []
    for v in vals:
        op = v.owner
        if not isinstance(op, arith.ConstantOp):
            return None
        attr = op.value
        if isinstance(attr, FloatAttr):
            key.append(float(np.float32(attr.value.data)))
        elif isinstance(attr, IntegerAttr):
            key.append(attr.value.data)
        else:
            return None
    return tuple(key)


def _literal(low: NodeLowering, e: ast.Call) -> list[SSAValue]:
    """`{a, b, ...}`: the distinct constant elements (known at compile time:
    no comparison emitted) fill the first slots, in order, the header set when
    they are more than K; each other element is inserted after them (as a
    union would: a set's value does not depend on the order of its
    elements). A literal of n constants is O(n) to lower and O(K) ops."""
    start = low.block.last_op
    items = [low.expr(x) for x in e.args]
    c = _make(low.prog, "set", _leaves_of_values(low, items[0], e.pos), [], e.pos)
    for x, vals in zip(e.args, items):
        if [low.lt(v) for v in vals] != [low.prog.resolve_type(t) for _, t in c.key]:
            raise LustreError(x.pos, f"an element of a {c.name} literal of another type")
    # an element holding a set compares as a set, not leaf by leaf: not folded
    fold = all(coll_named(low.prog, low.prog.resolve_type(t)) is None for _, t in c.key)
    distinct: dict[tuple[object, ...], list[SSAValue]] = {}
    rest: list[list[SSAValue]] = []
    for vals in items:
        key = _constant_key(vals) if fold else None
        if key is None:
            rest.append(vals)
        elif key not in distinct:
            distinct[key] = vals
    s = _empty(low, c, e.pos)
    if distinct:
        kept = list(distinct.values())[:c.cap]
        yes = _const_bool(low, True, e.pos)
        slots = [(yes, k, []) for k in kept] + _slots(c, s)[len(kept):]
        s = _pack(low.const(1 if len(distinct) > c.cap else 0, c.name, e.pos), slots)
    for vals in rest:
        s = _insert(low, c, s, vals, [], e.pos)
    _drop_unused_constants(low, start, set(s))
    return s


def _drop_unused_constants(low: NodeLowering, start: Operation | None,
                           keep: set[SSAValue]) -> None:
    """Erase the `arith.constant`s emitted after `start` that nothing reads
    and that are not in `keep` (a literal's duplicate and overflowing elements)."""
    op = low.block.first_op if start is None else start.next_op
    while op is not None:
        nxt = op.next_op
        if isinstance(op, arith.ConstantOp) and not op.results[0].uses \
                and op.results[0] not in keep:
            low.offsets.pop(op, None)
            low.block.erase_op(op)
        op = nxt


def _update(low: NodeLowering, e: ast.RecordUpdate, c: Coll | None,
            vals: list[SSAValue] | None) -> list[SSAValue]:
    """`m[k := v; ...]`, `map[k := v; ...]` (c None: typed by the first entry)."""
    for name, pos, x in e.updates:
        key_e: ast.Expr
        if name.startswith("["):
            key_e = ast.Const(pos, int(name[1:-1]), "int")
        elif name.startswith("."):
            raise LustreError(pos, "a map key must be a variable or an int literal")
        else:
            key_e = ast.Var(pos, name)
        key = low.expr(key_e)
        val = low.expr(x)
        if c is None or vals is None:
            c = _make(low.prog, "map", _leaves_of_values(low, key, pos),
                      _leaves_of_values(low, val, pos), pos)
            vals = _empty(low, c, e.pos)
        if c.kind != "map":
            raise LustreError(pos, f"'[k := v]' updates a map, not a {c.name}")
        want_k = [low.prog.resolve_type(t) for _, t in c.key]
        want_v = [low.prog.resolve_type(t) for _, t in c.val]
        if [low.lt(v) for v in key] != want_k or [low.lt(v) for v in val] != want_v:
            raise LustreError(pos, f"an entry of another type in a {c.name}")
        vals = _insert(low, c, vals, key, val, pos)
    assert vals is not None
    return vals


def lower_expr(low: NodeLowering, e: ast.Expr) -> list[SSAValue] | None:
    """The set and map expressions of a node (None for any other)."""
    if isinstance(e, ast.Call) and e.node == SET_LIT:
        return _literal(low, e)
    if isinstance(e, ast.Call) and e.node in (FITS, SMALL):
        vals = low.expr(e.args[0])
        c = _coll_of_values(low, vals)
        assert c is not None
        return [_within(low, c, vals, e.node == SMALL, e.pos)]
    if isinstance(e, ast.Var) and e.name == SET_LIT:
        return _empty(low, _type_arg_coll(low, e, "set"), e.pos)
    if isinstance(e, ast.Var) and e.name == EMPTY_MAP:
        return _empty(low, _type_arg_coll(low, e, "map"), e.pos)
    if isinstance(e, ast.RecordUpdate):
        if isinstance(e.arg, ast.Var) and e.arg.name == "map" and e.arg.targs is None \
                and "map" not in low.env and "map" not in low.ast.arrays:
            return _update(low, e, None, None)
        from steplus.lowering.lustre.arrays import path_of
        if path_of(low, e.arg) is None:
            vals, c = _peek(low, e.arg)
        else:
            vals = low.expr(e.arg)
            c = _coll_of_values(low, vals)
        return None if c is None else _update(low, e, c, vals)
    if isinstance(e, ast.Index) and e.hi is None:
        from steplus.lowering.lustre.arrays import path_of
        p = path_of(low, e)
        if p is not None and (p in low.ast.arrays or p in low.env):
            return None
        vals, c = _peek(low, e.arg)
        if c is None:
            return None
        if c.kind != "map":
            raise LustreError(e.pos, f"'[k]' reads a map, not a {c.name}")
        return _lookup(low, c, vals, low.expr(e.index), e.pos)
    if isinstance(e, ast.Binary) and e.op == "in":
        x = low.expr(e.lhs)
        vals = low.expr(e.rhs)
        c = _coll_of_values(low, vals)
        if c is None:
            raise LustreError(e.rhs.pos, "'in' tests membership in a set or a map")
        if [low.lt(v) for v in x] != [low.prog.resolve_type(t) for _, t in c.key]:
            raise LustreError(e.lhs.pos, f"'in' tests an element of another type than "
                              f"{c.name}'s")
        return [_member(low, c, x, vals, e.pos)]
    if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "=", "<>"):
        a, ca = _peek(low, e.lhs)
        b, cb = _peek(low, e.rhs)
        if ca is None and cb is None:
            return None
        _memo(low).pop(id(e.lhs), None)
        _memo(low).pop(id(e.rhs), None)
        if e.op in ("=", "<>"):
            eq = values_equal(low, a, b, e.pos)
            return [eq if e.op == "=" else _not(low, eq, e.pos)]
        if ca is None or cb is None:
            raise LustreError(e.pos, f"'{e.op}' mixes a set or map and another type")
        if e.op == "+" and ca is cb and ca.kind == "set":
            return _union(low, ca, a, b, e.pos)
        if e.op in ("-", "*") and cb.kind == "set" and [
                low.prog.resolve_type(t) for _, t in ca.key] == [
                low.prog.resolve_type(t) for _, t in cb.key]:
            return _without(low, ca, a, cb, b, e.pos, keep_members=e.op == "*")
        raise LustreError(e.pos, f"'{e.op}' cannot be applied to {ca.name} and {cb.name}")
    return None


# -- node inputs and capacity properties --------------------------------------------


def canonicalize_inputs(low: NodeLowering) -> None:
    """A node's set and map inputs: header 0 (not overflowed), an element out of
    its subrange or refinement type not in the set (a map's entry whose key or
    value is out of its type not in the map: Kind 2's input is of that type),
    a map's later duplicate keys not in it."""
    prog = low.prog
    for d in low.ast.inputs:
        c = coll_named(prog, prog.resolve_type(d.type)) if d.type.tag else None
        if c is None or d.name not in low.env:
            continue
        names = low.ast.arrays.get(d.name, [])
        if len(names) != len(c.leaves) or any(n not in low.env for n in names):
            continue
        vals = [low.env[n] for n in names]
        slots = _slots(c, vals)
        out: list[Slot] = []
        for i, (has, k, v) in enumerate(slots):
            ok = [has]
            for (_, t), kv in zip(c.key, k):
                r = prog.int_range(t)
                if r is not None and low.lt(kv) == "int":
                    lo = low.emit(arith.CmpiOp(kv, low.const(r[0], "int", d.pos), "sge"), d.pos)
                    hi = low.emit(arith.CmpiOp(kv, low.const(r[1], "int", d.pos), "sle"), d.pos)
                    ok += [lo, hi]
            base = low.ast.arrays[d.name][1 + i * c.width + 1:1 + (i + 1) * c.width]
            for (_, t), leaf in zip([*c.key, *c.val], base):
                ok += [low.expr(renamed(pred, {var: leaf}))[0]
                       for var, pred in prog.unrefined(t)[1]]
            for hp, kp, _ in out[:i] if c.kind == "map" else []:
                ok.append(_not(low, _and(low, hp, values_equal(low, kp, k, d.pos), d.pos),
                               d.pos))
            out.append((_all(low, ok, d.pos), k, v))
        new = _pack(low.const(0, c.name, d.pos), out)
        for n, v in zip(names, new):
            low.env[n] = v
