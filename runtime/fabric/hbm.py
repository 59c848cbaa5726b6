"""The HBM model of reference spec §2, computed per tile transfer (closed form).

The reference controller loops once per cycle: it collects at most one chunk
of `par_dispatch` requests per requester (readers in registration order, then
writers), sends the i-th request of the cycle's list to channel
`off + i(i+1)/2 mod N` and then sets `off := off + n(n+1)/2 mod N` (n = list
length); each channel serves its FIFO of requests with service start
`s = max(s_prev + II, t + 1)`, and a request served at `s` is seen by its
requester at `s + max(startup + latency, 1) + 1`. A tile of `n_req` requests
started at clock `t0` has its chunk j collected at cycle `t0 + 1 + j`, and the
requester's clock after the tile is its latest response.

`HBMServer` reproduces this without one event per request. Between two
*breakpoints* (a transfer starts, reaches its last chunk or ends) the per-cycle
request list is constant, so the channel pattern is periodic with period
`P = N / gcd(N, n(n+1)/2 mod N)`. Each channel is an independent FIFO whose
state after a period is `max(free + II*K_c, G_c)` (max-plus), so `m` whole
periods are skipped in closed form:

    free_m = max(free_0 + m*II*K_c, G_c + (m-1)*max(P, II*K_c))

and only the last period of a segment (which holds every requester's latest
request on every channel it uses) is evaluated request by request. The cost is
O(P * requests-per-cycle) per segment, i.e. proportional to tile transfers,
not to bytes.

`reference_completions` is the literal request-level model (one controller
iteration per cycle, explicit channel and response queues); tests check that
both agree.

Example:

```python
from steplus.runtime.fabric.config import STEP_EVAL
done = reference_completions(STEP_EVAL.hbm, [[(0, 64)], [(3, 16)]])
```
"""

from __future__ import annotations

import math
from math import gcd

import numpy as np

INF = math.inf


