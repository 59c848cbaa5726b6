"""Lower bounds of the blocked contexts' future clocks, along the wait graph.

A context's bound is `max(clock, bound(dep) + 1)` over what it waits on: the
peer of its channel (a receiver waiting on an empty channel will not run
before its sender's bound + 1; a sender waiting on a full channel not before
its receiver's bound + 1), or — for a poller that needs *every* one of a set of
inputs before it acts again (FlatReassemble, `need_all`) — the senders of
those inputs that are still empty. A context waiting for HBM is bounded by
its tile's earliest completion (`hbm_lb`), a runnable one or another poller
(EagerMerge) by its own clock, a finished one by INF. A wait cycle never
resolves, so its members and whatever waits on them are bounded by INF.

A context blocked on one channel keeps its bound's *form* along its chain of
waits, `max(fa, bound(anchor) + fk)`, valid until a context on that chain
runs (`invalidate`; not when the anchor, a context many others wait on,
does), so a polling round or an HBM advance (one *query* each) evaluates
most bounds in O(1) (`bound`). Inside, bounds are native ints and INF is
`NEVER`. The engine (`engine.Simulator`) calls these; the deadlock report
uses `wait_cycles`.

Example:

```python
qid = sim.qid = sim.qid + 1
b = bound(ctx, qid)      # NEVER: the context never acts again
```
"""

from __future__ import annotations

from typing import Any

from steplus.runtime.fabric.channel import Channel
from steplus.runtime.fabric.context import DEQ, HBM, NBPEEK, NEVER, PEEK, ENQ, ROOM, Context

def invalidate(ctx: Context) -> None:
    """`ctx` is about to change: drop its wait-chain form and, transitively,
    the forms that went through it (recorded in `fdeps`)."""
    stack = [ctx]
    while stack:
        c = stack.pop()
        c.fa = -1
        rd = c.fdeps
        if rd is not None:
            c.fdeps = None
            for r in rd:
                if r.fa >= 0:
                    stack.append(r)


def bound(c: Context, qid: int) -> int:
    """The bound of `c` in query `qid` (NEVER: INF). Follows the forms
    down the chain (`c`, its `fanc`, that one's `fanc`, ...) to a context
    whose bound is known in this query or that waits on nothing, then sets
    the bounds back up the chain; a FlatReassemble that needs several
    inputs is left to `_walk`. A context on the chain is marked in
    progress (`lb` = -1): met again, it is on a wait cycle (NEVER). The
    first context of the chain is kept in a local, the rest in a list made
    only for chains of two forms or more (most are one: an idle load behind
    its anchor)."""
    first: Context | None = None
    path: list[Context] | None = None
    d = c
    res: int
    while True:
        if d.qid == qid:
            v = d.lb
            res = NEVER if v < 0 else v
            break
        own: int = d.clock
        if d.done:
            own = NEVER
        else:
            blk = d.block
            if blk is not None:
                kind = blk[0]
                if kind == HBM:
                    if d.hbm_lb > own:
                        own = d.hbm_lb
                elif kind == NBPEEK:
                    if d.need_all is not None:
                        res = _walk(d, qid)
                        break
                else:  # blocked on one channel: its form
                    if d.fa < 0:
                        _form(d)
                    own = d.fa
                    anc = d.fanc
                    if anc is not None and own < NEVER:
                        d.qid = qid
                        d.lb = -1  # in progress
                        if first is None:
                            first = d
                        elif path is None:
                            path = [d]
                        else:
                            path.append(d)
                        d = anc
                        continue
        d.qid = qid
        d.lb = res = own
        break
    if path is not None:
        i = len(path)
        while i:
            i -= 1
            e = path[i]
            b = res + e.fk
            if b > NEVER:
                b = NEVER
            if e.fa > b:
                b = e.fa
            e.lb = res = b
    if first is not None:
        b = res + first.fk
        if b > NEVER:
            b = NEVER
        if first.fa > b:
            b = first.fa
        first.lb = res = b
    return res


def _walk(start: Context, qid: int) -> int:
    """The bound of `start` in query `qid` (see `bound`): an
    iterative DFS over chain ends and anchors; a frame is [context, what
    it waits on, next index, bound so far, distance to them]."""
    stack: list[list[Any]] = []
    d: Context | None = start
    res = -1  # -1: no result to fold into the top frame
    while True:
        if d is not None:
            d.qid = qid
            d.lb = -1  # in progress: reached again, it is on a wait cycle
            own: int = d.clock
            deps: list[Context] | None = None
            off = 1
            if d.done:
                own = NEVER
            else:
                blk = d.block
                if blk is not None:
                    kind = blk[0]
                    if kind == HBM:
                        if d.hbm_lb > own:
                            own = d.hbm_lb
                    elif kind == NBPEEK:
                        need = d.need_all
                        if need is not None:
                            deps = [ch.sender for ch in need if not ch.q and not ch.closed]
                    else:  # blocked on one channel: its form
                        if d.fa < 0:
                            _form(d)
                        fa = d.fa
                        own = fa
                        anc = d.fanc
                        if anc is not None and fa < NEVER:
                            deps = [anc]
                            off = d.fk
            if deps:
                stack.append([d, deps, 0, own, off])
            else:
                d.lb = res = own
            d = None
        if not stack:
            return res
        top = stack[-1]
        if res >= 0:
            b: int = res + top[4]
            if b > NEVER:
                b = NEVER
            if b > top[3]:
                top[3] = b
            res = -1
        waits: list[Context] = top[1]
        i: int = top[2]
        if i < len(waits):
            nd: Context = waits[i]
            top[2] = i + 1
            if nd.qid == qid:
                v = nd.lb
                res = NEVER if v < 0 else v
            else:
                d = nd
            continue
        stack.pop()
        c: Context = top[0]
        c.lb = res = top[3]


