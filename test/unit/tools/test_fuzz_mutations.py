"""Property test: mutating valid inputs never yields a traceback or a hang.

The seeds are every round-trip test input of the repository (the dialect
`ops.mlir` files), so the property covers the steplus dialects as they grow.
Each mutated input must either be accepted (exit 0) or rejected with a located
`file:line:col: error:` diagnostic (exit 1), within a time limit.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO

DIAG = re.compile(r"^[^\n]+:\d+:\d+: error: .+")
SEEDS = sorted((REPO / "test" / "filecheck").rglob("ops.mlir")) + sorted(
    (REPO / "test" / "filecheck" / "tools").glob("*.mlir")
)
SEED_TEXTS = [p.read_bytes() for p in SEEDS]
TOKENS = [b"{", b"}", b"(", b")", b"<", b">", b"[", b"]", b":", b",", b"%", b"@",
          b"!", b"#", b"\"", b"->", b"=", b"0", b"-1", b"99999999999999999999",
          b"i32", b"f32", b"?", b"x", b"\xff", b"\n", b"// -----\n", b"step.", b"lus."]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEED_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "truncate"]))
        i = draw(st.integers(0, max(0, n - 1)))
        j = min(n, i + draw(st.integers(1, 40)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i]
    return text


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_inputs_fail_cleanly(tmp_path_factory, step_opt, data):
    path = tmp_path_factory.mktemp("fuzz") / "input.mlir"
    path.write_bytes(data)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        result = step_opt([str(path), "--split-input-file"])
    except _Timeout:
        raise AssertionError(f"step-opt hung on input {data!r}") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert "Traceback (most recent call last)" not in result.err
    assert "internal error" not in result.err, result.err
    assert result.code in (0, 1)
    if result.code == 1:
        assert DIAG.match(result.err.splitlines()[0]), result.err


def test_there_are_seeds():
    assert SEED_TEXTS
