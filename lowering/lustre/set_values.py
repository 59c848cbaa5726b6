"""Kind 2 sets and maps as the tools show them: the layout of a node's set and
map outputs, their values printed as sets (`{1, 3}`) and maps (`{1 -> 2}`),
and the capacity observers a plain run stops at.

A set or map output `s` of a node lowered from Lustre is the outputs `s` (the
header: 0, or 1 once overflowed), `s.has0`, `s.key0`, ... (`sets.py`). The
node's discardable attribute `lustre.collections` lists each such output:
`[["s", 0 : i64, ["set", 8 : i64, [""], []], 5 : i64]]` (name, index of the
header among the outputs, layout, source offset of its declaration). A layout is `[kind, slots, key, value]`, where key
and value list their leaves: `""` for a scalar, a layout for a nested set or
map. `show_collections` turns the header and slot columns of each into one
column of strings, each value's elements in ascending order:

    tick 2: s={-1, 3, 4} m={1 -> 2, 3 -> 4} b=True

Example::

    names, columns = show_collections(node, names, columns, str)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import re
from dataclasses import dataclass

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Operation

from steplus.dialects.lus.input_ranges import observers
from steplus.lowering.lustre import ast
from steplus.lowering.lustre.sets import Coll, coll_named

__all__ = ["COLLECTIONS", "Layout", "capacity_observers_of", "collections", "collections_attr",
           "header_overflows", "show_collections"]

COLLECTIONS = "lustre.collections"
"""The discardable `lus.node` attribute listing its set and map outputs."""

CAPACITY_NAME = re.compile(r"capacity of (set|map) '(.*)' \(([0-9]+) elements\)")
"""The name of a capacity property (`sets.capacity_name`): kind, variable, slots."""


@dataclass
class Layout:
    """A set or map value's scalars: header, then per slot a valid bit, the key's
    leaves and the value's (None: a scalar leaf, a Layout: a nested set or map)."""

    kind: str
    cap: int
    key: list[Layout | None]
    val: list[Layout | None]

    @property
    def size(self) -> int:
        return 1 + self.cap * (1 + _width(self.key) + _width(self.val))


def _width(parts: Sequence[Layout | None]) -> int:
    return sum(1 if p is None else p.size for p in parts)


def _layout_attr(prog, c: Coll) -> ArrayAttr:
    def parts(leaves: list[tuple[str, ast.TypeRef]]) -> ArrayAttr:
        out: list[Attribute] = []
        j = 0
        while j < len(leaves):
            t = leaves[j][1]
            inner = coll_named(prog, prog.resolve_type(t)) if t.tag else None
            if inner is not None and j + len(inner.leaves) <= len(leaves):
                out.append(_layout_attr(prog, inner))
                j += len(inner.leaves)
            else:
                out.append(StringAttr(""))
                j += 1
        return ArrayAttr(out)

    return ArrayAttr([StringAttr(c.kind), IntegerAttr(c.cap, i64), parts(c.key), parts(c.val)])


def collections_attr(prog, outputs: list[ast.Decl]) -> ArrayAttr | None:
    """The `lustre.collections` attribute for a node's (scalarized) outputs, None
    if none is a set or map."""
    items: list[Attribute] = []
    for k, d in enumerate(outputs):
        c = coll_named(prog, prog.resolve_type(d.type)) if d.type.tag else None
        if c is not None and k + len(c.leaves) <= len(outputs):
            items.append(ArrayAttr([StringAttr(d.name), IntegerAttr(k, i64),
                                    _layout_attr(prog, c), IntegerAttr(d.pos, i64)]))
    return ArrayAttr(items) if items else None


def _decode(attr: Attribute) -> Layout | None:
    if not (isinstance(attr, ArrayAttr) and len(attr.data) == 4):
        return None
    kind, cap, key, val = attr.data
    if not (isinstance(kind, StringAttr) and isinstance(cap, IntegerAttr)
            and isinstance(key, ArrayAttr) and isinstance(val, ArrayAttr)):
        return None
    parts: list[list[Layout | None]] = [[], []]
    for out, items in zip(parts, (key, val)):
        for a in items.data:
            out.append(None if isinstance(a, StringAttr) else _decode(a))
            if isinstance(a, ArrayAttr) and out[-1] is None:
                return None
    return Layout(kind.data, cap.value.data, parts[0], parts[1])