def _form(start: Context) -> None:
    """Set the form of `start`, blocked on one channel, and of the contexts
    down its chain of single waits: `fa` = the largest `clock + distance`
    along the chain before `fanc`, `fk` = the distance to `fanc`, where
    `fanc` is the first context that is an anchor or not blocked on one
    channel (None after a wait cycle: `fa` = NEVER). A walk that meets a
    context with a form uses it; each context records in the next one's
    `fdeps` that its form went through it. A context on the walk is
    marked by `fk = -1`."""
    path: list[Context] = []
    d = start
    fa: int
    fk: int
    anc: Context | None
    while True:
        path.append(d)
        d.fk = -1  # on the walk
        blk = d.block
        assert blk is not None
        kind = blk[0]
        ch: Channel = blk[1]
        dep: Context = ch.sender if kind == DEQ or kind == PEEK else ch.receiver
        dblk = dep.block
        if dep.anchor or dep.done or dblk is None or dblk[0] == HBM or dblk[0] == NBPEEK:
            fa, fk, anc = d.clock, 1, dep  # a chain end: evaluated at each query
            break
        dfa = dep.fa
        if dfa >= 0 or dep.fk == -1:
            rd = dep.fdeps
            if rd is None:
                dep.fdeps = [d]
            else:
                rd.append(d)
            if dfa < 0:  # on the walk: a wait cycle, never resolves
                fa, fk, anc = NEVER, 0, None
            else:
                b = dfa + 1 if dfa < NEVER else NEVER
                fa = d.clock if d.clock > b else b
                fk, anc = dep.fk + 1, dep.fanc
            break
        d = dep
    # the tail's form is set; each earlier context waits on the next
    i = len(path) - 1
    nxt = path[i]
    nxt.fa, nxt.fk, nxt.fanc = fa, fk, anc
    while i:
        i -= 1
        c = path[i]
        rd = nxt.fdeps
        if rd is None:
            nxt.fdeps = [c]
        else:
            rd.append(c)
        b = fa + 1 if fa < NEVER else NEVER
        fa = c.clock if c.clock > b else b
        fk += 1
        c.fa, c.fk, c.fanc = fa, fk, anc
        nxt = c


def waits_on(c: Context) -> list[Context] | None:
    """What a blocked context waits on (None: a terminal, bound = the start value)."""
    if c.done:
        return None
    blk = c.block
    if blk is None:
        return None
    kind = blk[0]
    if kind == DEQ or kind == PEEK:
        return [blk[1].sender]
    if kind == ENQ or kind == ROOM:
        return [blk[1].receiver]
    if kind == NBPEEK:
        need = c.need_all
        if need is None:
            return None
        return [ch.sender for ch in need if not ch.q and not ch.closed]
    return None  # HBM: handled by the caller's start value


def pollers_starved(pollers_list: list[Context]) -> bool:
    """True when only the pollers could act and they never will: every
    channel into a poller is empty and open, and the chain of waits from
    each of their senders ends at a poller (or cycles) instead of at a
    context that can act (ready, or waiting for an HBM transfer).

    Then no channel into a poller can receive an element, so the pollers
    would be answered Nothing forever, their clocks advancing without end:
    a poller in a wait cycle through itself (an EagerMerge whose inputs
    wait for its own selector output, a feedback edge without a seed) is
    a deadlock, not a hang. The lower bounds cannot see this: an
    EagerMerge is bounded by its own clock, which its empty polling rounds
    keep advancing. Checked every `engine._STARVE_CHECK` polling rounds in a row
    (cheap; a hang is caught within that many rounds)."""
    pollers = set(pollers_list)
    if not pollers:
        return False
    for ctx in pollers:
        for ch in ctx.ins:
            if ch.q or ch.closed:
                return False
    for ctx in pollers:
        for ch in ctx.ins:
            c, seen = ch.sender, set()
            while c not in pollers and c not in seen:
                if c.done or c.block is None or c.block[0] == HBM:
                    return False  # it can still act
                seen.add(c)
                deps = waits_on(c)
                if not deps:
                    return False
                c = deps[0]
    return True


def wait_cycles(contexts: list[Context]) -> set[Context]:
    """The contexts on a cycle of the wait graph (`waits_on`)."""
    color: dict[Context, int] = {}
    found: set[Context] = set()
    for s in contexts:
        if s in color:
            continue
        path = [s]
        color[s] = 1
        stack = [iter(waits_on(s) or ())]
        while stack:
            d = next(stack[-1], None)
            if d is None:
                stack.pop()
                color[path.pop()] = 2
            elif d not in color:
                color[d] = 1
                path.append(d)
                stack.append(iter(waits_on(d) or ()))
            elif color[d] == 1:
                found.update(path[path.index(d):])
    return found
