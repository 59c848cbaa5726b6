"""Execute `ila.fragment` command streams on a fresh accelerator simulator.

Constant MMIO ops (`ila.write`, `ila.read`) step the simulator directly;
driver-level `ila.cmd`s expand to MMIO with the run-time data
(`store_act`/`load_act` encode/decode AdaptivFloat with the stored tensor's
bias; `linear_layer`, `lstm_layer`, `layernorm`, `attention`, `dense`,
`conv2d` run the driver fragments).

Example: `run_fragment(interpreter, fragment_op, [x])` returns the yielded arrays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, ShapedType
from xdsl.ir import Operation, SSAValue

from steplus.dialects.ila import (ACCEL_FUNCS, CmdOp, FragmentOp, ReadOp, WaitIrqOp, WriteOp,
                                  YieldOp, accel_result_shape)
from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.accel import run_accel
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.flexasr import GB_WINDOWS, FlexAsr, read, write


class Counters(Protocol):
    """`host.Stats` as a fragment uses it: invocations per target, MMIO counts added per target."""

    @property
    def invocations(self) -> Counter[str]: ...
    def add(self, target: str, counts: dict[str, int]) -> None: ...


class Host(Protocol):
    """What a fragment needs of its interpreter (`host.Interpreter`): the counters and the backend
    ("ila" or "reference"). Structural, so host.py and this module need not import each other."""

    @property
    def stats(self) -> Counters: ...
    @property
    def backend(self) -> str: ...


_ACCEL = {"linear_layer": "flexasr.linear", "dense": "vta.dense", "conv2d": "hlscnn.conv2d",
          "lstm_layer": "flexasr.lstm", "layernorm": "flexasr.layernorm", "attention": "flexasr.attention"}


LARGE_VECTORS = GB_WINDOWS["LARGE"][1] // 16
"""16-byte vectors of FlexASR's large global buffer: what one `store_act` / `load_act` moves."""


def _attr(op: Operation, key: str) -> int:
    """The integer attribute `key` of `op`."""
    attr = op.attributes.get(key)
    if attr is None:  # was KeyError: "cannot evaluate 'ila.fragment': 'vector_offset'"
        raise IlaError(f"{op.name}: needs the integer attribute '{key}'", op)
    if not isinstance(attr, IntegerAttr):
        raise IlaError(f"{op.name}: attribute '{key}' must be an integer", op)
    return attr.value.data


def _accel_attrs(op: Operation) -> dict[str, Any]:
    """An accelerator command's `strides` (tuple of ints) and `epsilon` (float), when present."""
    attrs: dict[str, Any] = {}
    if "strides" in op.attributes:
        strides = op.attributes["strides"]
        if not isinstance(strides, DenseArrayBase):
            raise IlaError(f"{op.name}: attribute 'strides' must be a dense array", op)
        attrs["strides"] = tuple(strides.get_values())
    if "epsilon" in op.attributes:
        eps = op.attributes["epsilon"]
        if not isinstance(eps, FloatAttr):
            raise IlaError(f"{op.name}: attribute 'epsilon' must be a float", op)
        attrs["epsilon"] = eps.value.data
    return attrs


def _step(sim: FlexAsr, command: dict[str, int], op: Operation) -> None:
    """One MMIO command of `op` (an ila.write / ila.read); its errors located at `op`."""
    try:
        sim.step(command)
    except IlaError as e:
        e.op = e.op or op
        raise


