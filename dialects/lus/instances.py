"""The size of a node's tree of instances, before anything builds it.

A node that instantiates another twice, which instantiates a third twice, ...
(a doubly recursive Kind 2 `function rec` unrolled: `fib(n - 1) + fib(n - 2)`)
has exponentially many instances in a program of linear size. The lus and
sync interpreters create one runner per instance and `lus-inline-instances`
copies the callee's body per instance, so each asks first how large the whole
tree is (`unrolled`), in time linear in the program.

Example::

    calls = {"top": ["fib1", "fib1"], "fib1": ["fib0"], "fib0": []}
    unrolled(calls, "top")   # 5: top, two fib1, two fib0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["unrolled", "unrolled_sizes"]


def unrolled(calls: Mapping[str, Sequence[str]], root: str,
             own: Mapping[str, int] | None = None) -> int:
    """The sum of `own[n]` (default 1) over every instance of the tree rooted at
    `root` (itself included), where `calls[n]` lists the callee of each instance
    in `n` (names not in `calls` count as leaves). A recursive cycle is cut where
    it closes (callers reject recursion)."""
    return unrolled_sizes(calls, [root], own)[root]


def unrolled_sizes(calls: Mapping[str, Sequence[str]], roots: Sequence[str],
                   own: Mapping[str, int] | None = None) -> dict[str, int]:
    """`unrolled` of every root and of each node below them, in one walk linear
    in the program (iterative, so deep chains are fine)."""
    total: dict[str, int] = {}
    for root in roots:
        if root in total:
            continue
        on_path = {root}
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            name, k = stack[-1]
            callees = calls.get(name, ())
            if k < len(callees):
                stack[-1] = (name, k + 1)
                callee = callees[k]
                if callee not in total and callee not in on_path:
                    on_path.add(callee)
                    stack.append((callee, 0))
                continue
            stack.pop()
            on_path.discard(name)
            total[name] = (1 if own is None else own.get(name, 1)) + sum(
                total.get(c, 0) for c in callees)
    return total
