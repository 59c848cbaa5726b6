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
not to bytes. The state and the per-period tables are plain ints (a window is
at most N x 2P requests, where numpy's per-call cost dominated); only a wide
request list (many transfers in flight at once) uses numpy tables.

`hbm_reference.reference_completions` is the literal request-level model (one
controller iteration per cycle, explicit channel and response queues); tests
check that both agree.

Example (the engine makes one per simulation; memory contexts issue through it):

```python
from steplus.dialects.target.fabric import STEP_EVAL
server = HBMServer(STEP_EVAL.hbm)
```
"""

from __future__ import annotations

import math
from bisect import insort
from math import gcd
from operator import attrgetter
from typing import Final

import numpy as np

from steplus.passes.step.sim_estimate import SimulationError
from steplus.runtime.fabric.context import Context

INF = math.inf


class Transfer:
    """One tile in flight: `n_req` requests from requester `rank` issued at `t0`."""

    __slots__ = ("ctx", "rank", "t0", "m", "p", "last", "top", "first_cycle", "last_cycle")

    def __init__(self, ctx: Context, rank: int, t0: int, n_req: int, par: int):
        self.ctx = ctx
        self.rank = rank
        self.t0 = t0
        self.p = par
        self.m = -(-n_req // par)  # number of chunks
        self.last = n_req - par * (self.m - 1)
        self.top = -1  # latest service start of its requests so far
        self.first_cycle = t0 + 1  # its chunks are collected at cycles first..last
        self.last_cycle = t0 + self.m


class _Free:
    """One HBM channel's next free service time. The channels are a list of
    these rather than of ints so that, compiled, updating one is a native
    field store instead of a new int object per request."""

    __slots__ = ("t",)

    def __init__(self) -> None:
        self.t: int = 0


_rank = attrgetter("rank")
_Period = tuple[int, int, list[int], list[int], list[int], list[int]]
"""`HBMServer._period`: (q, P, d, KII, G, skip)."""
_SmallWindow = tuple[list[int], list[int], list[int], list[int], list[list[int]]]
"""`HBMServer._small_window`: per column II*K and G; per slot max h, max II*j and its
columns as one flat list `[c0, II*j0, c1, II*j1, ...]` (parallel lists of small ints, not
a tuple per slot or column: loading those scattered objects was most of `_segment`)."""
_FAR: Final = 1 << 62  # `advance`'s horizon INF, as a native int
NEG: Final = -(1 << 60)  # "no request" in the period tables (stays hugely negative under +)


class _Window:
    """The controller's pattern for `n` requests per cycle over `L` cycles, offset 0.

    Request slot i of cycle u goes to channel `(u*q + d_i) mod N` with
    `d_i = i(i+1)/2`, `q = n(n+1)/2 mod N`; the pattern repeats every
    `P = N / gcd(N, q)` cycles. Per channel the requests are served in
    (cycle, slot) order; with `w` the window's first cycle and `F` the
    channel's next free service time when the window starts, the j-th request
    on the channel starts at `max(F + II*j, w + h_j)` where
    `h_j = max_{k<=j}(rho_k + II*(j-k))` and `rho_k` = its arrival - w.

    Arrays (slot x channel) for the *last* request of each pair in the window:
    `IIJ = II*j` and `H = h_j` (NEG if the pair does not occur); per channel:
    `KII = II * requests`, `G = h_last + II` (NEG if none), so the channel is
    next free at `max(F + KII, w + G)` after the window. For a whole period
    `skip = max(P, KII)` gives m periods in closed form:
    `max(F + m*KII, w + G + (m-1)*skip)`."""

    def __init__(self, n: int, L: int, N: int, II: int):
        self.q = q = n * (n + 1) // 2 % N
        self.P = P = N // gcd(N, q) if q else 1
        ar = np.arange(n, dtype=np.int64)
        d = ar * (ar + 1) // 2 % N
        u = np.arange(L, dtype=np.int64)
        C = ((u[:, None] * q + d[None, :]) % N).ravel()  # (cycle, slot) order
        uu = np.repeat(u, n)
        ii = np.tile(ar, L)
        order = np.argsort(C, kind="stable")
        cs, us, islot = C[order], uu[order], ii[order]
        start = np.searchsorted(cs, np.arange(N), "left")
        j = np.arange(len(cs), dtype=np.int64) - start[cs]
        big = 1 << 40
        h = np.maximum.accumulate((us + 1) - II * j + cs * big) - cs * big + II * j
        self.IIJ = np.full((n, N), NEG, dtype=np.int64)
        self.H = np.full((n, N), NEG, dtype=np.int64)
        np.maximum.at(self.IIJ, (islot, cs), II * j)  # both grow along a channel:
        np.maximum.at(self.H, (islot, cs), h)  # the max is the last occurrence
        K = np.bincount(C, minlength=N).astype(np.int64)
        last = np.clip(start + K - 1, 0, max(len(cs) - 1, 0))
        self.G = np.where(K > 0, h[last] + II, NEG)
        self.KII = II * K
        self.skip = np.maximum(P, self.KII)
        self.size = n * N


class _Tables:
    """`HBMServer`'s pattern tables for one (channels, initiation interval):
    pure functions of it, so kept for the process (`_TABLES`) and shared by
    every server with those parameters; `cached`/`small_cached` count the
    entries that bound their memory."""

    __slots__ = ("periods", "small", "pattern", "windows", "small_windows", "seen", "cached",
                 "small_cached")

    def __init__(self) -> None:
        self.periods: dict[int, _Window] = {}
        self.small: dict[int, _Period] = {}
        self.pattern: dict[int, tuple[int, int, list[int]]] = {}
        self.windows: dict[tuple[int, int], _Window] = {}
        self.small_windows: dict[tuple[int, int], _SmallWindow] = {}
        self.seen: dict[tuple[int, int], int] = {}
        self.cached = 0
        self.small_cached = 0


_TABLES: dict[tuple[int, int], _Tables] = {}
COMPILED: Final = not __file__.endswith(".py")
"""This module runs compiled (mypyc, runtime/fabric/native.py): see `HBMServer.TABLE_MIN`."""
TABLE_MIN_COMPILED: Final = 1 << 62
"""`HBMServer.TABLE_MIN` compiled: no plain-int window from a table."""
"""(channels, initiation interval) -> the tables of every `HBMServer` with them."""


class HBMServer:
    """Times tile transfers exactly as the reference controller would (see module doc)."""

    NP_MIN = 160
    """Requests in a segment's explicit window above which numpy evaluates it
    (if its tables are cached, or it has more than `NP_BUILD` requests: building
    a table costs about as much as 2000 requests evaluated with plain ints)."""
    NP_BUILD = 2000
    NP_AFTER = 2
    """A window above `NP_BUILD` requests is evaluated with plain ints until it
    has been seen `NP_AFTER` times (most never recur: a table for each cost
    more than the run), then from numpy tables."""
    TABLE_MIN = 128
    TABLE_AFTER = 3
    """Requests in a segment's explicit window up to which it is evaluated
    request by request rather than from a `_small_window` table, which is
    built once a window has been evaluated explicitly `TABLE_AFTER` times.
    Compiled, every plain-int window is evaluated request by request
    (`TABLE_MIN_COMPILED`): a native loop over at most 2P x n requests costs
    less than the table's scattered loads (Qwen B=1024 tile 16: 4.6 -> 3.4
    us/firing, Mixtral within noise), while interpreted the tables save 13 %
    on Mixtral B=1024 tile 16 (docs/fabric.md, *Issue 32: the wake-list engine*)."""

    def __init__(self, cfg) -> None:
        self.cfg = cfg
        if COMPILED:
            self.TABLE_MIN = TABLE_MIN_COMPILED
        self.N: int = cfg.channels  # typed: mypyc's arithmetic on them is native
        self.II: int = cfg.initiation_interval
        self.par: int = cfg.par_dispatch
        self.resp: int = max(cfg.startup + cfg.latency, 1) + 1
        self.readers: list[Context] = []
        self.writers: list[Context] = []
        self.rank: dict[Context, int] = {}
        self.live: set[Context] = set()
        # live requesters with no tile in flight: a dense list (iterated at every
        # HBM advance; a churned set's table is mostly empty slots) and positions
        self.idle_list: list[Context] = []
        self.idle_pos: dict[Context, int] = {}
        self.inflight: dict[int, Transfer] = {}
        self.order: list[Transfer] = []  # the transfers in flight, by registration rank
        self.t_next: int = 0
        self.off: int = 0
        self.free: list[_Free] = [_Free() for _ in range(self.N)]  # per HBM channel
        self.requests: int = 0
        self.segments: int = 0
        # the pattern tables depend on (N, II) only: shared by every server of
        # this process with the same channels (a sweep builds each table once)
        tab = _TABLES.get((self.N, self.II))
        if tab is None:
            tab = _TABLES[(self.N, self.II)] = _Tables()
        self._tab: _Tables = tab
        self._periods: dict[int, _Window] = tab.periods  # n -> one whole period (numpy path)
        self._small: dict[int, _Period] = tab.small  # n -> one whole period (plain-int path)
        self._pattern: dict[int, tuple[int, int, list[int]]] = tab.pattern  # n -> (q, P, d)
        self._windows: dict[tuple[int, int], _Window] = tab.windows
        self._small_windows: dict[tuple[int, int], _SmallWindow] = tab.small_windows
        self._seen: dict[tuple[int, int], int] = tab.seen
        self.lazy: int | None = None  # first cycle not evaluated yet (see _process)
        self._rot = [(np.arange(self.N) + o) % self.N for o in range(self.N)]

    # -- requesters -------------------------------------------------------
    def register(self, ctx: Context) -> None:
        (self.readers if ctx.hbm_role == "r" else self.writers).append(ctx)

    def start(self) -> None:
        for i, c in enumerate(self.readers + self.writers):
            self.rank[c] = i
        self.live = set(self.rank)
        self.idle_list = []
        self.idle_pos = {}
        for c in self.rank:  # live, no tile in flight
            self._idle_add(c)

    def _idle_add(self, ctx: Context) -> None:
        if ctx not in self.idle_pos:
            self.idle_pos[ctx] = len(self.idle_list)
            self.idle_list.append(ctx)

    def _idle_discard(self, ctx: Context) -> None:
        i = self.idle_pos.pop(ctx, -1)
        if i >= 0:
            last = self.idle_list.pop()
            if last is not ctx:  # the last one takes its place
                self.idle_list[i] = last
                self.idle_pos[last] = i

    def unregister(self, ctx: Context) -> None:
        self.live.discard(ctx)
        self._idle_discard(ctx)

    def issue(self, ctx: Context, t0: int, n_req: int) -> None:
        if t0 + 1 < self.t_next:
            raise SimulationError(
                f"internal: {ctx.name} issued at {t0} but HBM already at {self.t_next}")
        self._flush()
        tr = Transfer(ctx, self.rank[ctx], t0, n_req, self.par)
        self.inflight[tr.rank] = tr
        self._idle_discard(ctx)
        insort(self.order, tr, key=_rank)
        ctx.hbm_lb = tr.last_cycle + 1 + self.resp
        self.requests += n_req

    def busy(self) -> bool:
        return bool(self.inflight)

    def idle(self) -> list:
        """Live requesters with no tile in flight (they bound how far time may advance)."""
        return list(self.idle_list)

    def horizon(self, lbs: dict) -> float:
        """First cycle an idle (live, not in flight) requester could send a chunk."""
        h = INF
        get = lbs.get
        for c in self.idle_list:
            v = get(c, INF)
            if v < h:
                h = v
        return h + 1

    # -- time ---------------------------------------------------------------
    def advance(self, horizon: float, on_done) -> int:
        """Process controller cycles below `horizon`; report completed transfers.

        Returns True if anything progressed (a transfer completed or time moved)."""
        done: list[tuple[Context, int]] = []
        order = self.order
        hz: int = _FAR if horizon >= _FAR else int(horizon)  # native ints below
        while order:
            bound = hz
            end = 0
            for tr in order:
                lb = tr.ctx.hbm_lb + 1
                if lb < bound:
                    bound = lb
                if tr.last_cycle > end:
                    end = tr.last_cycle
            for _, c in done:
                if c + 1 < bound:
                    bound = c + 1
            cut = bound if bound < end + 1 else end + 1
            if cut <= self.t_next:
                break
            self._process(self.t_next, cut)
            self.t_next = cut
            if any(tr.last_cycle < cut for tr in order):
                for tr in order:
                    if tr.last_cycle < cut:
                        del self.inflight[tr.rank]
                        done.append((tr.ctx, tr.top + self.resp))
                        if tr.ctx in self.live:
                            self._idle_add(tr.ctx)
                order[:] = [tr for tr in order if tr.last_cycle >= cut]
        for ctx, comp in done:
            on_done(ctx, comp)
        return len(done)

    def _owners(self, x: int) -> list[Transfer]:
        """The request list of cycle x (one entry per request, registration order)."""
        owners: list[Transfer] = []
        for tr in self.order:
            if tr.first_cycle <= x <= tr.last_cycle:
                k = tr.last if x == tr.last_cycle else tr.p
                if k == 1:
                    owners.append(tr)
                else:
                    owners.extend([tr] * k)
        return owners

    def _flush(self) -> None:
        """Evaluate the deferred cycles (the request list is about to change)."""
        if self.lazy is not None and self.lazy < self.t_next:
            owners = self._owners(self.lazy)
            if owners:
                self._segment(self.lazy, self.t_next, owners)
        self.lazy = None

    def _process(self, a: int, b: int) -> None:
        """Cycles a..b-1. The request list changes only at a transfer's first
        cycle, its last (if its last chunk is smaller) and the cycle after it;
        the cycles after the last such change are deferred (`lazy`) and
        evaluated together with the next ones, so a time limit (`horizon`)
        costs no extra segment."""
        cuts = set()
        for tr in self.order:
            f, lc = tr.first_cycle, tr.last_cycle
            if a < f <= b:
                cuts.add(f)
            if tr.last != tr.p and a < lc <= b:
                cuts.add(lc)
            if a < lc + 1 <= b:
                cuts.add(lc + 1)
        x = self.lazy if self.lazy is not None else a
        for y in sorted(cuts):
            owners = self._owners(max(x, a))
            if owners:
                self._segment(x, y, owners)
            x = y
        self.lazy = x if x < b else None

    def _window(self, n: int, L: int) -> _Window:
        key = (n, L)
        w = self._windows.get(key)
        if w is None:
            w = _Window(n, L, self.N, self.II)
            tab = self._tab
            tab.cached += w.size
            if tab.cached > 20_000_000:  # bound the memory of rarely reused tables
                self._windows.clear()
                tab.cached = w.size
            self._windows[key] = w
        return w

    def _period(self, n: int) -> _Period:
        """One whole period of `n` requests per cycle with plain ints (see
        `_Window`): (q, P, d, KII, G, skip), per column c (channel c + off)."""
        N, II = self.N, self.II
        q = n * (n + 1) // 2 % N
        P = N // gcd(N, q) if q else 1
        d = [i * (i + 1) // 2 % N for i in range(n)]
        free = [NEG] * N
        K = [0] * N
        for u in range(P):
            t1 = u + 1
            base = u * q
            for di in d:
                c = (base + di) % N
                f = free[c]
                free[c] = (f if f > t1 else t1) + II
                K[c] += 1
        KII = [II * k for k in K]
        G = [free[c] if K[c] else NEG for c in range(N)]
        skip = [P if P > k else k for k in KII]
        return q, P, d, KII, G, skip

    def _segment(self, a: int, b: int, owners: list[Transfer]) -> None:
        """Cycles a..b-1 with the request list `owners` (one entry per request):
        all but the last whole period in closed form, then the last whole
        period and the remainder (which hold the last request of every
        (slot, channel) pair); each owner's `top` becomes the latest service
        start of its requests. That window is evaluated request by request
        (`_explicit`), or, once it has recurred, from a table cached per
        (n, L) (`_small_window`: every channel in one max-plus step, and an
        owner's top only where it can still matter: not for a transfer whose
        last request arrives after every start in the window). Plain ints: the
        tables are at most N x 2P requests, where numpy's per-call cost
        dominates; a wide request list (many transfers in flight) takes the
        numpy path once its window recurs (`NP_AFTER`)."""
        n = len(owners)
        per = self._small.get(n)
        if per is None:  # the pattern alone; the period's tables only to skip periods
            pat = self._pattern.get(n)
            if pat is None:
                N = self.N
                q = n * (n + 1) // 2 % N
                pat = self._pattern[n] = (q, N // gcd(N, q) if q else 1,
                                          [i * (i + 1) // 2 % N for i in range(n)])
            q, P, d = pat
            if b - a >= 2 * P:
                per = self._small[n] = self._period(n)
        else:
            q, P, d = per[0], per[1], per[2]
        self.segments += 1
        m, r = divmod(b - a, P)
        L = (P if m else 0) + r
        size = n * L
        key = (n, L)
        if size > self.NP_MIN and (self._np_ready(n, L, m, r) or (
                size > self.NP_BUILD and self._seen.get(key, 0) >= self.NP_AFTER)):
            self._segment_np(a, b, owners)
            return
        N, off = self.N, self.off
        free = self.free  # channel (c + off) mod N is column c of the tables; updated in place
        w = a
        if m >= 2:  # skip m-1 whole periods (per-channel max-plus)
            k = m - 1
            assert per is not None
            KII, G, skip = per[3], per[4], per[5]
            ch = off
            for c in range(N):
                fc = free[ch]
                f = fc.t + k * KII[c]
                g = G[c] + a + (k - 1) * skip[c]
                fc.t = f if f > g else g
                ch += 1
                if ch == N:
                    ch = 0
            w = a + k * P
        win = self._small_windows.get(key)
        if win is None:
            # a table costs about as much as one explicit evaluation: build it
            # when the window recurs (short lists of few requests stay explicit)
            seen = self._seen.get(key, 0)
            if size <= self.TABLE_MIN or seen < self.TABLE_AFTER:
                self._seen[key] = seen + 1
                self._explicit(w, L, off, q, d, owners, n)
                self.off = (off + r * q) % N
                return
            win = self._small_window(n, L, q, d)
        wkii, wg, hmaxs, jmaxs, colss = win
        # A transfer's final `top` is at least its last request's arrival
        # (last_cycle + 1): a window whose service starts cannot reach that, or
        # the top already known, leaves it alone. A slot's latest start is
        # max(w + max_c h, max_c(F_c + II*j_c)); the second term is only
        # walked column by column when its bound (max F + max II*j) wins.
        fmax = NEG
        for fc in free:
            if fc.t > fmax:
                fmax = fc.t
        i = -1
        for tr in owners:
            i += 1
            top = tr.top
            lc = tr.last_cycle
            hb = w + hmaxs[i]
            fb = fmax + jmaxs[i]
            if hb >= fb:
                if hb > top and hb > lc:
                    tr.top = hb
                continue
            if fb <= top or fb <= lc:
                continue
            if hb > top:
                top = hb
            k = 0
            cols = colss[i]
            ncols = len(cols)
            while k < ncols:
                c = cols[k] + off
                if c >= N:
                    c -= N
                sv = free[c].t + cols[k + 1]
                if sv > top:
                    top = sv
                k += 2
            tr.top = top
        # every channel after the window: max(F + II*K, w + G) (see _Window)
        ch = off
        for c in range(N):
            fc = free[ch]
            f = fc.t + wkii[c]
            g = w + wg[c]
            fc.t = f if f > g else g
            ch += 1
            if ch == N:
                ch = 0
        self.off = (off + r * q) % N

    def _explicit(self, w: int, L: int, off: int, q: int, d: list[int],
                  owners: list[Transfer], n: int) -> None:
        """A window of `L` cycles from `w`, request by request, on the
        channels `free` (column c of the pattern is channel (c + off) mod N,
        updated in place); raises each owner's `top`."""
        N, II = self.N, self.II
        free = self.free
        base = off
        for u in range(L):
            t1 = w + u + 1
            for i in range(n):
                c = base + d[i]  # d[i] < N
                if c >= N:
                    c -= N
                fc = free[c]
                f = fc.t
                sv = f if f > t1 else t1
                fc.t = sv + II
                tr = owners[i]
                if sv > tr.top:
                    tr.top = sv
            base = (base + q) % N

    def _small_window(self, n: int, L: int, q: int, d: list[int]) -> _SmallWindow:
        """`_Window`'s tables with plain ints, cached per (n, L): per column
        (channel c + off) `II * requests` and `G` (NEG if none), and per slot
        the (column, II*j, h_j) of its last request on each column it uses."""
        N, II = self.N, self.II
        K = [0] * N
        h = [NEG] * N  # h_j of the latest request per column
        last: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]
        for u in range(L):
            rho = u + 1
            for i, di in enumerate(d):
                c = (u * q + di) % N
                j = K[c]
                hj = h[c] + II if h[c] != NEG else NEG
                if rho > hj:
                    hj = rho
                h[c] = hj
                K[c] = j + 1
                last[i][c] = (II * j, hj)
        wkii = [II * k for k in K]
        wg = [h[c] + II if K[c] else NEG for c in range(N)]
        hmaxs: list[int] = []
        jmaxs: list[int] = []
        colss: list[list[int]] = []
        for sl in last:
            flat: list[int] = []
            for c, (iij, _) in sl.items():
                flat.append(c)
                flat.append(iij)
            hmaxs.append(max(hj for _, hj in sl.values()))
            jmaxs.append(max(iij for iij, _ in sl.values()))
            colss.append(flat)
        win = (wkii, wg, hmaxs, jmaxs, colss)
        tab = self._tab
        tab.small_cached += N + 3 * n * min(L, N)
        if tab.small_cached > 4_000_000:  # bound the memory of rarely reused tables
            self._small_windows.clear()
            tab.small_cached = N + 3 * n * min(L, N)
        self._small_windows[(n, L)] = win
        return win

    def _np_ready(self, n: int, L: int, m: int, r: int) -> bool:
        """Whether `_segment_np` would find its tables cached."""
        if n not in self._periods:
            return False
        return (m >= 1 and r == 0) or (n, L) in self._windows

    def _segment_np(self, a: int, b: int, owners: list[Transfer]) -> None:
        """`_segment` with numpy tables (a wide request list)."""
        n = len(owners)
        per = self._periods.get(n)
        if per is None:
            per = self._periods[n] = _Window(n, _Window(n, 1, self.N, self.II).P, self.N, self.II)
        P = per.P
        m, r = divmod(b - a, P)
        rot = self._rot[self.off]  # column c of the tables is channel (c + off) mod N
        F = np.array([fc.t for fc in self.free], dtype=np.int64)[rot]
        w = a
        if m >= 2:  # skip m-1 whole periods (per-channel max-plus)
            k = m - 1
            F = np.maximum(F + k * per.KII, per.G + (a + (k - 1) * per.skip))
            w = a + k * P
        win = per if (m >= 1 and r == 0) else self._window(n, (P if m else 0) + r)
        top = np.maximum(F + win.IIJ, win.H + w).max(axis=1)
        new = np.maximum(F + win.KII, win.G + w).tolist()
        free = self.free
        for c, ch in enumerate(rot.tolist()):
            free[ch].t = new[c]
        self.off = (self.off + r * per.q) % self.N
        for tr, sv in zip(owners, top.tolist()):
            if sv > tr.top:
                tr.top = sv