def collections(node: Operation) -> list[tuple[str, int, Layout, int]]:
    """(name, header index, layout, source offset of the declaration) of each set
    or map output of `node`."""
    attr = node.attributes.get(COLLECTIONS)
    out: list[tuple[str, int, Layout, int]] = []
    if isinstance(attr, ArrayAttr):
        for item in attr.data:
            if (isinstance(item, ArrayAttr) and len(item.data) == 4
                    and isinstance(n := item.data[0], StringAttr)
                    and isinstance(k := item.data[1], IntegerAttr)
                    and (lay := _decode(item.data[2])) is not None
                    and isinstance(p := item.data[3], IntegerAttr)):
                out.append((n.data, k.value.data, lay, p.value.data))
    return out


def header_overflows(node: Operation, columns: list) -> list[tuple[int, str, str, int, int]]:
    """(first tick, kind, name, slots, source offset) of each set or map output
    whose header says it overflowed (what a run that cannot watch the node's
    locals checks)."""
    out: list[tuple[int, str, str, int, int]] = []
    for name, k, lay, pos in collections(node):
        col = columns[k] if k < len(columns) else []
        bad = next((t for t in range(len(col)) if int(col[t]) != 0), None)
        if bad is not None:
            out.append((bad, lay.kind, name, lay.cap, pos))
    return sorted(out)


def _show(lay: Layout, values: Sequence[object], fmt: Callable[[object], str]) -> str:
    """The set or map whose scalars are `values` (len = lay.size)."""
    pos = 1
    items: list[tuple[tuple, str]] = []

    def part(parts: list[Layout | None]) -> tuple[tuple, str]:
        nonlocal pos
        raw: list[object] = []
        shown: list[str] = []
        for p in parts:
            if p is None:
                raw.append(values[pos])
                shown.append(fmt(values[pos]))
                pos += 1
            else:
                text = _show(p, values[pos:pos + p.size], fmt)
                raw.append(text)
                shown.append(text)
                pos += p.size
        one = shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ")"
        return tuple(raw), one

    for _ in range(lay.cap):
        has = bool(values[pos])
        pos += 1
        (kraw, key), (_, val) = part(lay.key), part(lay.val)
        if has:
            items.append((kraw, key if lay.kind == "set" else f"{key} -> {val}"))
    try:
        items.sort(key=lambda kv: kv[0])
    except TypeError:  # keys mixing kinds: by their text
        items.sort(key=lambda kv: kv[1])
    return "{" + ", ".join(text for _, text in items) + "}"


def show_collections(node: Operation, names: list[str], columns: list,
                     fmt: Callable[[object], str]) -> tuple[list[str], list]:
    """`names` and `columns` (one per output, one value per tick) with each set
    or map output's header and slot columns replaced by one column of its
    values as text (`{1, 3}`, `{1 -> 2}`)."""
    found = {k: (n, lay) for n, k, lay, _ in collections(node)}
    if not found or len(names) != len(columns):
        return names, columns
    out_names: list[str] = []
    out_cols: list = []
    k = 0
    while k < len(columns):
        if k in found and k + found[k][1].size <= len(columns):
            name, lay = found[k]
            group = columns[k:k + lay.size]
            ticks = min((len(c) for c in group), default=0)
            out_names.append(name)
            out_cols.append([_show(lay, [c[t] for c in group], fmt) for t in range(ticks)])
            k += lay.size
            continue
        out_names.append(names[k])
        out_cols.append(columns[k])
        k += 1
    return out_names, out_cols


def capacity_observers_of(checker: Operation) -> list[tuple[int, str, str, int, int]]:
    """The capacity properties of `n$check`: (index among its observers, kind,
    variable, slots, source offset of the variable's declaration)."""
    out: list[tuple[int, str, str, int, int]] = []
    for j, (kind, name, pos) in enumerate(observers(checker)):
        m = CAPACITY_NAME.fullmatch(name)
        if kind == "property" and m is not None:
            out.append((j, m.group(1), m.group(2), int(m.group(3)), pos))
    return out
