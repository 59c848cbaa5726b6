# pyright: strict
"""The `target` dialect: target descriptions as attributes the IR carries.

MLIR keeps target facts on the module (DLTI's `dlti.target_system_spec`,
`#nvvm.target`, `#spirv.target_env`); here `#target.fabric<...>` names the
simulated fabric a module is placed on: a preset of `dialects/target/fabric.py`
and, optionally, fields of `HardwareConfig` changed from it. Its verifier
builds that configuration, so an unknown preset, an unknown field or a value
out of range is an error where the attribute is written, and `config()` is the
`HardwareConfig` itself.

`convert-step-to-runtime` writes the attribute on the module it places
(`target.fabric = #target.fabric<"swiglu-hdl">`) and reads it back when its
own `preset` option is not given; `step-run` simulates a module with the
fabric of its attribute unless `--preset`/`--config` says otherwise.

Example:

```mlir
builtin.module attributes {target.fabric = #target.fabric<"step-eval", {base_depth = 1 : i64}>} {
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.target.fabric import HardwareConfig, get_preset

FABRIC_KEY = "target.fabric"
"""The name of the module attribute holding a `#target.fabric`."""


def _override_value(key: str, a: Attribute) -> int | float:
    if isinstance(a, IntegerAttr):
        return int(a.value.data)
    if isinstance(a, FloatAttr):
        return float(a.value.data)
    raise VerifyException(f"#target.fabric: '{key}' must be an integer or a float")


@irdl_attr_definition
class FabricTargetAttr(ParametrizedAttribute):
    """The simulated fabric a module is placed on: a hardware preset and the fields changed from it.

    `#target.fabric<"sn40l">`, `#target.fabric<"step-eval", {base_depth = 1 : i64}>`:
    a preset of `dialects/target/fabric.py` (step-eval, swiglu-hdl, sn40l) and
    numeric fields of its `HardwareConfig` or HBM tier (`base_depth`, `pmu_bw`,
    `channels`, `par_dispatch`, ...), each checked against `FIELD_LIMITS` by the
    verifier. Written on the module by `convert-step-to-runtime` under the key
    `target.fabric`, read back by that pass and by `step-run`.
    """

    name = "target.fabric"

    preset: StringAttr = param_def()
    overrides: DictionaryAttr = param_def()

    def __init__(self, preset: str, overrides: dict[str, int | float] | None = None):
        attrs: dict[str, Attribute] = {}
        for k, v in (overrides or {}).items():
            attrs[k] = FloatAttr(v, 64) if isinstance(v, float) else IntegerAttr(v, 64)
        super().__init__(StringAttr(preset), DictionaryAttr(attrs))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        preset = parser.parse_str_literal()
        overrides = DictionaryAttr({})
        if parser.parse_optional_punctuation(","):
            attr = parser.parse_attribute()
            if not isinstance(attr, DictionaryAttr):
                parser.raise_error("#target.fabric: expected a dictionary of changed fields")
            overrides = attr
        parser.parse_punctuation(">")
        return (StringAttr(preset), overrides)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.preset.data)
            if self.overrides.data:
                printer.print_string(", ")
                printer.print_attribute(self.overrides)

    def verify(self) -> None:
        self.config()

    def config(self) -> HardwareConfig:
        """The `HardwareConfig` this attribute names (VerifyException if it is not one)."""
        changes = {k: _override_value(k, v) for k, v in self.overrides.data.items()}
        unknown = sorted(set(changes) - CHANGEABLE_FIELDS)
        if unknown:
            raise VerifyException(f"#target.fabric: unknown field(s) {', '.join(unknown)} "
                                  f"(expected {', '.join(sorted(CHANGEABLE_FIELDS))})")
        try:
            return get_preset(self.preset.data).with_(**changes)
        except ValueError as e:
            raise VerifyException(f"#target.fabric: {e}") from None


CHANGEABLE_FIELDS = frozenset(
    {"pmu_bw", "compute_bw", "base_depth", "end_offset", "compute_units", "memory_units",
     "sram_bytes", "clock_ghz", "unit_flops", "launch_so_cycles", "launch_ho_cycles",
     "channels", "request_bytes", "latency", "initiation_interval", "startup", "par_dispatch",
     "capacity_bytes"})
"""The numeric fields of `HardwareConfig` (and of its `hbm` tier) an attribute may change."""


def fabric_target_of(op: Operation) -> HardwareConfig | None:
    """The configuration of the `#target.fabric` on `op` or its closest enclosing module
    carrying one (None when there is none); ValueError if the attribute is not a
    `#target.fabric`."""
    cur: Operation | None = op
    while cur is not None:
        if isinstance(cur, ModuleOp) and FABRIC_KEY in cur.attributes:
            attr = cur.attributes[FABRIC_KEY]
            if not isinstance(attr, FabricTargetAttr):
                raise ValueError(f"'{FABRIC_KEY}' must be a #target.fabric attribute")
            return attr.config()
        cur = cur.parent_op()
    return None


Target = Dialect("target", [], [FabricTargetAttr])
