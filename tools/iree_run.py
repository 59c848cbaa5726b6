"""Run lus nodes through real IREE: step functions compiled for the CPU.

The module is lowered with `lus-inline-instances`, `convert-lus-to-sync` and
`convert-sync-to-std{target=step-functions}`, compiled by `iree-compile`
(`llvm-cpu` backend, for this machine's CPU unless `$STEPLUS_IREE_CPU` names
another, e.g. `generic`) and loaded with `iree.runtime`. Two ways to run:

- per tick: `@<node>_step(state..., inputs...) -> (state..., outputs...)`
  called from Python once per tick, starting from `@<node>_reset()` (state
  tensors stay on the device between ticks) — for inputs that arrive one
  tick at a time (`IreeNode.step`);
- batched: `@<node>_run(state..., streams...) -> (state..., streams...)` runs
  N ticks in one call, its loop inside one IREE dispatch
  (`runtime/iree_batch.py`) — used by `IreeNode.run` when every input is
  known ahead. If IREE cannot compile the loop as one dispatch, the loop is
  compiled on the host (still one call from Python), and if that fails too
  the node runs tick by tick; `IreeNode.batch_mode` says which
  ("dispatch", "host-loop" or None).

Compiled modules are cached by a hash of the lowered IR
(`runtime/iree_cache.py`), so a second run does not recompile.

Example:

```python
from steplus.tools.iree_run import IreeNode
node = IreeNode.from_lus(module, "integr")
node.step([np.int32(3)])                       # [3]
node.run({"i": np.array([1, 2], np.int32)}, 2)  # [[4, 6]]  (one @integr_run call)
```
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute

from steplus.dialects import lus
from steplus.lowering.arith_guards import DIVISION_BY_ZERO
from steplus.runtime.iree_batch import (
    DISPATCH_FLAGS,
    distinct_output_buffers,
    run_functions,
    without_run_functions,
    wrap_run_functions,
)
from steplus.runtime.iree_cache import CachedCompileError, cached_compile
from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError
from steplus.runtime.reactive.interpreter import (
    MAX_TICKS,
    Outputs,
    drive,
    input_streams,
)
from steplus.runtime.reactive.ops import numpy_dtype


class IreeError(Exception):
    """IREE failed to compile or run a lowered program."""


_CHECK_FAILED = re.compile(re.escape(DIVISION_BY_ZERO) + r" \([^()]*\)")


def call_failure(e: Exception) -> Exception:
    """The error of a failed IREE call: a `RuntimeArithmeticError` when a guard of
    `lowering/arith_guards.py` failed (its message, as the reactive runtimes word it; the caller
    adds the tick), else an `IreeError` with IREE's message."""
    found = _CHECK_FAILED.search(str(e))
    if found is not None:
        return RuntimeArithmeticError(found.group(0))
    return IreeError(f"iree.runtime: {_limit_hint(e)}")


def target_cpu() -> str:
    """The `--iree-llvmcpu-target-cpu` value: `$STEPLUS_IREE_CPU` or `host`."""
    cpu = os.environ.get("STEPLUS_IREE_CPU", "host")
    return cpu if re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", cpu) else "generic"


