"""Kind 2's imperative blocks (lowering/lustre/frames.py), written as Kind 2
users write them: frame blocks with initializations and `last`, `if ... fi` and
`when ... end` blocks, and the lazy `when c then a else b`. Outputs derived by
hand, on the lus and sync interpreters and IREE batched and per tick."""

from __future__ import annotations

import numpy as np
import pytest

from steplus.tools.cli import InputError
from steplus.tools.lus_check import falsify

from test_lustre_oracles import TICKS, _inputs, _module, _on_every_backend

FRAME = """\
node acc(m: bool; x: int) returns (n: int; big: bool);
let
  frame (n)
    n = 10;
  let
    if m then
      n = last n + x;
    fi
  tel
  big = n > 100;
  check "grows with positive x" true -> (x > 0 and m => n > pre n);
tel

node hold(m: bool; x: int) returns (y: int);
let
  frame (y)
  let
    when m then
      y = x;
    end
  tel
tel
"""


def _acc(m, x):
    n, out = 10, []
    for t in range(TICKS):
        n = n + int(x[t]) if m[t] else n
        out.append(n)
    return out


def test_frame_keeps_the_last_value_from_its_initialization():
    module = _module(FRAME)
    rng = np.random.default_rng(5)
    m = rng.random(TICKS) < 0.6
    x = rng.integers(-5, 40, TICKS)
    n = _acc(m, x)
    _on_every_backend(module, "acc", {"m": m, "x": x}, [n, np.asarray(n) > 100])
    assert falsify(module, "acc", ticks=30, runs=30, seed=0).violation is None


def test_frame_without_initialization_starts_from_an_oracle():
    module = _module(FRAME)
    assert _inputs(module, "hold") == ["m", "x", "any.16.10"]  # at `y` in frame (y)
    rng = np.random.default_rng(6)
    m = rng.random(TICKS) < 0.5
    m[0] = False
    x = rng.integers(-9, 9, TICKS)
    o = rng.integers(100, 200, TICKS)
    y, out = int(o[0]), []
    for t in range(TICKS):
        y = int(x[t]) if m[t] else y
        out.append(y)
    _on_every_backend(module, "hold", {"m": m, "x": x, "any.16.10": o}, [out])


BLOCKS = """\
node toggle() returns (t: bool);
let t = true -> not pre t; tel

node split(x: int) returns (a, b: int);
let
  if toggle() then
    a = x; b = 0;
  else
    (a, b) = (0, x);
  fi
tel

node count(x: int) returns (c: int);
let c = x -> pre c + x; tel

node lazy(x: int; go: bool) returns (y, z: int);
let
  y = when go then count(x) else -1;
  z = if go then count(x) else -1;
tel
"""


def test_if_block_takes_one_branch_per_tick_for_all_its_variables():
    module = _module(BLOCKS)
    x = np.arange(1, TICKS + 1)
    even = np.arange(TICKS) % 2 == 0  # one toggle instance: its guard is shared
    _on_every_backend(module, "split", {"x": x}, [np.where(even, x, 0), np.where(even, 0, x)])


def test_when_then_else_runs_a_branch_call_only_when_taken():
    module = _module(BLOCKS)
    rng = np.random.default_rng(7)
    x = rng.integers(-9, 9, TICKS)
    go = rng.random(TICKS) < 0.5
    lazy = np.where(go, np.cumsum(np.where(go, x, 0)), -1)  # sums x over the ticks of go
    eager = np.where(go, np.cumsum(x), -1)  # `if`: count runs every tick
    _on_every_backend(module, "lazy", {"x": x, "go": go}, [lazy, eager])


REACH = """\
node counter(x: int) returns (out: int);
let
  out = 0 -> pre out + 1;
  check reachable "six" out = 6 within 7;
  check reachable out = 15 from 10 within 20;
  check reachable out = 15 at 14;
  check reachable x > 5;
tel
"""


def test_reachability_checks_report_their_first_witness():
    module = _module(REACH)
    report = falsify(module, "counter", ticks=30, runs=5, seed=0)
    assert report.violation is None and report.properties == 0
    # out = t: reached at the tick t within the bounds; `out = 15 at 14` never
    assert report.reached["six"] == (0, 6)
    assert report.reached["out = 15 from 10 within 20"] == (0, 15)
    assert report.reached["out = 15 at 14"] is None
    run, tick = report.reached["x > 5"] or (-1, -1)
    assert run == 0 and tick >= 0


@pytest.mark.parametrize("src,line,col,message", [
    ("node f(c: bool) returns (a, b: int);\nlet\n  if c then a = 1; b = 2; else a = 3; fi\ntel\n",
     3, 3, "'b' is defined in one branch of this 'if' block only (outside a frame block "
     "every branch must define it)"),
    ("node f(x: int) returns (y: int);\nlet y = last x; tel\n", 2, 9,
     "'last' outside a frame block"),
    ("node f(c, d: bool; x: int) returns (y: int);\nlet\n  frame (y) y = 0;\n"
     "  let when c then when d then y = pre x; end end tel\ntel\n", 4, 35,
     "unsupported construct: 'pre', '->', 'fby' and node calls inside a Kind 2 'when' block "
     "other than in an equation 'x = e' of one variable, in a block not nested in another"),
    ("node g() returns (a, b: int); let a = 1; b = 2; tel\n"
     "node f(c: bool; x: int) returns (y, z: int);\nlet\n  frame (y, z) y = 0; z = 0;\n"
     "  let when c then y, z = g(); end tel\ntel\n", 5, 26,
     "unsupported construct: 'pre', '->', 'fby' and node calls inside a Kind 2 'when' "
     "block other than in an equation 'x = e' of one variable"),
    ("node f(x: int) returns (y: int);\nlet\n  frame (x) let x = 1; tel\n  y = 0;\ntel\n",
     3, 10, "'x' in a frame block must be an output or a local of the node"),
    ("node f(x: int) returns (y, z: int);\nlet\n  frame (y) let y = 1; z = 2; tel\ntel\n",
     3, 3, "'z' is defined in the frame block but not listed in 'frame (...)'"),
    ("node f(x: int) returns ();\nlet check reachable x > 0 before 3; tel\n", 2, 27,
     "syntax error: unexpected 'before' (a reachability check takes 'from n', 'within n' "
     "or 'at n')"),
])
def test_block_errors_are_located(src, line, col, message):
    with pytest.raises(InputError) as info:
        _module(src)
    assert info.value.lines[0].startswith(f"t.lus:{line}:{col}: error: {message}")
