"""Execute `ila.fragment` command streams on a fresh accelerator simulator.

Constant MMIO ops (`ila.write`, `ila.read`) step the simulator directly;
driver-level `ila.cmd`s expand to MMIO with the run-time data
(`store_act`/`load_act` encode/decode AdaptivFloat with the stored tensor's
bias; `linear_layer`, `lstm_layer`, `layernorm`, `attention`, `dense`,
`conv2d` run the driver fragments).

Example: `run_fragment(interpreter, fragment_op, [x])` returns the yielded arrays.
"""

from __future__ import annotations

import numpy as np

from steplus.runtime.ila import adpfloat as af
from steplus.runtime.ila import flexasr_driver as fd
from steplus.runtime.ila.accel import run_accel
from steplus.runtime.ila.core import IlaError
from steplus.runtime.ila.flexasr import FlexAsr, read, write

_ACCEL = {"linear_layer": "flexasr.linear", "dense": "vta.dense", "conv2d": "hlscnn.conv2d",
          "lstm_layer": "flexasr.lstm", "layernorm": "flexasr.layernorm", "attention": "flexasr.attention"}


def _attr(op, key):
    return op.attributes[key].value.data


def run_fragment(interp, frag, args):
    target = frag.target.data
    block = frag.body.block
    env = dict(zip(block.args, args))
    sim = FlexAsr() if target == "flexasr" else None
    counts = {"writes": 0, "reads": 0, "waits": 0}
    bias = 0
    interp.stats.invocations[target] += frag.attributes["invocations"].value.data \
        if "invocations" in frag.attributes else 1
    for op in block.ops:
        name = op.name
        if name == "ila.yield":
            interp.stats.add(target, {k: v for k, v in counts.items() if v})
            return [env[v] for v in op.operands]
        if name == "ila.write":
            sim.step(write(op.addr.value.data, op.data.value.data))
            counts["writes"] += 1
        elif name == "ila.read":
            sim.step(read(op.addr.value.data))
            counts["reads"] += 1
        elif name == "ila.wait_irq":
            counts["waits"] += 1
        elif name == "ila.cmd":
            kind = op.kind.data
            vals = [env[v] for v in op.operands]
            if kind == "store_act":
                x = np.asarray(vals[0], np.float64)
                bias = af.bias_for(x)
                T, H = x.shape
                v0, nv = _attr(op, "vector_offset"), _attr(op, "vectors")
                codes = af.encode(x, bias).reshape(T, H // 16, 16)[:, v0:v0 + nv]
                _, _, c = fd.execute(fd.store_act(np.ascontiguousarray(codes)), sim)
                counts["writes"] += c["writes"]
            elif kind == "load_act":
                T, nv = _attr(op, "timesteps"), _attr(op, "vectors")
                _, reads, c = fd.execute(fd.load_act(T, nv), sim)
                counts["reads"] += c["reads"]
                codes = np.stack(reads).reshape(T, nv * 16) if reads else np.zeros((T, 0), np.uint8)
                env[op.results[0]] = af.decode(codes, bias).astype(np.float32)
            elif kind == "concat":
                env[op.results[0]] = np.concatenate(vals, axis=_attr(op, "axis"))
            elif kind in _ACCEL:
                attrs = {"strides": tuple(op.attributes["strides"].get_values())} if "strides" in op.attributes else {}
                if "epsilon" in op.attributes:
                    attrs["epsilon"] = op.attributes["epsilon"].value.data
                if interp.backend == "reference":
                    from steplus.runtime.ila.accel import reference

                    y = reference(_ACCEL[kind], vals, attrs)
                else:
                    y, c = run_accel(_ACCEL[kind], vals, attrs)
                    interp.stats.add(target, c)
                env[op.results[0]] = np.asarray(y, np.float32).reshape(op.results[0].type.get_shape())
            else:
                raise IlaError(f"ila.fragment: unknown command '{kind}'")
        else:
            raise IlaError(f"ila.fragment: unexpected op '{name}'")
    raise IlaError("ila.fragment: missing ila.yield")
