"""Run the `modular` target of convert-sync-to-std on IREE, with its runtime.

`convert-sync-to-std{target=modular}` turns every sync node into
`func.func @n(%inst: i32)` that loops forever and talks to a runtime through
`@sch_*` calls, as in the seed (see `lowering/sync_to_std.py`). This module
is that runtime: the calls become imports of an IREE VM module `sch`
implemented in Python (`iree.runtime.PyModuleInterface`), and each node
instance is one invocation of its function, run as a coroutine on its own
thread (only one thread runs at a time: control is handed over explicitly).

- `sch_set_instance(k, fid)`: the running instance declares its child `k`,
  an instance of the node numbered `fid` (module order);
- `sch_set_io_T(k, pos, v)` / `sch_get_io_T(k, pos)`: the child's inputs
  (positions 0..n_in-1) and outputs (n_in..);
- `inst(k)`: run one reaction of child `k`, up to its next `tick()`;
- `sch_input_T(inst, pos)` / `sch_output_T(inst, pos, v)`: a node reads its
  input / writes its output (the root's come from / go to the caller);
- `tick()`: the end of the running instance's reaction; control goes back to
  whoever triggered it.

Values are scalars (`i1`, integers up to 64 bits, `f32`, `f64`) or
static-shaped tensors, passed as HAL buffer views (a child's inputs and
outputs are handed over as the references they are; the root's are copied
from / to numpy arrays).

Example:

```python
from steplus.tools.iree_modular import ModularNode
node = ModularNode.from_lus(module, "integr")
node.run({"i": [1, 2, 3]}, 3)   # [[1, 3, 6]]
node.close()                    # ends the instance threads
```
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute

from steplus.dialects import lus, sync
from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError
from steplus.runtime.reactive.interpreter import ABSENT, MAX_TICKS, drive
from steplus.tools.iree_run import IreeError, call_failure, compile_module

RUNTIME_MODULE = "sch"
_RUNTIME_NAMES = ("sch_", "tick", "inst")
MAX_INSTANCES = 1000  # instances (one thread each) one program may create


class _Stop(Exception):
    """Raised in a blocked instance to end it."""


def _code(t: Attribute) -> str:
    """The IREE VM calling-convention letter of a scalar type."""

    if isinstance(t, IntegerType):
        return "I" if t.width.data > 32 else "i"
    if isinstance(t, AnyFloat):
        return "F" if t.bitwidth > 32 else "f"
    if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
        return "r"  # a HAL buffer view
    raise IreeError(f"the modular runtime does not support values of type {t}")


def _runtime_name(name: str) -> str | None:
    """`sch_input_i32` -> `input_i32`, `tick` -> `tick`, `inst` -> `inst`."""
    if name.startswith("sch_"):
        return name[4:]
    return name if name in ("tick", "inst") else None


def modular_module(sync_module: ModuleOp) -> tuple[ModuleOp, list[tuple[str, int, int]]]:
    """The modular lowering of a sync module with its runtime calls renamed
    `@sch.<name>` (IREE imports), and the node table (name, inputs, outputs)
    in `fid` order."""
    from steplus.lowering.mlir_bridge import steplus_context
    from steplus.lowering.sync_to_std import ConvertSyncToStdPass

    nodes = [n for n in sync_module.body.block.ops if isinstance(n, sync.NodeOp)]
    table = [(n.sym_name.data, n.num_inputs, len(n.body.block.args) - n.num_inputs)
             for n in nodes]
    lowered = sync_module.clone()
    ConvertSyncToStdPass(target="modular").apply(steplus_context(), lowered)
    for op in lowered.walk():
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            short = _runtime_name(op.sym_name.data)
            if short is not None:
                op.sym_name = StringAttr(f"{RUNTIME_MODULE}.{short}")
        elif isinstance(op, func.CallOp):
            short = _runtime_name(op.callee.root_reference.data)
            if short is not None:
                op.callee = SymbolRefAttr(f"{RUNTIME_MODULE}.{short}")
    return lowered, table


class _Instance:
    def __init__(self, gid: int, fid: int, n_in: int, n_out: int):
        self.gid, self.fid, self.n_in = gid, fid, n_in
        self.io: list[object] = [ABSENT] * (n_in + n_out)
        self.children: dict[int, _Instance] = {}
        self.go = threading.Semaphore(0)
        self.done = threading.Semaphore(0)
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.finished = False


class ModularNode:
    """A sync program lowered to the modular target, compiled by IREE, run
    tick by tick through the Python runtime `sch`."""

    def __init__(self, sync_module: ModuleOp, name: str):
        import iree.runtime as rt


        lowered, self.table = modular_module(sync_module)
        fids = {n: k for k, (n, _, _) in enumerate(self.table)}
        if name not in fids:
            raise ReactiveError(f"no sync.node named @{name}")
        self.root_fid = fids[name]
        decls = {op.sym_name.data: op for op in lowered.body.block.ops
                 if isinstance(op, func.FuncOp) and not op.body.blocks}
        node = next(n for n in sync_module.body.block.ops
                    if isinstance(n, sync.NodeOp) and n.sym_name.data == name)
        self.input_names = [a.name_hint for a in node.body.block.args[:node.num_inputs]]
        self.in_types = [_element(a.type) for a in node.body.block.args[:node.num_inputs]]
        self.out_types = [_element(a.type) for a in node.body.block.args[node.num_inputs:]]
        self.vmfb = compile_module(lowered)
        iface = rt.PyModuleInterface(RUNTIME_MODULE, lambda _iface: self)
        for full, decl in decls.items():
            short = full.split(".", 1)[1]
            ins = "".join(_code(t) for t in decl.function_type.inputs.data) or "v"
            outs = "".join(_code(t) for t in decl.function_type.outputs.data) or "v"
            iface.export(short, f"0{ins}_{outs}", self._handler(short))
        try:
            ctx = rt.SystemContext(config=rt.Config("local-sync"))
            ctx.add_vm_module(iface.create())
            ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, self.vmfb))
        except RuntimeError as e:
            raise IreeError(f"iree.runtime could not load the module: {e}") from None
        self._functions = [ctx.modules.module[n] for n, _, _ in self.table]
        self._device = ctx.config.device
        self._alive: list[object] = []  # device arrays of the root's inputs this tick
        self.ticks = 0  # reactions run (a failed check is reported at its tick)
        self._ctx, self._iface = ctx, iface
        self._by_thread: dict[int, _Instance] = {}
        self._instances: list[_Instance] = []
        self._stopping = False
        self._failure: str | None = None  # the first runtime call that failed
        self.root = self._new_instance(self.root_fid)

    @classmethod
    def from_lus(cls, module: ModuleOp, name: str) -> ModularNode:
        """Lower a lus module with convert-lus-to-sync first."""
        from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
        from steplus.lowering.mlir_bridge import steplus_context

        if not any(isinstance(n, lus.NodeOp) and n.sym_name.data == name for n in module.walk()):
            raise ReactiveError(f"no lus.node named @{name}")
        lowered = module.clone()
        ConvertLusToSyncPass().apply(steplus_context(), lowered)
        return cls(lowered, name)

    # --- the runtime calls ---------------------------------------------------

    def _handler(self, short: str):
        kind, _, _ = short.partition("_")
        if short == "tick":
            return lambda _self: self._tick()
        if short == "inst":
            return lambda _self, k: self._resume(self._current().children[k])
        if short == "set_instance":
            return lambda _self, k, fid: self._set_instance(k, fid)
        if kind == "input":
            return lambda _self, inst, pos: self._instances[inst].io[pos]
        if kind == "output":
            def output(_self, inst, pos, v):
                instance = self._instances[inst]
                instance.io[instance.n_in + pos] = v
            return output
        if short.startswith("set_io_"):
            def set_io(_self, k, pos, v):
                self._current().children[k].io[pos] = v
            return set_io
        if short.startswith("get_io_"):
            return lambda _self, k, pos: self._current().children[k].io[pos]
        raise ReactiveError(f"unknown runtime function sch_{short}")

    def _current(self) -> _Instance:
        return self._by_thread[threading.get_ident()]

    def _new_instance(self, fid: int) -> _Instance:
        if len(self._instances) >= MAX_INSTANCES:
            raise ReactiveError(f"more than {MAX_INSTANCES} node instances")
        _, n_in, n_out = self.table[fid]
        instance = _Instance(len(self._instances), fid, n_in, n_out)
        self._instances.append(instance)
        return instance

    def _set_instance(self, k: int, fid: int) -> None:
        try:
            if not 0 <= fid < len(self.table):
                raise ReactiveError(f"sch_set_instance: no node number {fid}")
            self._current().children[k] = self._new_instance(fid)
        except ReactiveError as e:  # IREE wraps it, with tracebacks, in each caller's error
            self._failure = self._failure or str(e)  # (the text: e's frames hold IREE objects)
            raise

    def _body(self, instance: _Instance) -> None:
        self._by_thread[threading.get_ident()] = instance
        instance.go.acquire()
        try:
            if not self._stopping:
                self._functions[instance.fid](instance.gid)
                instance.error = ReactiveError(f"@{self.table[instance.fid][0]} returned")
        except BaseException as e:  # noqa: BLE001 - handed to the resumer
            if not self._stopping:
                instance.error = e
        finally:
            instance.finished = True
            instance.done.release()

    def _resume(self, instance: _Instance) -> None:
        """Run one reaction of `instance` (until its tick)."""
        if instance.finished:
            raise ReactiveError(f"instance of @{self.table[instance.fid][0]} has ended")
        if instance.thread is None:
            instance.thread = threading.Thread(target=self._body, args=(instance,),
                                               daemon=True)
            instance.thread.start()
        instance.go.release()
        instance.done.acquire()
        if instance.error is not None:
            error, instance.error = instance.error, None
            raise error

    def _tick(self) -> None:
        instance = self._current()
        instance.done.release()
        instance.go.acquire()
        if self._stopping:
            raise _Stop()

    # --- the caller's interface ----------------------------------------------

    def step(self, inputs: Sequence[object]) -> list[object]:
        """One reaction of the root instance."""
        import iree.runtime as rt


        root = self.root
        self._alive = [self._to_runtime(v, t) for v, t in zip(inputs, self.in_types)]
        # a tensor goes by its buffer view's reference (DeviceArray keeps the view private)
        root.io[:root.n_in] = [a._buffer_view.ref if isinstance(a, rt.DeviceArray) else a for a in self._alive]
        root.io[root.n_in:] = [ABSENT] * (len(root.io) - root.n_in)
        try:
            self._resume(root)
        except RuntimeError as e:
            if self._failure is not None:
                raise ReactiveError(self._failure) from None
            failure = call_failure(e)
            if isinstance(failure, RuntimeArithmeticError):
                failure = failure.at_tick(self.ticks)
            raise failure from None
        self.ticks += 1
        return [self._from_runtime(v, t) for v, t in zip(root.io[root.n_in:], self.out_types)]

    def _to_runtime(self, v: object, t: Attribute) -> object:
        import iree.runtime as rt

        from steplus.runtime.reactive.ops import numpy_dtype

        if isinstance(t, TensorType):
            a = np.ascontiguousarray(np.asarray(v, dtype=numpy_dtype(t)).reshape(t.get_shape()))
            return rt.asdevicearray(self._device, a)
        return _scalar(v)

    def _from_runtime(self, v: object, t: Attribute) -> object:
        import iree.runtime as rt

        from steplus.runtime.reactive.ops import numpy_dtype

        if v is ABSENT:
            return v
        if isinstance(t, TensorType):
            view = v.deref(rt.HalBufferView) if isinstance(v, rt.VmRef) else None
            if view is None:
                raise IreeError(f"the node returned {v!r} for a tensor output")
            return np.array(rt.DeviceArray(self._device, view).to_host(), copy=True).astype(numpy_dtype(t))
        return np.asarray(v).astype(numpy_dtype(t))[()]

    def run(self, inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
            ticks: int, max_ticks: int = MAX_TICKS) -> list[list[object]]:
        """`ticks` reactions; inputs by name or position."""
        return drive(self.step, self.input_names, inputs, ticks, len(self.out_types),
                     max_ticks)

    def close(self) -> None:
        """End every instance (their threads), then forget them."""
        self._stopping = True
        for instance in self._instances:
            if instance.thread is not None and not instance.finished:
                instance.go.release()
                instance.thread.join(timeout=10)
        self._instances.clear()
        self._by_thread.clear()
        # break the cycle self -> context -> runtime module -> handlers -> self
        self._functions, self._ctx, self._iface, self._alive = [], None, None, []

    def __enter__(self) -> ModularNode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _element(t: Attribute) -> Attribute:
    """The value type of a `sync.node` signal (its verifier makes every argument one)."""
    if not isinstance(t, sync.SigInType | sync.SigOutType):
        raise ReactiveError(f"a sync.node argument of type {t} is not a signal")
    return t.element


def _scalar(v: object) -> object:
    a = np.asarray(v)
    if a.dtype.kind == "b" or a.dtype.kind in "iu":
        return int(a)
    return float(a)


def run_node_modular(module: ModuleOp, name: str,
                     inputs: Mapping[str, Sequence[object]] | Sequence[Sequence[object]],
                     ticks: int, max_ticks: int = MAX_TICKS) -> list[list[object]]:
    """Run lus node `@name` on the modular target; same interface as `run_node`."""
    with ModularNode.from_lus(module, name) as node:
        return node.run(inputs, ticks, max_ticks)