def run_fragment(interp: Host, frag: Operation, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `ila.fragment` `frag` on operand values `args`; its yielded values."""
    if not isinstance(frag, FragmentOp):
        raise IlaError(f"run_fragment: '{frag.name}' is not an ila.fragment", frag)
    target = frag.target.data
    block = frag.body.block
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, args))
    made: list[FlexAsr] = []  # the FlexASR simulator, built on first use (9 MiB of state: most fragments never step it)

    def flexasr() -> FlexAsr | None:
        if target != "flexasr":
            return None
        if not made:
            made.append(FlexAsr())
        return made[0]

    counts = {"writes": 0, "reads": 0, "waits": 0}
    bias = 0
    interp.stats.invocations[target] += _attr(frag, "invocations") if "invocations" in frag.attributes else 1
    for op in block.ops:
        name = op.name
        if isinstance(op, YieldOp):
            interp.stats.add(target, {k: v for k, v in counts.items() if v})
            return [env[v] for v in op.operands]
        steps = isinstance(op, (WriteOp, ReadOp)) or (isinstance(op, CmdOp) and op.kind.data in ("store_act", "load_act"))
        sim = flexasr() if steps else None
        if isinstance(op, (WriteOp, ReadOp)) and sim is None:
            raise IlaError(f"ila.fragment: '{name}' needs a FlexASR fragment, not '{target}'", op)
        if isinstance(op, WriteOp) and sim is not None:
            _step(sim, write(op.addr.value.data, op.data.value.data), op)
            counts["writes"] += 1
        elif isinstance(op, ReadOp) and sim is not None:
            _step(sim, read(op.addr.value.data), op)
            counts["reads"] += 1
        elif isinstance(op, WaitIrqOp):
            counts["waits"] += 1
        elif isinstance(op, CmdOp):
            kind = op.kind.data
            vals = [env[v] for v in op.operands]
            if kind == "store_act":
                x = np.asarray(vals[0], np.float64)
                bias = af.bias_for(x)
                T, H = x.shape
                v0, nv = _attr(op, "vector_offset"), _attr(op, "vectors")
                if not (0 <= v0 and 1 <= nv and v0 + nv <= H // 16 and T * nv <= LARGE_VECTORS):
                    raise IlaError(f"ila.cmd 'store_act': vectors [{v0}, {v0 + nv}) of {T} x "
                                   f"{H // 16} (at most {LARGE_VECTORS} in the global buffer)", op)
                codes = af.encode(x, bias).reshape(T, H // 16, 16)[:, v0:v0 + nv]
                _, _, c = fd.execute(fd.store_act(np.ascontiguousarray(codes)), sim)
                counts["writes"] += c["writes"]
            elif kind == "load_act":
                T, nv = _attr(op, "timesteps"), _attr(op, "vectors")
                if not (1 <= T and 1 <= nv and T * nv <= LARGE_VECTORS):  # 2^40: a read per vector
                    raise IlaError(f"ila.cmd 'load_act': {T} timesteps of {nv} vectors (the "
                                   f"global buffer holds {LARGE_VECTORS})", op)
                _, reads, c = fd.execute(fd.load_act(T, nv), sim)
                counts["reads"] += c["reads"]
                codes = np.stack(reads).reshape(T, nv * 16) if reads else np.zeros((T, 0), np.uint8)
                env[op.results[0]] = af.decode(codes, bias).astype(np.float32)
            elif kind == "concat":
                env[op.results[0]] = np.concatenate(vals, axis=_attr(op, "axis"))
            elif kind in _ACCEL:
                func = _ACCEL[kind]  # its target, arity and shapes as ila.invoke's verifier
                shapes = [tuple(np.shape(v)) for v in vals]
                if func.split(".")[0] != target or ACCEL_FUNCS[func] != len(vals) or \
                        accel_result_shape(func, shapes, op.attributes) is None:
                    raise IlaError(f"ila.cmd '{kind}' ({func}) in a '{target}' fragment does not "
                                   f"take operands of shapes {', '.join(map(str, map(list, shapes)))}", op)
                attrs = _accel_attrs(op)
                if interp.backend == "reference":
                    from steplus.runtime.ila.accel import reference

                    y = reference(_ACCEL[kind], vals, attrs)
                else:
                    y, c = run_accel(_ACCEL[kind], vals, attrs)
                    interp.stats.add(target, c)
                ty = op.results[0].type
                if not isinstance(ty, ShapedType):
                    raise IlaError(f"ila.cmd '{kind}': the result must be a tensor", op)
                env[op.results[0]] = np.asarray(y, np.float32).reshape(ty.get_shape())
            else:
                raise IlaError(f"ila.fragment: unknown command '{kind}'")
        else:
            raise IlaError(f"ila.fragment: unexpected op '{name}'")
    raise IlaError("ila.fragment: missing ila.yield")
