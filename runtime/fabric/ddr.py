"""DDR as a second off-chip tier: the HBM channel model with DDR parameters.

`TieredMemory` stands where the simulator expects its HBM server
(`Simulator(config, hbm_factory=...)`): it owns two `HBMServer`s, one built
from `config.hbm` and one from `config.ddr` (channels, request size,
initiation interval, latency of the DDR interface), and sends each memory
context to the tier its op was placed in. Which contexts use DDR is given by
name: `step-allocate-memory` marks spilled symbols' loads and stores with
`sn40l.tier = "ddr"`, and `ddr_contexts(graph)` lists their context names.
The two tiers have independent channels: spill traffic and DDR->HBM copies
contend with each other on the DDR channels, not with HBM traffic.

Example:

```python
from steplus.dialects.target.fabric import SN40L
factory = tiered_factory(SN40L, {"w_ld"})      # w_ld reads from DDR
prog = build_program(graph, SN40L, hbm_factory=factory)
```
"""

from __future__ import annotations


from steplus.runtime.fabric.hbm import HBMServer

class TieredMemory:
    """Two `HBMServer`s behind the simulator's one-server interface."""

    def __init__(self, hbm_cfg, ddr_cfg, ddr_names: set[str]):
        self.hbm = HBMServer(hbm_cfg)
        self.ddr = HBMServer(ddr_cfg)
        self.ddr_names = set(ddr_names)
        self.which: dict = {}
        self._h: dict = {}

    def _of(self, ctx) -> HBMServer:
        s = self.which.get(ctx)
        if s is None:
            s = self.which[ctx] = self.ddr if ctx.name in self.ddr_names else self.hbm
        return s

    # the HBMServer interface the engine uses ---------------------------------
    def register(self, ctx) -> None:
        self._of(ctx).register(ctx)

    def start(self) -> None:
        self.hbm.start()
        self.ddr.start()

    def unregister(self, ctx) -> None:
        self._of(ctx).unregister(ctx)

    def issue(self, ctx, t0: int, n_req: int) -> None:
        self._of(ctx).issue(ctx, t0, n_req)

    def busy(self) -> bool:
        return self.hbm.busy() or self.ddr.busy()

    def idle(self) -> list:
        return self.hbm.idle() + self.ddr.idle()

    def horizon(self, lbs: dict) -> float:
        """Each tier only waits for its own idle requesters."""
        self._h = {s: s.horizon(lbs) for s in (self.hbm, self.ddr)}
        return min(self._h.values())

    def advance(self, horizon: float, on_done) -> int:
        n = 0
        for s in (self.hbm, self.ddr):
            if s.busy():
                n += s.advance(max(horizon, self._h.get(s, horizon)), on_done)
        return n

    @property
    def requests(self) -> int:
        return self.hbm.requests + self.ddr.requests

    @property
    def segments(self) -> int:
        return self.hbm.segments + self.ddr.segments


def tiered_factory(config, ddr_names: set[str]):
    """An `hbm_factory` for `build_program`: DDR for the named contexts."""
    if config.ddr is None:
        raise ValueError(f"hardware preset '{config.name}' has no DDR tier")

    def factory(hbm_cfg):
        return TieredMemory(hbm_cfg, config.ddr, ddr_names)

    return factory
