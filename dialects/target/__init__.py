# pyright: strict
"""Target descriptions: the hardware facts passes, lowerings and runtimes read, each written once.

In MLIR a target is data the IR can carry (DLTI, `#nvvm.target`,
`#spirv.target_env`); here each target is frozen, typed data at the bottom of
the stack (the `dialects` layer), so every layer above reads the same object:

- `fabric`: the simulated dataflow fabric (`HardwareConfig`, its presets
  step-eval / swiglu-hdl / sn40l) that `convert-step-to-runtime`, the fabric
  placement and the simulator read;
- `sn40l`: the SN40L chip and node as a table of seed / assumed / derived
  parameters (the `sn40l` fabric preset is built from it);
- `pim`: the Allspark processing-in-memory mesh presets (`PimHardware`);
- `ila`: the register and buffer limits of FlexASR, HLSCNN and VTA, which
  instruction selection and the ILA drivers both read;
- `attrs`: the `target` dialect, `#target.fabric<"preset", {changed fields}>`,
  the fabric configuration as an attribute the module carries (DLTI-style),
  verified when it is parsed or built.

Example:

```python
from steplus.dialects.target.fabric import get_preset
get_preset("sn40l").compute_units      # 1040
```
"""
