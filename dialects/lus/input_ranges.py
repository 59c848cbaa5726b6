"""The values a `lus.node` input may take: the `lustre.input_ranges` attribute.

A node lowered from Lustre source with inputs of an enumerated type records,
per such input, the type's name and its least and greatest value (its
constructors are numbered from 0), so that `step-run` rejects an input stream
holding a value that is no constructor, at the input, before running:

```mlir
lus.node @n(%k: i32, %x: i32) -> (i32) attributes {lustre.input_ranges = {k = ["t", 0 : i64, 1 : i64]}} {
  lus.yield (%x : i32)
}
```

Example::

    node.attributes[INPUT_RANGES] = ranges_attr({"k": ("t", 0, 1)})
    input_problem(node, "k", [0, 1, 7])
    # "input 'k' is of type t (values 0..1) but holds 7 at tick 2"
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Operation

__all__ = ["INPUT_RANGES", "OBSERVERS", "OUTPUT_NAMES", "input_problem", "input_ranges",
           "names_attr", "observers", "observers_attr", "output_names", "ranges_attr"]

OUTPUT_NAMES = "lustre.outputs"
"""The discardable attribute naming the outputs of a node lowered from Lustre,
`["y", "z"]`: step-run prints them in its tick lines and uses them as the CSV
header and the .npz keys."""


def names_attr(names: list[str]) -> ArrayAttr:
    return ArrayAttr([StringAttr(n) for n in names])


def output_names(node: Operation) -> list[str] | None:
    """The output names of a node lowered from Lustre (None if unknown)."""
    attr = node.attributes.get(OUTPUT_NAMES)
    if not isinstance(attr, ArrayAttr):
        return None
    names = [a.data for a in attr.data if isinstance(a, StringAttr)]
    return names if len(names) == len(attr.data) else None

OBSERVERS = "lustre.observers"
"""The discardable attribute of an observer node `n$check` lowered from Lustre:
its extra bool outputs, after the node's own, one per assumption or property,
`[["assume", "x >= 0", 120 : i64], ["property", "ok", 141 : i64]]` (kind,
name, source offset)."""


def observers_attr(items: list[tuple[str, str, int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([StringAttr(k), StringAttr(n), IntegerAttr(p, i64)])
                      for k, n, p in items])


def observers(node: Operation) -> list[tuple[str, str, int]]:
    """The (kind, name, source offset) of each observer output of `node`."""
    attr = node.attributes.get(OBSERVERS)
    out: list[tuple[str, str, int]] = []
    if isinstance(attr, ArrayAttr):
        for item in attr.data:
            if (isinstance(item, ArrayAttr) and len(item.data) == 3
                    and isinstance(k := item.data[0], StringAttr)
                    and isinstance(n := item.data[1], StringAttr)
                    and isinstance(p := item.data[2], IntegerAttr)):
                out.append((k.data, n.data, p.value.data))
    return out

INPUT_RANGES = "lustre.input_ranges"
"""The discardable `lus.node` attribute: `{k = ["t", 0, 1]}`."""


def ranges_attr(ranges: dict[str, tuple[str, int, int]]) -> DictionaryAttr:
    """The attribute for `{input name: (type name, least, greatest)}`."""
    return DictionaryAttr({
        name: ArrayAttr([StringAttr(t), IntegerAttr(lo, i64), IntegerAttr(hi, i64)])
        for name, (t, lo, hi) in ranges.items()})


def input_ranges(node: Operation) -> dict[str, tuple[str, int, int]]:
    """The restricted inputs of a node: name -> (type name, least, greatest)."""
    attr = node.attributes.get(INPUT_RANGES)
    out: dict[str, tuple[str, int, int]] = {}
    if not isinstance(attr, DictionaryAttr):
        return out
    for name, spec in attr.data.items():
        if (isinstance(spec, ArrayAttr) and len(spec.data) == 3
                and isinstance(t := spec.data[0], StringAttr)
                and isinstance(lo := spec.data[1], IntegerAttr)
                and isinstance(hi := spec.data[2], IntegerAttr)):
            out[name] = (t.data, lo.value.data, hi.value.data)
    return out


def input_problem(node: Operation, name: str, values: object, first_tick: int = 0
                  ) -> str | None:
    """Why the stream `values` of input `name` is invalid, or None."""
    spec = input_ranges(node).get(name)
    if spec is None:
        return None
    t, lo, hi = spec
    arr = np.asarray(values).reshape(-1)
    bad = np.flatnonzero((arr < lo) | (arr > hi)) if arr.size else np.array([], int)
    if len(bad) == 0:
        return None
    k = int(bad[0])
    return (f"input '{name}' is of type {t} (values {lo}..{hi}) but holds "
            f"{arr[k]} at tick {first_tick + k}")
