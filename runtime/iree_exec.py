"""Run lus nodes through real IREE: step functions compiled for the CPU.

The module is lowered with `lus-inline-instances`, `convert-lus-to-sync` and
`convert-sync-to-std{target=step-functions}`, compiled by `iree-compile`
(`llvm-cpu` backend, generic CPU) and loaded with `iree.runtime`; each tick
calls `@<node>_step(state..., inputs...) -> (state..., outputs...)` starting
from `@<node>_reset()`. State tensors stay on the device between ticks.

Example:

```python
from steplus.runtime.iree_exec import IreeNode
node = IreeNode.from_lus(module, "integr")
node.step([np.int32(3)])   # [3]
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute

from steplus.dialects import lus
from steplus.runtime.reactive.interpreter import MAX_TICKS, ReactiveError, drive
from steplus.runtime.reactive.ops import numpy_dtype


class IreeError(Exception):
    """IREE failed to compile or run a lowered program."""


IREE_FLAGS = ("--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic")


def lower_to_step_functions(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with every lus node as `@n_reset`/`@n_step` functions."""
    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
    from steplus.lowering.mlir_interop import steplus_context
    from steplus.lowering.sync_to_std import ConvertSyncToStdPass
    from steplus.passes.lus.inline import LusInlineInstancesPass

    ctx = steplus_context()
    lowered = module.clone()
    for p in (LusInlineInstancesPass(), ConvertLusToSyncPass(), ConvertSyncToStdPass()):
        p.apply(ctx, lowered)
    return lowered


def compile_module(module: ModuleOp) -> bytes:
    """Compile a func/arith/scf/tensor/linalg module to an IREE VM flatbuffer."""
    from iree.compiler import CompilerToolError, compile_str

    from steplus.lowering.mlir_interop import generic_text

    try:
        return compile_str(generic_text(module), target_backends=["llvm-cpu"],
                           extra_args=["--iree-llvmcpu-target-cpu=generic"])
    except CompilerToolError as e:
        lines = [ln for ln in str(e).splitlines() if "error:" in ln]
        raise IreeError("iree-compile failed: " + (lines[0].strip() if lines else str(e)[:500])) from None


def _to_vm(value: object, t: Attribute) -> object:
    if isinstance(t, TensorType):
        return np.ascontiguousarray(np.asarray(value, dtype=numpy_dtype(t)).reshape(t.get_shape()))
    if isinstance(t, IntegerType):
        return int(np.asarray(value).astype(np.int64))
    return float(np.asarray(value))


def _from_vm(value: object, t: Attribute) -> object:
    if isinstance(t, TensorType):
        host = value.to_host() if hasattr(value, "to_host") else value
        return np.asarray(host).astype(numpy_dtype(t))
    return np.asarray(value).astype(numpy_dtype(t))[()]


class IreeNode:
    """One compiled node (`@<name>_reset`/`@<name>_step`), stepped tick by tick.

    `std_module` is the output of `convert-sync-to-std{target=step-functions}`;
    `IreeNode.from_lus` lowers a lus module first."""

    def __init__(self, std_module: ModuleOp, name: str, vmfb: bytes | None = None):
        import iree.runtime as rt

        funcs = {f.sym_name.data: f for f in std_module.walk() if isinstance(f, func.FuncOp)}
        if f"{name}_step" not in funcs or f"{name}_reset" not in funcs:
            raise ReactiveError(f"no step functions @{name}_reset/@{name}_step (no node @{name})")
        step = funcs[f"{name}_step"]
        self.state_types = list(funcs[f"{name}_reset"].function_type.outputs.data)
        n = len(self.state_types)
        self.in_types = list(step.function_type.inputs.data)[n:]
        self.input_names = [a.name_hint for a in step.body.block.args[n:]]
        self.out_types = list(step.function_type.outputs.data)[n:]
        self.vmfb = vmfb if vmfb is not None else compile_module(std_module)
        try:
            ctx = rt.SystemContext(config=rt.Config("local-sync"))
            ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, self.vmfb))
        except RuntimeError as e:
            raise IreeError(f"iree.runtime could not load the module: {e}") from None
        functions = ctx.modules.module
        self._reset = functions[f"{name}_reset"]
        self._step = functions[f"{name}_step"]
        self.reset()

    @classmethod
    def from_lus(cls, module: ModuleOp, name: str) -> IreeNode:
        if not any(isinstance(n, lus.NodeOp) and n.sym_name.data == name for n in module.walk()):
            raise ReactiveError(f"no lus.node named @{name}")
        return cls(lower_to_step_functions(module), name)

    def reset(self) -> None:
        state = self._reset()
        self.state = list(state) if isinstance(state, tuple) else ([] if state is None else [state])

    def step(self, inputs: Sequence[object]) -> list[object]:
        args = [*self.state, *(_to_vm(v, t) for v, t in zip(inputs, self.in_types))]
        try:
            results = self._step(*args)
        except (RuntimeError, ValueError) as e:
            raise IreeError(f"iree.runtime: {e}") from None
        if not isinstance(results, tuple):
            results = (results,)
        n = len(self.state_types)
        self.state = list(results[:n])
        return [_from_vm(v, t) for v, t in zip(results[n:], self.out_types)]

    def run(self, inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
            ticks: int, max_ticks: int = MAX_TICKS) -> list[list[object]]:
        """Run `ticks` ticks (at most `max_ticks`) from the current state;
        inputs by name or position."""
        n_out = len(self.out_types)
        return drive(self.step, self.input_names, inputs, ticks, n_out, max_ticks)


def run_node_iree(
    module: ModuleOp,
    name: str,
    inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
    ticks: int,
    max_ticks: int = MAX_TICKS,
) -> list[list[object]]:
    """Run lus node `@name` through IREE; same interface as `run_node`."""
    return IreeNode.from_lus(module, name).run(inputs, ticks, max_ticks)
