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

Two more targets are attributes the same way, each under its own module key:

- `#target.sn40l` / `#target.sn40l<{pcus = 520 : i64}>` (key `target.sn40l`):
  the SN40L parameter table of `dialects/target/sn40l.py`, with seed or assumed
  parameters changed (the derived ones follow). `step-allocate-units` and
  `step-allocate-memory` read their chip from it when their own options are not
  given (the table's values when there is no attribute), and the `sn40l` fabric
  preset of the module is built from it (`fabric_target_of`, `fabric_preset_of`:
  `hbm_channels = 20` halves the simulated HBM channels).
- `#target.pim<"allspark-16x16", {rows = 8 : i64}>` (key `target.pim`): a PIM
  mesh preset of `dialects/target/pim.py` and the fields changed from it;
  `pim_target_of(op)` is the `PimHardware` it names.

Example:

```mlir
builtin.module attributes {target.fabric = #target.fabric<"step-eval", {base_depth = 1 : i64}>, target.sn40l = #target.sn40l<{pcus = 520 : i64}>, target.pim = #target.pim<"allspark-8x8">} {
}
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from steplus.dialects.target import pim as pim_target
from steplus.dialects.target import sn40l as sn40l_target
from steplus.dialects.target.fabric import HardwareConfig, get_preset, sn40l_config

FABRIC_KEY = "target.fabric"
"""The name of the module attribute holding a `#target.fabric`."""


def _override_value(key: str, a: Attribute) -> int | float:
    if isinstance(a, IntegerAttr):
        return int(a.value.data)
    if isinstance(a, FloatAttr):
        return float(a.value.data)
    raise VerifyException(f"#target.fabric: '{key}' must be an integer or a float")


# A target attribute is `#target.X<"preset">` or `#target.X<"preset", {field = value, ...}>`:
# the parameters, parser and printer every preset-with-changes attribute shares.
def _preset_parameters(preset: str, overrides: dict[str, int | float] | None) -> tuple[StringAttr, DictionaryAttr]:
    attrs: dict[str, Attribute] = {}
    for k, v in (overrides or {}).items():
        attrs[k] = FloatAttr(v, 64) if isinstance(v, float) else IntegerAttr(v, 64)
    return StringAttr(preset), DictionaryAttr(attrs)


def _parse_preset(parser: AttrParser, what: str) -> tuple[StringAttr, DictionaryAttr]:
    parser.parse_punctuation("<")
    preset = parser.parse_str_literal()
    overrides = DictionaryAttr({})
    if parser.parse_optional_punctuation(","):
        attr = parser.parse_attribute()
        if not isinstance(attr, DictionaryAttr):
            parser.raise_error(f"{what}: expected a dictionary of changed fields")
        overrides = attr
    parser.parse_punctuation(">")
    return StringAttr(preset), overrides


def _print_preset(printer: Printer, preset: StringAttr, overrides: DictionaryAttr) -> None:
    with printer.in_angle_brackets():
        printer.print_string_literal(preset.data)
        if overrides.data:
            printer.print_string(", ")
            printer.print_attribute(overrides)


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
        super().__init__(*_preset_parameters(preset, overrides))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_preset(parser, "#target.fabric")

    def print_parameters(self, printer: Printer) -> None:
        _print_preset(printer, self.preset, self.overrides)

    def verify(self) -> None:
        self.config()

    def config(self, sn40l_table: Mapping[str, sn40l_target.Param] | None = None) -> HardwareConfig:
        """The `HardwareConfig` this attribute names (VerifyException if it is not one);
        the `sn40l` preset is built from `sn40l_table` when given (the module's
        `#target.sn40l`: `fabric_target_of` passes it)."""
        changes = {k: _override_value(k, v) for k, v in self.overrides.data.items()}
        unknown = sorted(set(changes) - CHANGEABLE_FIELDS)
        if unknown:
            raise VerifyException(f"#target.fabric: unknown field(s) {', '.join(unknown)} "
                                  f"(expected {', '.join(sorted(CHANGEABLE_FIELDS))})")
        try:
            return get_preset(self.preset.data, sn40l_table).with_(**changes)
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
    carrying one (None when there is none), its `sn40l` preset built from the
    module's `#target.sn40l` when there is one; ValueError if an attribute is not
    of its kind."""
    attr = _module_attr(op, FABRIC_KEY)
    if attr is None:
        return None
    if not isinstance(attr, FabricTargetAttr):
        raise ValueError(f"'{FABRIC_KEY}' must be a #target.fabric attribute")
    return attr.config(sn40l_table_of(op))


def fabric_preset_of(name: str, op: Operation | None) -> HardwareConfig:
    """The fabric preset `name` for the module of `op`: `get_preset(name)`, the `sn40l`
    preset built from the module's `#target.sn40l` when it carries one (what
    `step-run --preset sn40l` and `convert-step-to-runtime{preset=sn40l}` place on).
    ValueError for an unknown preset or an attribute not of its kind."""
    return get_preset(name, sn40l_table_of(op) if op is not None else None)


SN40L_KEY = "target.sn40l"
"""The name of the module attribute holding a `#target.sn40l`."""


def _number(what: str, key: str, a: Attribute) -> int | float:
    if isinstance(a, IntegerAttr):
        typ: Attribute = cast(IntegerAttr[IntegerType], a).type  # xDSL leaves the parameter open
        if typ == IntegerType(1):  # `true` is i1's -1 to xDSL: not a count
            raise VerifyException(f"{what}: '{key}' must be an integer or a float, got a boolean")
        return int(a.value.data)
    if isinstance(a, FloatAttr):
        return float(a.value.data)
    raise VerifyException(f"{what}: '{key}' must be an integer or a float")


@irdl_attr_definition
class SN40LTargetAttr(ParametrizedAttribute):
    """The SN40L chip a module is compiled for: the seed's parameter table with some parameters changed.

    `#target.sn40l` is the table of `dialects/target/sn40l.py` as it is;
    `#target.sn40l<{pcus = 520 : i64, clock_ghz = 1.2 : f64}>` changes seed or
    assumed parameters, and the derived ones (`pcu_flops`, the node totals)
    are recomputed from them. The verifier builds that table, so an unknown or
    derived name, or a value the table's check rejects (a count that is not
    positive), is an error where the attribute is written, and so is a table
    the `sn40l` fabric preset cannot be built from (more than 1024 HBM
    channels). Read by `step-allocate-units` and `step-allocate-memory`
    (module key `target.sn40l`) for the options they are not given, and by
    the `sn40l` fabric preset of the module (`fabric_target_of`,
    `fabric_preset_of`: `step-run`, `convert-step-to-runtime`).
    """

    name = "target.sn40l"

    changes: DictionaryAttr = param_def()

    def __init__(self, changes: dict[str, int | float] | None = None):
        attrs: dict[str, Attribute] = {}
        for k, v in (changes or {}).items():
            attrs[k] = FloatAttr(v, 64) if isinstance(v, float) else IntegerAttr(v, 64)
        super().__init__(DictionaryAttr(attrs))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        changes = DictionaryAttr({})
        if parser.parse_optional_punctuation("<"):
            attr = parser.parse_attribute()
            if not isinstance(attr, DictionaryAttr):
                parser.raise_error("#target.sn40l: expected a dictionary of changed parameters")
            changes = attr
            parser.parse_punctuation(">")
        return (changes,)

    def print_parameters(self, printer: Printer) -> None:
        if self.changes.data:
            with printer.in_angle_brackets():
                printer.print_attribute(self.changes)

    def verify(self) -> None:
        table = self.table()
        try:  # the sn40l fabric preset of a module carrying it is built from it
            sn40l_config(table)
        except ValueError as e:  # name the changes the fabric field comes from
            changed = ", ".join(f"{k} = {_number('#target.sn40l', k, v)!r}"
                                for k, v in self.changes.data.items())
            raise VerifyException(f"#target.sn40l: as the sn40l fabric: {e} (from the "
                                  f"changed {changed})") from None

    def table(self) -> dict[str, sn40l_target.Param]:
        """The parameter table this attribute names (VerifyException if it is not one)."""
        changes = {k: _number("#target.sn40l", k, v) for k, v in self.changes.data.items()}
        try:
            return sn40l_target.with_changes(changes)
        except ValueError as e:
            raise VerifyException(f"#target.sn40l: {e}") from None

    def value(self, name: str) -> float:
        """One parameter of the table (`value("pcus")`)."""
        return sn40l_target.value(name, self.table())


PIM_KEY = "target.pim"
"""The name of the module attribute holding a `#target.pim`."""


@irdl_attr_definition
class PimTargetAttr(ParametrizedAttribute):
    """The processing-in-memory mesh a module is scheduled for: a preset and the fields changed from it.

    `#target.pim<"allspark-16x16">`, `#target.pim<"allspark-8x8", {node_cap_bytes = 4194304 : i64}>`:
    a preset of `dialects/target/pim.py` (allspark-8x8, allspark-16x16,
    allspark-24x24) and fields of its `PimHardware` (`rows`, `cols`, `pe`,
    `freq_mhz`, ...). The verifier builds the `PimHardware` (its own checks:
    positive fields, tRFC < tREFI, whole-byte flits), so a bad preset, field or
    value is an error where the attribute is written; `hardware()` returns it.
    """

    name = "target.pim"

    preset: StringAttr = param_def()
    overrides: DictionaryAttr = param_def()

    def __init__(self, preset: str, overrides: dict[str, int | float] | None = None):
        super().__init__(*_preset_parameters(preset, overrides))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_preset(parser, "#target.pim")

    def print_parameters(self, printer: Printer) -> None:
        _print_preset(printer, self.preset, self.overrides)

    def verify(self) -> None:
        self.hardware()

    def hardware(self) -> pim_target.PimHardware:
        """The `PimHardware` this attribute names (VerifyException if it is not one)."""
        changes = {k: _number("#target.pim", k, v) for k, v in self.overrides.data.items()}
        if "name" in changes:
            raise VerifyException("#target.pim: 'name' is the preset, not a field to change")
        try:
            hw = pim_target.preset(self.preset.data)
            return pim_target.with_overrides(hw, **changes) if changes else hw
        except (ValueError, TypeError) as e:
            raise VerifyException(f"#target.pim: {e}") from None


def _module_attr(op: Operation, key: str) -> Attribute | None:
    """The attribute `key` of `op` or its closest enclosing module carrying one."""
    cur: Operation | None = op
    while cur is not None:
        if isinstance(cur, ModuleOp) and key in cur.attributes:
            return cur.attributes[key]
        cur = cur.parent_op()
    return None


def sn40l_target_of(op: Operation) -> SN40LTargetAttr | None:
    """The `#target.sn40l` on `op`'s closest enclosing module carrying one (None when
    there is none); ValueError if the attribute under that key is not a `#target.sn40l`."""
    attr = _module_attr(op, SN40L_KEY)
    if attr is not None and not isinstance(attr, SN40LTargetAttr):
        raise ValueError(f"'{SN40L_KEY}' must be a #target.sn40l attribute")
    return attr


def sn40l_table_of(op: Operation) -> dict[str, sn40l_target.Param] | None:
    """The SN40L parameter table of the `#target.sn40l` on `op`'s closest enclosing
    module carrying one (None when there is none); ValueError as `sn40l_target_of`,
    or when the attribute does not verify."""
    attr = sn40l_target_of(op)
    if attr is None:
        return None
    try:
        return attr.table()
    except VerifyException as e:
        raise ValueError(str(e)) from None


def explain_sn40l(op: Operation | None) -> str:
    """`sn40l.explain` of the table of `op`'s module's `#target.sn40l` (the seed's
    table when there is none or `op` is None): what the `sn40l` preset is built from."""
    table = sn40l_table_of(op) if op is not None else None
    return sn40l_target.explain(table if table is not None else sn40l_target.SN40L)


def pim_target_of(op: Operation) -> pim_target.PimHardware | None:
    """The `PimHardware` of the `#target.pim` on `op`'s closest enclosing module
    carrying one (None when there is none); ValueError if the attribute under that
    key is not a `#target.pim`."""
    attr = _module_attr(op, PIM_KEY)
    if attr is None:
        return None
    if not isinstance(attr, PimTargetAttr):
        raise ValueError(f"'{PIM_KEY}' must be a #target.pim attribute")
    return attr.hardware()


Target = Dialect("target", [], [FabricTargetAttr, SN40LTargetAttr, PimTargetAttr])
