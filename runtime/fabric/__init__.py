"""The simulated STeP dataflow fabric: contexts, channels, HBM, timing (reference spec §1-4).

- `channel`: tiles, stream elements, FIFO channels (§1.1-1.2)
- `engine`: contexts with their own clocks, deterministic scheduling, deadlock detection
- `hbm`: the off-chip model at tile granularity (§2) and a request-level reference
- `config`: hardware configurations as data (presets `step-eval`, `swiglu-hdl`, `sn40l`)
- `ops_*`: the operator contexts (memory, compute roofline §3, routing/shape/generators §4)
- `program`: a runnable network plus metrics, tables and Chrome traces
"""
