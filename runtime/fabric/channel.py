"""Stream elements, tiles and channels of the simulated fabric (reference spec §1.1-§1.2).

A `Channel` is a FIFO between two contexts with a capacity `cap` (None =
unbounded). Every element carries a *visible time* `v`:

- enqueue of the k-th element at sender clock `tau_S` with stamp `sigma`:
  if `k >= cap`, the sender first waits for the dequeue of element `k - cap`
  (dequeued at `d`) and `tau_S := max(tau_S, d + 1)` (ack latency 1); then
  `v = max(sigma, tau_S + 1)` (send latency 1; a future stamp is not delayed);
- dequeue / peek-next: `tau_R := max(tau_R, v_head)`; a dequeue records
  `d = tau_R` (which frees capacity);
- a closed, empty channel yields end-of-stream (`None`) and
  `tau_R := max(tau_R, tau_S_final + 1)`.

The waiting itself is the engine's business (`engine.Simulator`); this module
only holds the state and the arithmetic.

Example:

```python
ch = Channel("a->b", cap=1)
ch.push(Element(Tile(16, 64, 4)), stamp=0, sender_clock=0)   # visible at 1
assert ch.head_visible() == 1
```
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np


class Tile:
    """A tile: `rows x cols` scalars of `nb` bytes, flags and (optionally) a value.

    `mu` is the reference's `read_from_mu` flag (the tile lives in an on-chip
    memory unit and is read from it); `valid` counts the valid rows of a padded
    tile; `value` is a numpy array in functional mode (None in timing mode).
    """

    __slots__ = ("rows", "cols", "nb", "mu", "valid", "value")

    def __init__(self, rows: int, cols: int, nb: int, mu: bool = False,
                 valid: int | None = None, value: np.ndarray | None = None):
        self.rows = rows
        self.cols = cols
        self.nb = nb
        self.mu = mu
        self.valid = rows if valid is None else valid
        self.value = value

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.nb

    def with_mu(self, mu: bool) -> "Tile":
        return Tile(self.rows, self.cols, self.nb, mu, self.valid, self.value)

    def __repr__(self) -> str:
        return f"Tile({self.rows}x{self.cols}x{self.nb}B{' mu' if self.mu else ''})"


class Element:
    """A stream element: a payload (tile, selector, ...) and a stop level (0 = `Val`)."""

    __slots__ = ("data", "level")
    data: Any  # Tile | Selector | ... (what a context expects on that channel)
    level: int

    def __init__(self, data: Any, level: int = 0):
        self.data = data
        self.level = level

    def __repr__(self) -> str:
        return f"Val({self.data})" if not self.level else f"ValStop({self.data}, {self.level})"


class Selector:
    """A multi-hot selector: the chosen output indices (ascending)."""

    __slots__ = ("chosen",)

    def __init__(self, chosen: tuple[int, ...]):
        self.chosen = chosen

    def __repr__(self) -> str:
        return f"Selector{self.chosen}"


# Answers of the non-blocking peek.
NOTHING = "Nothing"
CLOSED = "Closed"


class Channel:
    """A FIFO with capacity, visible times, ack bookkeeping and closure."""

    __slots__ = ("name", "cap", "q", "acks", "n_enq", "n_deq", "closed", "final",
                 "sender", "receiver", "waiting", "peak", "elem_bytes")

    def __init__(self, name: str, cap: int | None):
        if cap is not None and cap < 1:
            raise ValueError(f"channel {name}: capacity must be positive, got {cap}")
        self.name = name
        self.cap = cap
        self.q: deque[tuple[int, Element]] = deque()
        # the dequeue time of element j at acks[j % cap] (a ring, grown with the
        # dequeues up to cap): enqueue k >= cap waits for element k - cap's
        self.acks: list[int] = []
        self.n_enq = 0
        self.n_deq = 0
        self.closed = False
        self.final = 0  # the sender's final clock, once closed
        # the contexts at both ends (context.Context; set by Simulator.connect)
        self.sender: Any = None
        self.receiver: Any = None
        self.waiting: Any = None  # the context parked on this channel, if any
        self.peak = 0  # largest occupancy seen
        self.elem_bytes = 0  # declared bytes of one element (FIFO metric)

    # -- sender side ------------------------------------------------------
    def close(self, final_clock: int) -> None:
        self.closed = True
        self.final = final_clock

    # -- receiver side ----------------------------------------------------
    def pop(self, clock: int) -> tuple[int, Element]:
        """Dequeue the head at receiver clock `clock` (already >= v); returns (v, el)."""
        v, el = self.q.popleft()
        j = self.n_deq
        self.n_deq = j + 1
        cap = self.cap
        if cap is not None:
            if j < cap:
                self.acks.append(clock)
            else:
                self.acks[j % cap] = clock
        return v, el

    def __repr__(self) -> str:
        return f"Channel({self.name}, cap={self.cap}, len={len(self.q)})"
