"""The simulated STeP dataflow fabric: contexts, channels, HBM, timing (reference spec §1-4).

- `channel`: tiles, stream elements, FIFO channels (§1.1-1.2)
- `context`: contexts with their own clocks and the channel commands they yield
- `engine`: deterministic scheduling, polling answers, HBM advances, deadlock detection
- `bounds`: lower bounds of blocked contexts along the wait graph (wait-chain forms)
- `hbm`: the off-chip model at tile granularity (§2) and a request-level reference
- `contexts`: the operator contexts, grouped like the step dialect's ops (memory, compute
  roofline §3, routing, shape, generators §4)
- `build`: a step graph's placement (`passes/step/fabric_placement.py`) instantiated as a
  program, one context per params class of `passes/step/fabric_contract.py`
- `program`: a runnable network plus metrics, tables and Chrome traces

The hardware configurations are target descriptions, `dialects/target/fabric.py`: the
placement and `convert-step-to-runtime` read the same objects.
"""

from steplus.runtime.fabric import native as _native

_native.install()  # the mypyc-compiled engine/channel/HBM when built and current (`native`)
