"""A literal, request-level HBM controller with the `HBMServer` interface (tests only).

One controller iteration per cycle exactly as reference spec §2.3-2.4 writes
it: collect at most one response per channel, collect at most one chunk per
requester (readers then writers), distribute with the cumulative offset rule,
serve each channel's FIFO with `s = max(s + II, t + 1)`. It is slow (one step
per cycle and per request) and exists to check, in tests, that the engine with
the closed-form `HBMServer` times whole graphs identically. Also here:
`reference_completions`, the same controller for scripted requesters (tile
sizes and gaps), which the tests compare with `HBMServer` request script by
request script.

Example:

```python
sim = Simulator(cfg, hbm_factory=ReferenceHBMServer)
```
"""

from __future__ import annotations

import math
from collections import deque

INF = math.inf


class _Tr:
    __slots__ = ("ctx", "rank", "addr", "pending", "top")


class ReferenceHBMServer:
    """Per-cycle controller; same interface as `hbm.HBMServer`."""

    def __init__(self, cfg):
        self.N, self.II, self.par = cfg.channels, cfg.initiation_interval, cfg.par_dispatch
        self.lat = cfg.startup + cfg.latency
        self.resp = max(self.lat, 1) + 1
        self.readers, self.writers = [], []
        self.rank = {}
        self.inflight: dict[int, _Tr] = {}
        self.t_next = 0
        self.off = 0
        self.free = [0] * self.N
        self.resp_q = [deque() for _ in range(self.N)]
        self.requests = 0
        self.segments = 0

    def register(self, ctx):
        (self.readers if ctx.hbm_role == "r" else self.writers).append(ctx)

    def start(self):
        for i, c in enumerate(self.readers + self.writers):
            self.rank[c] = i
        self.live = set(self.rank)

    def unregister(self, ctx):
        self.live.discard(ctx)

    def issue(self, ctx, t0, n_req):
        tr = _Tr()
        tr.ctx, tr.rank, tr.pending, tr.top = ctx, self.rank[ctx], n_req, t0
        p = self.par
        chunks = [p] * (n_req // p) + ([n_req % p] if n_req % p else [])
        tr.addr = deque((max(t0 + j, t0 + 1), k) for j, k in enumerate(chunks))
        self.inflight[tr.rank] = tr
        ctx.hbm_lb = t0 + len(chunks) + 1 + self.resp
        self.requests += n_req

    def busy(self):
        return bool(self.inflight)

    def idle(self) -> list:
        """Live requesters with no tile in flight (they bound how far time may advance)."""
        return [c for c in self.live if self.rank[c] not in self.inflight]

    def horizon(self, lbs):
        h = INF
        for c in self.live:
            if self.rank[c] not in self.inflight:
                h = min(h, lbs.get(c, INF) + 1)
        return h

    def advance(self, horizon, on_done):
        start = self.t_next
        done = []
        while self.inflight or any(self.resp_q):
            t = self.t_next
            bound = horizon
            for _, comp in done:
                bound = min(bound, comp + 1)
            if t >= bound or not self.inflight:
                break
            self.segments += 1
            for c in range(self.N):
                q = self.resp_q[c]
                if q and q[0][0] <= t:
                    _, tr = q.popleft()
                    tr.top = max(tr.top, t + 1)
                    tr.pending -= 1
                    if not tr.pending:
                        del self.inflight[tr.rank]
                        done.append((tr.ctx, tr.top))
            lst = []
            for r in sorted(self.inflight):
                tr = self.inflight[r]
                if tr.addr and tr.addr[0][0] <= t:
                    _, k = tr.addr.popleft()
                    lst.extend([tr] * k)
            off = self.off
            for i, tr in enumerate(lst):
                off = (off + i) % self.N
                s = max(self.free[off], t + 1)
                self.free[off] = s + self.II
                self.resp_q[off].append((max(s + self.lat, s + 1), tr))
            self.off = (off + len(lst)) % self.N
            self.t_next = t + 1
        for tr in self.inflight.values():  # still waiting: done no earlier than t_next + 1
            tr.ctx.hbm_lb = max(tr.ctx.hbm_lb, self.t_next + 1)
        for ctx, comp in done:
            on_done(ctx, comp)
        return len(done) > 0 or self.t_next > start


def reference_completions(cfg, scripts: list[list[tuple[int, int]]],
                          writers: int = 0) -> list[list[int]]:
    """Literal request-level model of §2.3-2.4 for scripted requesters.

    `scripts[r]` is a list of `(gap, n_req)`: requester r issues each tile
    `gap` cycles after the previous one completed (the first at `gap`). The
    last `writers` scripts are writers (served after the readers each cycle).
    Returns, per requester, the completion clock of each tile.
    """
    N, II, par = cfg.channels, cfg.initiation_interval, cfg.par_dispatch
    lat = cfg.startup + cfg.latency
    R = len(scripts)
    nxt = [0] * R                        # index of the next tile to issue
    issue_at = [s[0][0] if s else None for s in scripts]
    addr: list[list[tuple[int, int]]] = [[] for _ in range(R)]  # (visible, n)
    pending = [0] * R                    # responses still expected
    top = [0] * R
    out: list[list[int]] = [[] for _ in range(R)]
    chan_free = [0] * N
    resp_q: list[list[tuple[int, int]]] = [[] for _ in range(N)]  # (visible, requester)
    off = 0
    t = 0
    while any(nxt[r] < len(scripts[r]) or pending[r] for r in range(R)):
        for r in range(R):  # requesters issue at their clock (before the controller looks)
            t0 = issue_at[r]
            if not pending[r] and t0 is not None and t0 <= t:
                n_req = scripts[r][nxt[r]][1]
                chunks = [par] * (n_req // par) + ([n_req % par] if n_req % par else [])
                addr[r] = [(max(t0 + j, t0 + 1), k) for j, k in enumerate(chunks)]
                pending[r] = n_req
                top[r] = t0
                nxt[r] += 1
                issue_at[r] = None
        for c in range(N):  # collect + forward responses (one per channel)
            if resp_q[c] and resp_q[c][0][0] <= t:
                _, r = resp_q[c].pop(0)
                top[r] = max(top[r], t + 1)
                pending[r] -= 1
                if not pending[r]:
                    out[r].append(top[r])
                    if nxt[r] < len(scripts[r]):
                        issue_at[r] = top[r] + scripts[r][nxt[r]][0]
        lst: list[int] = []
        for r in range(R):  # readers then writers: registration order
            if addr[r] and addr[r][0][0] <= t:
                _, k = addr[r].pop(0)
                lst.extend([r] * k)
        for i, r in enumerate(lst):
            off = (off + i) % N
            s = max(chan_free[off], t + 1)
            chan_free[off] = s + II
            resp_q[off].append((max(s + lat, s + 1), r))
        off = (off + len(lst)) % N
        t += 1
    return out