def lower_to_step_functions(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with every lus node as `@n_reset`/`@n_step`/`@n_run`."""
    from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
    from steplus.lowering.mlir_bridge import steplus_context
    from steplus.lowering.sync_to_std import ConvertSyncToStdPass
    from steplus.passes.lus.inline import LusInlineInstancesPass

    ctx = steplus_context()
    lowered = module.clone()
    for p in (LusInlineInstancesPass(), ConvertLusToSyncPass(), ConvertSyncToStdPass()):
        p.apply(ctx, lowered)
    return lowered


def compile_module(module: ModuleOp, extra_flags: Sequence[str] = ()) -> bytes:
    """Compile a func/arith/scf/tensor/linalg module to an IREE VM flatbuffer
    (through the module cache)."""
    from iree.compiler import CompilerToolError, compile_str

    from steplus.lowering.mlir_bridge import generic_text

    text = generic_text(module)
    flags = [f"--iree-llvmcpu-target-cpu={target_cpu()}", *extra_flags]

    def compile_now() -> bytes:
        try:
            vmfb = compile_str(text, target_backends=["llvm-cpu"], extra_args=flags)
        except CompilerToolError as e:
            lines = [ln for ln in str(e).splitlines() if "error:" in ln]
            raise CachedCompileError(
                "iree-compile failed: " + (lines[0].strip() if lines else str(e)[:500]),
                remember=bool(lines)) from None
        if vmfb is None:  # compile_str returns the bytes when no output file is named
            raise CachedCompileError("iree-compile wrote no module", remember=False)
        return vmfb

    try:
        return cached_compile(text, ["llvm-cpu", *flags], compile_now)
    except CachedCompileError as e:
        raise IreeError(str(e)) from None


def node_functions(std_module: ModuleOp, name: str) -> ModuleOp:
    """A copy of `std_module` with only node `name`'s functions."""
    keep = {f"{name}_reset", f"{name}_step", f"{name}_run"}
    ops = [op.clone() for op in std_module.body.block.ops
           if not isinstance(op, func.FuncOp) or op.sym_name.data in keep]
    return ModuleOp(ops)


def build(std_module: ModuleOp) -> tuple[bytes, str | None]:
    """Compile `std_module`: its `@n_run` loops as one dispatch if IREE can,
    else on the host, else without them. Returns (vmfb, batch mode)."""
    if not run_functions(std_module):
        return compile_module(std_module), None
    try:
        return compile_module(wrap_run_functions(std_module), DISPATCH_FLAGS), "dispatch"
    except IreeError:
        pass
    try:
        return compile_module(distinct_output_buffers(std_module)), "host-loop"
    except IreeError:
        return compile_module(without_run_functions(std_module)), None


def _to_vm(value: object, t: Attribute) -> object:
    if isinstance(t, TensorType):
        return np.ascontiguousarray(np.asarray(value, dtype=numpy_dtype(t)).reshape(t.get_shape()))
    if isinstance(t, IntegerType):
        return int(np.asarray(value).astype(np.int64))
    return float(np.asarray(value))


def _host(value: object) -> object:
    """A VM call's result on the host: a device array copied out (`to_host()` may map the
    device buffer, reused once the result is released: copy it before keeping it), a scalar
    as it is."""
    from iree.runtime import DeviceArray

    return value.to_host() if isinstance(value, DeviceArray) else value


def _from_vm(value: object, t: Attribute) -> object:
    if isinstance(t, TensorType):
        return np.asarray(_host(value)).astype(numpy_dtype(t))
    return np.asarray(value).astype(numpy_dtype(t))[()]


Stream = np.ndarray | Sequence[object]
"""An input stream of the batched entry point: an array (ticks first) or one value per tick."""

def _stream_array(stream: Stream, t: Attribute, ticks: int) -> np.ndarray:
    """`ticks` values of a stream as the `@n_run` argument (i1 as int8)."""
    dtype = numpy_dtype(t)
    shape = tuple(t.get_shape()) if isinstance(t, TensorType) else ()
    if isinstance(stream, np.ndarray):
        values = np.asarray(stream[:ticks], dtype=dtype)
    else:
        values = np.asarray([np.asarray(v, dtype=dtype) for v in list(stream)[:ticks]],
                            dtype=dtype)
    values = values.reshape((ticks, *shape))
    if dtype == np.bool_:
        values = values.astype(np.int8)
    return np.ascontiguousarray(values)


MAX_BINDINGS = 32
"""IREE's local (CPU) HAL takes at most 32 buffer bindings per dispatch."""


def _limit_hint(e: Exception) -> str:
    """The runtime's message, with what to do when a dispatch passed IREE's limits."""
    text = " ".join(str(e).split())
    if "exceeds limit" in text or "binding count" in text:
        return (f"{text[:160]} (the node has more inputs and outputs than one IREE CPU "
                "dispatch takes: 32 buffer bindings when batched, 64 push constants per tick; "
                "split the node's outputs or use --backend sync)")
    return text


class IreeNode:
    """One compiled node: `@<name>_reset`, `@<name>_step` (one tick) and, if
    the lowering emitted it, `@<name>_run` (N ticks in one call).

    `std_module` is the output of `convert-sync-to-std{target=step-functions}`;
    `IreeNode.from_lus` lowers a lus module first."""

    def __init__(self, std_module: ModuleOp, name: str, vmfb: bytes | None = None,
                 batch_mode: str | None = "given"):
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
        self.name = name
        run = funcs.get(f"{name}_run")
        # a @_run with run-time checks returns the first failing tick after its outputs
        self.run_checked = run is not None and len(run.function_type.outputs.data) > n + len(self.out_types)
        if vmfb is None:
            self.vmfb, self.batch_mode = build(node_functions(std_module, name))
        else:
            self.vmfb = vmfb
            self.batch_mode = batch_mode if f"{name}_run" in funcs else None
        try:
            ctx = rt.SystemContext(config=rt.Config("local-sync"))
            ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, self.vmfb))
        except (RuntimeError, IndexError) as e:  # IndexError: a dispatch over IREE's limits
            raise IreeError(f"iree.runtime could not load the module: {_limit_hint(e)}"
                            ) from None
        functions = ctx.modules.module
        self._reset = functions[f"{name}_reset"]
        self._step = functions[f"{name}_step"]
        self._run = None
        if self.batch_mode is not None:
            try:
                self._run = functions[f"{name}_run"]
            except (KeyError, AttributeError):
                self.batch_mode = None
        self.reset()

    @classmethod
    def from_lus(cls, module: ModuleOp, name: str) -> IreeNode:
        if not any(isinstance(n, lus.NodeOp) and n.sym_name.data == name for n in module.walk()):
            raise ReactiveError(f"no lus.node named @{name}")
        return cls(lower_to_step_functions(module), name)

    @property
    def too_wide_to_batch(self) -> bool:
        """Would `@<name>_run` need more than IREE's `MAX_BINDINGS` buffer
        bindings in one dispatch (one per input and output stream)? `run`
        then falls back to one `@<name>_step` call per tick."""
        return len(self.in_types) + len(self.out_types) > MAX_BINDINGS

    def reset(self) -> None:
        state = self._reset()
        self.state = list(state) if isinstance(state, tuple) else ([] if state is None else [state])
        self.ticks = 0  # ticks run since the reset (a failed check is reported at its tick)

    def step(self, inputs: Sequence[object]) -> list[object]:
        """One tick (one `@<name>_step` call) from the current state."""
        args = [*self.state, *(_to_vm(v, t) for v, t in zip(inputs, self.in_types))]
        try:
            outputs = self._call(self._step, args)
        except RuntimeArithmeticError as e:
            raise e.at_tick(self.ticks) from None
        self.ticks += 1
        return [_from_vm(v, t) for v, t in zip(outputs, self.out_types)]

    def _call(self, fn, args: list[object]) -> tuple[object, ...]:
        """Call `@_step` or `@_run`: the new state is kept, the outputs returned."""
        try:
            results = fn(*args)
        except (RuntimeError, ValueError, IndexError) as e:
            raise call_failure(e) from None
        if not isinstance(results, tuple):
            results = (results,)
        n = len(self.state_types)
        self.state = list(results[:n])
        return results[n:]

    def run_batch(self, streams: Sequence[Stream], ticks: int) -> list[np.ndarray]:
        """`ticks` ticks in one `@<name>_run` call from the current state;
        `streams` in input order (arrays or sequences of at least `ticks`
        values). One array per output, ticks first (bool for i1)."""
        if self._run is None:
            raise IreeError("this node has no batched entry point (@_run)")
        if ticks < 0 or len(streams) != len(self.in_types):
            raise ReactiveError(f"{len(streams)} input stream(s) for {len(self.in_types)} "
                                f"input(s), {ticks} ticks")
        for s, name in zip(streams, self.input_names):
            if len(s) < ticks:
                raise ReactiveError(f"input %{name} has {len(s)} values for {ticks} ticks")
        args = [*self.state, *(_stream_array(s, t, ticks)
                               for s, t in zip(streams, self.in_types))]
        if not self.in_types:
            args.append(ticks)
        first_state = list(self.state)
        results = self._call(self._run, args)
        if self.run_checked:  # the first tick whose checks failed, or -1 (lowering/sync_run.py)
            failed = int(np.asarray(_host(results[-1])))
            results = results[:-1]
            if failed >= 0:
                self.state = first_state  # re-run up to that tick with @_step, which reports it
                for t in range(min(failed, ticks - 1) + 1):
                    self.step([s[t] for s in streams])
                raise IreeError(f"@{self.name}_run reported a failed check at tick {self.ticks + failed} "
                                "that @_step does not")
        self.ticks += ticks
        outs = []
        for v, t in zip(results, self.out_types):
            # a copy: to_host() may map the device buffer, which is reused
            # once the result is released
            host = np.array(_host(v), copy=True)
            outs.append(host.astype(numpy_dtype(t)) if numpy_dtype(t) == np.bool_ else host)
        return outs

    def run(self, inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
            ticks: int, max_ticks: int = MAX_TICKS, per_tick: bool = False
            ) -> Outputs:
        """Run `ticks` ticks (at most `max_ticks`) from the current state;
        inputs by name or position. All inputs are known, so this is one
        `@<name>_run` call when the node has one (unless `per_tick`); the
        outputs are then arrays (ticks first), else lists of values."""
        if not per_tick and self._run is not None and ticks > 0 and self.too_wide_to_batch:
            per_tick = True  # the batched dispatch would pass IREE's binding limit
        if per_tick or self._run is None or ticks == 0:
            return drive(self.step, self.input_names, inputs, ticks, len(self.out_types),
                         max_ticks)
        streams = input_streams(self.input_names, inputs, ticks, max_ticks)
        return self.run_batch(streams, ticks)  # one array per output, ticks first


def iree_nodes(module: ModuleOp) -> dict[str, IreeNode]:
    """Every runnable lus node of `module` (no static parameters), keyed by
    name, compiled together in one IREE
    module (one compilation, one cache entry for the whole program)."""
    std = lower_to_step_functions(module)
    vmfb, mode = build(std)
    names = {f.sym_name.data[:-5] for f in std.body.block.ops
             if isinstance(f, func.FuncOp) and f.sym_name.data.endswith("_step")}
    return {op.sym_name.data: IreeNode(std, op.sym_name.data, vmfb, mode)
            for op in module.body.block.ops
            if isinstance(op, lus.NodeOp) and op.sym_name.data in names
            and op.num_static.value.data == 0}


def run_node_iree(
    module: ModuleOp,
    name: str,
    inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
    ticks: int,
    max_ticks: int = MAX_TICKS,
    per_tick: bool = False,
) -> Outputs:
    """Run lus node `@name` through IREE; same interface as `run_node`
    (batched unless `per_tick`)."""
    return IreeNode.from_lus(module, name).run(inputs, ticks, max_ticks, per_tick)
