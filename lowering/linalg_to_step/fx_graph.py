"""Reading a `torch.export` graph without importing torch: node names, shapes, source lines.

The recognizers (`moe_match.py`, `attention_match.py`) and the driver
(`aten.py`) read FX nodes duck-typed: `op`, `target`, `args`, `kwargs`,
`users`, `all_input_nodes`, `meta["val"]` (a fake tensor: `shape`, `dtype`)
and `meta["stack_trace"]`. A pattern that does not match raises
`NotRecognized(node, message)`; the driver turns it into a `Remark` at
`where_of(node)`: the innermost frame of the node's stack trace that is not
inside torch itself, i.e. the line of the user's model (`self.w1(x)` in the
user's `forward`, not `torch/nn/modules/linear.py`).

Example::

    where_of(linear_node)    # "/home/me/model.py:34"
    shape_of(linear_node)    # (8, 64), None for a data-dependent size
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_NODES = 1 << 20  # graph walks are bounded by the graph size; refuse absurd graphs
BOOKKEEPING = {"aten.sym_size.int", "aten._assert_scalar.default", "ge", "le",
               "aten.sym_constrain_range_for_size.default",
               "aten._assert_tensor_metadata.default"}
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_TORCH_FILE = re.compile(r"[/\\](torch|functorch|torchgen)[/\\]")


class NotRecognized(Exception):
    """A pattern check failed at `node` (its source line goes into the remark)."""

    def __init__(self, node, message: str):
        super().__init__(message)
        self.node, self.message = node, message


@dataclass(frozen=True)
class Remark:
    """A located remark: `where` is `file:line` of the user's source (or the node name)."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: remark: {self.message}"


def name_of(node) -> str:
    """The ATen overload (`aten.linear.default`) or the function name (`getitem`)."""
    t = node.target
    return getattr(t, "__name__", "") if callable(t) and not hasattr(t, "_schema") else str(t)


def where_of(node) -> str:
    """`file:line` of the innermost frame of the node's stack trace outside torch
    (the user's model line), else the innermost frame, else `<node name>`."""
    trace = (getattr(node, "meta", {}) or {}).get("stack_trace") or ""
    frames = _FRAME.findall(trace)
    user = [f for f in frames if not _TORCH_FILE.search(f[0])]
    if user or frames:
        f, line = (user or frames)[-1]
        return f"{f}:{line}"
    return f"<node {getattr(node, 'name', '?')}>"


def shape_of(node) -> tuple[int, ...] | None:
    """The static shape of an FX node's value, None for a non-tensor or a data-dependent size."""
    val = (getattr(node, "meta", {}) or {}).get("val")
    shape = getattr(val, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(int(d) for d in shape)
    except Exception:  # symbolic (data-dependent) sizes: torch raises its own guard error
        return None


def rank_of(node) -> int | None:
    """The rank of an FX node's tensor value (its sizes may be data-dependent), or None."""
    shape = getattr((getattr(node, "meta", {}) or {}).get("val"), "shape", None)
    return None if shape is None else len(shape)


def dtype_of(node) -> str:
    """The node value's torch dtype as text (`torch.float32`), "" when it has none."""
    return str(getattr((getattr(node, "meta", {}) or {}).get("val"), "dtype", ""))


def is_op(node, target: str) -> bool:
    """`node` calls the ATen overload (or function) named `target`."""
    return getattr(node, "op", None) == "call_function" and name_of(node) == target


def getitem_of(node, k: int) -> Any:
    """The `node[k]` user of a multi-result node, or None."""
    for u in node.users:
        if name_of(u) == "getitem" and u.args[1] == k:
            return u
    return None


def ancestors(node, limit: int = MAX_NODES) -> set:
    """Every node `node` depends on (bounded walk)."""
    seen, todo = set(), [node]
    while todo and len(seen) < limit:
        n = todo.pop()
        for a in n.all_input_nodes:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    return seen


def placeholders(nodes) -> set:
    return {n for n in nodes if n.op == "placeholder"}


def bookkeeping_users(node) -> set:
    """The size asserts hanging off a data-dependent value (covered with it)."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        for u in n.users:
            if name_of(u) in BOOKKEEPING and u not in out:
                out.add(u)
                todo.append(u)
    return out


def drop_shared(covered: set, keep) -> None:
    """Remove from `covered` (in place) every node but `keep` whose value is also used
    outside it (a router's logits or a KV cache the model returns): those stay for the
    rest of the lowering to compute."""
    changed = True
    while changed:
        changed = False
        for n in list(covered):
            if n is not keep and any(u not in covered for u in n.users):
                covered.discard(n)
                changed = True
