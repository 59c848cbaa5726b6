"""Plain-Python reference models of the examples under examples/lus/.

Written from the comments of each example, independently of the runtime:
integers wrap like int32, floats are float32 computed in the example's order.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "examples" / "lus"))
import gen_lstm  # noqa: E402


def word_bit(word: str, k: int) -> bool:
    """Bit k of the k-periodic word `prefix(period)`."""
    prefix, period = word[: word.index("(")], word[word.index("(") + 1 : -1]
    return (prefix[k] if k < len(prefix) else period[(k - len(prefix)) % len(period)]) == "1"


def integrator(i):
    acc, out = np.int32(0), []
    with np.errstate(over="ignore"):
        for x in i:
            acc = np.int32(acc + np.int32(x))
            out.append(acc)
    return [out]


def two_cycle(x):
    c, y, out = 0, np.float32(0.0), []
    for v in x:
        out.append(y)
        y = np.float32(v) if c != 0 else y
        c = (c + 1) % 2
    return [out]


def counter(reset):
    prev, out = 0, []
    for r in reset:
        n = 0 if r else prev + 1
        out.append(n)
        prev = n
    return [out]


def watchdog(heartbeat, armed):
    since, alarms, counts = 0, [], []
    for hb, arm in zip(heartbeat, armed):
        count = (0 if hb else since + 1) if arm else since
        alarms.append(count > 4)
        counts.append(count)
        since = count
    return [alarms, counts]


def window_avg(x):
    hist, out = [np.float32(0)] * 3, []
    for v in x:
        v = np.float32(v)
        s = np.float32(np.float32(np.float32(v + hist[0]) + hist[1]) + hist[2])
        out.append(np.float32(s * np.float32(0.25)))
        hist = [v, hist[0], hist[1]]
    return [out]


def two_rate(x):
    acc = diff = 0
    slow_ticks = 0
    fast_out, acc_out, diff_out = [], [], []
    for n, v in enumerate(x):
        fast = int(np.int32(v)) * 3
        if word_bit("(01)", n):  # the slow clock
            s = acc + fast
            if word_bit("0(001)", slow_ticks):  # the third stage, on the slow clock
                diff = s - diff
            acc = s
            slow_ticks += 1
        fast_out.append(fast)
        acc_out.append(acc)
        diff_out.append(diff)
    return [fast_out, acc_out, diff_out]


def _sigmoid(a):
    one = np.float32(1)
    return one / (one + np.exp(-a))


def lstm(x, reset):
    w = gen_lstm.weights()
    h = c = np.zeros((1, gen_lstm.HIDDEN), np.float32)
    out = []
    for xt, r in zip(x, reset):
        if r:
            h = c = np.zeros_like(h)
        a = {g: (xt @ w[f"W_{g}"] + h @ w[f"U_{g}"]) + w[f"b_{g}"] for g in "ifgo"}
        c = _sigmoid(a["f"]) * c + _sigmoid(a["i"]) * np.tanh(a["g"])
        h = _sigmoid(a["o"]) * np.tanh(c)
        out.append(h.astype(np.float32))
    return [out]


def subsampled(x, reset):
    w = gen_lstm.weights()
    (hs,) = lstm(x, reset)
    last, out = np.zeros((1, gen_lstm.OUT), np.float32), []
    for n, h in enumerate(hs):
        if n % gen_lstm.PERIOD == 0:
            last = h @ w["D"] + w["d"]
        out.append(last)
    return [out]


# Instances on the base clock and on a sub-clock (the one on %c only reacts,
# and only advances its fby, when %c holds).
SUBCLOCKED_INSTANCES = """
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
lus.node @twice(%x: i32, %c: i1) -> (i32, i32) {
  %a = lus.instance @integr(%x) : (i32) -> i32
  %b = lus.instance @integr(%a) : (i32) -> i32
  %xw = lus.when %c %x : i32
  %s = lus.instance @integr(%xw) : (i32) -> i32
  %xn = lus.when not %c %x : i32
  %m = lus.merge %c %s %xn : i32
  lus.yield (%b : i32, %m : i32)
}
"""
