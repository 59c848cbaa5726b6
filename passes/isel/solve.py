"""Bounded z3 equivalence queries for `isel-verify`.

`check_outputs(pairs, timeout_ms, memory_mb)` decides whether some output
element of the input program differs from the selected program's.  Instead
of one disjunction over every output (whose memory grows with the program:
gigabytes on a 128x128 max-pool), each differing pair is its own query —
sound, since `∨ dᵢ` is satisfiable iff some `dᵢ` is.  Queries equal up to a
renaming of the input variables (interior windows of a pool, rows of a
matmul) are asked once: each disequality is rewritten over canonical
variables numbered in first-occurrence order, and z3's hash-consing makes
equal results the same AST.

Every query runs under z3 limits: the time left before a deadline (the end
of the function's `timeout-ms` budget) and a memory ceiling (`memory_mb`,
z3's `memory_max_size`).  A query z3 cannot decide within them — or any
`Z3Exception` — is `unknown` with z3's reason: "not proved", never "differs".

Example::

    v = check_outputs([x.t != y.t for x, y in pairs], time.monotonic() + 60, memory_mb=2048)
    v.status    # "unsat" (proved), "sat" (a counterexample) or "unknown"
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import z3


@dataclass
class Verdict:
    """The outcome: `status`, z3's reason when unknown, and query counts."""

    status: str
    reason: str = ""
    queries: int = 0
    unknown: int = 0
    checked: int = 0  # differing outputs looked at (all of them unless the budget ran out)


# canonicalise only queries of at most this many distinct subterms (larger ones are asked as they are:
# renaming costs a walk of the query, and big queries are rarely repeated)
CANONICAL_NODES = 20_000


def _variables(e: z3.ExprRef) -> list[z3.ExprRef] | None:
    """The free constants of `e` in depth-first, left-to-right first-occurrence order (DAG-aware);
    None past `CANONICAL_NODES` subterms."""
    seen: set[int] = set()
    out: list[z3.ExprRef] = []
    stack = [e]
    while stack:
        t = stack.pop()
        i = t.get_id()
        if i in seen:
            continue
        seen.add(i)
        if len(seen) > CANONICAL_NODES:
            return None
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t)
        elif z3.is_app(t):
            stack.extend(reversed(t.children()))
    return out


def canonical(e: z3.ExprRef) -> z3.ExprRef:
    """`e` over canonical variables `_v0, _v1, ...` (same sorts), numbered by first occurrence
    (`e` itself if it is too large to rename)."""
    vs = _variables(e)
    if vs is None:
        return e
    return z3.substitute(e, *[(v, z3.Const(f"_v{k}", v.sort())) for k, v in enumerate(vs)]) if vs else e


@contextmanager
def _memory_limit(memory_mb: int):
    old = z3.get_param("memory_max_size")
    z3.set_param("memory_max_size", int(memory_mb))
    try:
        yield
    finally:
        z3.set_param("memory_max_size", old)


def _query(diff: z3.ExprRef, timeout_ms: float) -> tuple[str, str]:
    solver = z3.Solver()
    solver.set("timeout", max(1, int(timeout_ms)))
    try:
        solver.add(diff)
        status = str(solver.check())
        return status, solver.reason_unknown() if status == "unknown" else ""
    except z3.Z3Exception as e:
        return "unknown", _text(e)


def _text(e: z3.Z3Exception) -> str:
    text = e.value.decode(errors="replace") if isinstance(e.value, bytes) else str(e.value)
    return text.strip() or "z3 exception"


def check_outputs(diffs: list[z3.BoolRef], deadline: float, memory_mb: int,
                  progress: Callable[[str], None] | None = None) -> Verdict:
    """`sat` if some disequality holds for some input, `unsat` if none can, else `unknown`.

    `deadline` is a `time.monotonic()` instant: no query runs past it.  `progress`, if given, is
    called before each query with a line saying how far the check is (it decides when to print)."""
    verdict = Verdict("unsat")
    asked: dict[int, z3.ExprRef] = {}  # canonical AST id -> AST (kept alive so ids stay unique)
    with _memory_limit(memory_mb):
        for diff in diffs:
            if progress is not None:
                progress(f"{verdict.checked} of {len(diffs)} differing outputs checked ({verdict.queries} z3 queries)")
            if time.monotonic() >= deadline:  # the budget is spent: the remaining outputs are not proved
                verdict.unknown += 1
                verdict.status, verdict.reason = "unknown", verdict.reason or "timeout"
                break
            verdict.checked += 1
            try:
                key = canonical(diff)
            except z3.Z3Exception as e:  # e.g. the memory ceiling, hit while renaming
                verdict.unknown += 1
                verdict.status, verdict.reason = "unknown", verdict.reason or _text(e)
                break
            if key.get_id() in asked:
                continue
            asked[key.get_id()] = key
            left = (deadline - time.monotonic()) * 1000
            verdict.queries += 1
            status, reason = _query(key, left)
            if status == "sat":
                return Verdict("sat", "", verdict.queries, verdict.unknown, verdict.checked)
            if status == "unknown":
                verdict.unknown += 1
                verdict.status, verdict.reason = "unknown", verdict.reason or reason
    return verdict