class Transfer:
    """One tile in flight: `n_req` requests from requester `rank` issued at `t0`."""

    __slots__ = ("ctx", "rank", "t0", "m", "p", "last", "top", "first_cycle", "last_cycle")

    def __init__(self, ctx, rank: int, t0: int, n_req: int, par: int):
        self.ctx = ctx
        self.rank = rank
        self.t0 = t0
        self.p = par
        self.m = -(-n_req // par)  # number of chunks
        self.last = n_req - par * (self.m - 1)
        self.top = -1  # latest service start of its requests so far
        self.first_cycle = t0 + 1  # its chunks are collected at cycles first..last
        self.last_cycle = t0 + self.m


NEG = -(1 << 60)  # "no request" in the period tables (stays hugely negative under +)


class _Period:
    """The controller's pattern for `n` requests per cycle, one period, offset 0.

    Request slot i of cycle u goes to channel `(u*q + d_i) mod N`; each (slot,
    channel) pair occurs at most once per period. Per channel the requests are
    served in (cycle, slot) order; with `w` the period's first cycle and `F`
    the channel's next free service time when the period starts, the j-th
    request on the channel starts at `max(F + II*j, w + h_j)` where
    `h_j = max_{k<=j}(rho_k + II*(j-k))` and `rho_k` = arrival cycle - w.

    Arrays (slot x channel): `J` = index j on its channel (NEG if absent), `H`
    = h_j, `U` = its cycle within the period (P if absent). Per channel: `K`
    requests per period, `G = h_{K-1} + II` (NEG if none), and for each prefix
    of r cycles `KR[r]`, `GR[r]` (the same for the first r cycles only)."""

    def __init__(self, n: int, N: int, II: int):
        q = n * (n + 1) // 2 % N
        self.q = q
        self.P = P = N // gcd(N, q) if q else 1
        d = (np.arange(n, dtype=np.int64) * (np.arange(n, dtype=np.int64) + 1) // 2) % N
        u = np.arange(P, dtype=np.int64)
        C = ((u[:, None] * q + d[None, :]) % N).ravel()  # (cycle, slot) order
        uu = np.repeat(u, n)
        ii = np.tile(np.arange(n), P)
        order = np.argsort(C, kind="stable")
        cs, us, islot = C[order], uu[order], ii[order]
        start = np.searchsorted(cs, np.arange(N), "left")
        j = np.arange(len(cs)) - start[cs]
        big = 1 << 40
        val = (us + 1) - II * j + cs * big
        h = np.maximum.accumulate(val) - cs * big + II * j
        self.J = np.full((n, N), NEG, dtype=np.int64)
        self.H = np.full((n, N), NEG, dtype=np.int64)
        self.U = np.full((n, N), P, dtype=np.int64)
        self.J[islot, cs] = j
        self.H[islot, cs] = h
        self.U[islot, cs] = us
        counts = np.zeros((P + 1, N), dtype=np.int64)
        np.add.at(counts, (uu + 1, C), 1)
        self.KR = np.cumsum(counts, axis=0)
        self.K = self.KR[P]
        idx = np.clip(start[None, :] + self.KR - 1, 0, max(len(cs) - 1, 0))
        self.GR = np.where(self.KR > 0, h[idx] + II, NEG)
        self.G = self.GR[P]
        self.KII = II * self.K
        self.KIIR = II * self.KR
        self.IIJ = II * self.J
        self.skip = np.maximum(P, II * self.K)
        self._prefix: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def prefix(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        """`II*J` and `H` restricted to the pairs of the first r cycles (NEG elsewhere)."""
        got = self._prefix.get(r)
        if got is None:
            inside = self.U < r
            got = self._prefix[r] = (np.where(inside, self.IIJ, NEG), np.where(inside, self.H, NEG))
        return got


class HBMServer:
    """Times tile transfers exactly as the reference controller would (see module doc)."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.N = cfg.channels
        self.II = cfg.initiation_interval
        self.par = cfg.par_dispatch
        self.resp = max(cfg.startup + cfg.latency, 1) + 1
        self.readers: list = []
        self.writers: list = []
        self.rank: dict = {}
        self.inflight: dict[int, Transfer] = {}
        self.t_next = 0
        self.off = 0
        self.free = np.zeros(self.N, dtype=np.int64)
        self.requests = 0
        self.segments = 0
        self._periods: dict[int, _Period] = {}
        self._rot = [(np.arange(self.N) + o) % self.N for o in range(self.N)]

    # -- requesters -------------------------------------------------------
    def register(self, ctx) -> None:
        (self.readers if ctx.hbm_role == "r" else self.writers).append(ctx)

    def start(self) -> None:
        for i, c in enumerate(self.readers + self.writers):
            self.rank[c] = i
        self.live = set(self.rank)

    def unregister(self, ctx) -> None:
        self.live.discard(ctx)

    def issue(self, ctx, t0: int, n_req: int) -> None:
        if t0 + 1 < self.t_next:
            from steplus.runtime.fabric.engine import SimulationError

            raise SimulationError(
                f"internal: {ctx.name} issued at {t0} but HBM already at {self.t_next}")
        tr = Transfer(ctx, self.rank[ctx], t0, n_req, self.par)
        self.inflight[tr.rank] = tr
        ctx.hbm_lb = tr.last_cycle + 1 + self.resp
        self.requests += n_req

    def busy(self) -> bool:
        return bool(self.inflight)

    def idle(self) -> list:
        """Live requesters with no tile in flight (they bound how far time may advance)."""
        return [c for c in self.live if self.rank[c] not in self.inflight]

    def horizon(self, lbs: dict) -> float:
        """First cycle an idle (live, not in flight) requester could send a chunk."""
        h = INF
        for c in self.live:
            if self.rank[c] not in self.inflight:
                h = min(h, lbs.get(c, INF) + 1)
        return h

    # -- time ---------------------------------------------------------------
    def advance(self, horizon: float, on_done) -> int:
        """Process controller cycles below `horizon`; report completed transfers.

        Returns True if anything progressed (a transfer completed or time moved)."""
        done: list[tuple[object, int]] = []
        while self.inflight:
            bound = horizon
            end = 0
            for tr in self.inflight.values():
                lb = tr.ctx.hbm_lb + 1
                if lb < bound:
                    bound = lb
                if tr.last_cycle > end:
                    end = tr.last_cycle
            for _, comp in done:
                bound = min(bound, comp + 1)
            target = min(bound, end + 1)
            if target <= self.t_next:
                break
            self._process(self.t_next, int(target))
            self.t_next = int(target)
            for rank in sorted(self.inflight):
                tr = self.inflight[rank]
                if tr.last_cycle < self.t_next:
                    del self.inflight[rank]
                    done.append((tr.ctx, tr.top + self.resp))
        for ctx, comp in done:
            on_done(ctx, comp)
        return len(done)

    def _process(self, a: int, b: int) -> None:
        order = [self.inflight[r] for r in sorted(self.inflight)]
        cuts = {a, b}
        for tr in order:
            f, lc = tr.first_cycle, tr.last_cycle
            if a < f < b:
                cuts.add(f)
            if tr.last != tr.p and a < lc < b:  # the last chunk is smaller
                cuts.add(lc)
            if a < lc + 1 < b:
                cuts.add(lc + 1)
        cuts = sorted(cuts)
        for x, y in zip(cuts, cuts[1:]):
            owners: list[Transfer] = []
            for tr in order:
                if tr.first_cycle <= x <= tr.last_cycle:
                    k = tr.last if x == tr.last_cycle else tr.p
                    if k == 1:
                        owners.append(tr)
                    else:
                        owners.extend([tr] * k)
            if owners:
                self._segment(x, y, owners)

    def _period(self, n: int) -> _Period:
        p = self._periods.get(n)
        if p is None:
            p = self._periods[n] = _Period(n, self.N, self.II)
        return p

    def _segment(self, a: int, b: int, owners: list[Transfer]) -> None:
        """Cycles a..b-1 with the request list `owners` (one entry per request):
        whole periods in closed form, the last whole period and the remainder
        from the period tables (see `_Period`); each owner's `top` becomes the
        latest service start of its requests."""
        per = self._period(len(owners))
        P = per.P
        self.segments += 1
        m, r = divmod(b - a, P)
        off = self.off
        rot = self._rot[off]  # column c of the tables is channel (c + off) mod N
        F = self.free[rot]
        w = a
        top = None
        if m >= 2:  # skip m-1 whole periods (per-channel max-plus)
            k = m - 1
            F = np.maximum(F + k * per.KII, per.G + (a + (k - 1) * per.skip))
            w = a + k * P
        if m >= 1:  # the last whole period holds every (slot, channel) pair
            top = np.maximum(F + per.IIJ, per.H + w).max(axis=1)
            F = np.maximum(F + per.KII, per.G + w)
            w += P
        if r:
            IIJ, H = per.prefix(r)
            t2 = np.maximum(F + IIJ, H + w).max(axis=1)
            top = t2 if top is None else np.maximum(top, t2)
            F = np.maximum(F + per.KIIR[r], per.GR[r] + w)
            self.off = (off + r * per.q) % self.N
        self.free[rot] = F
        for tr, s in zip(owners, top.tolist()):
            if s > tr.top:
                tr.top = s


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
            if not pending[r] and issue_at[r] is not None and issue_at[r] <= t:
                t0 = issue_at[r]
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
