"""Execute a tensor-level function: host ops in numpy, accelerator parts on ILAs.

`run_function(module, name, inputs, backend)` interprets `func.func @name`.
With `backend="ila"`, `ila.invoke`, `ila.store/compute/load` chains and
`ila.fragment`s run on the FlexASR / VTA / HLSCNN simulators; with
`backend="reference"` every accelerator function is its float32 numpy meaning.
It returns the results and `Stats` (invocations per target, MMIO counts).

Example::

    outs, stats = run_function(module, "maxpool", [x], backend="ila")
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from steplus.runtime.ila.accel import reference, run_accel
from steplus.runtime.ila.core import IlaError


@dataclass
class Stats:
    invocations: Counter = field(default_factory=Counter)
    mmio: Counter = field(default_factory=Counter)

    def add(self, target: str, counts: dict) -> None:
        for k, v in counts.items():
            self.mmio[f"{target}.{k}"] += v


@dataclass
class _Acc:
    """An accelerator-resident value: a stored host tensor or a computation."""

    target: str
    callee: str | None
    args: list
    attrs: dict


def _attrs(op) -> dict:
    out = {}
    for k, a in op.attributes.items():
        if hasattr(a, "get_values"):
            out[k] = tuple(int(v) for v in a.get_values())
        elif hasattr(a, "value") and hasattr(a.value, "data"):
            out[k] = a.value.data
        elif hasattr(a, "data"):
            out[k] = a.data
    return out


def _constant(op) -> np.ndarray:
    """A constant op's value (float32 for float types), or a located IlaError."""
    from steplus.passes.isel.constants import ConstantError, constant_array

    try:
        arr = constant_array(op, MAX_RESULT_ELEMENTS)
    except ConstantError as e:
        raise IlaError(f"step-run: {e}", op) from None
    return arr.astype(np.float32) if arr.dtype == np.float64 else arr


# the largest tensor one op may produce (elements); bounds what a program's types can make step-run allocate
MAX_RESULT_ELEMENTS = 1 << 27
_NUMPY_ERRORS = (ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, OverflowError,
                 FloatingPointError, MemoryError)


def _check_result_sizes(op) -> None:
    for r in op.results:
        shape = r.type.get_shape() if hasattr(r.type, "get_shape") else ()
        size = int(np.prod([max(d, 0) for d in shape], dtype=np.float64))
        if size > MAX_RESULT_ELEMENTS:
            raise IlaError(f"step-run: '{op.name}' result has {size:.0f} elements, more than step-run's "
                           f"limit of {MAX_RESULT_ELEMENTS} per tensor", op)


def windows_nhwc(x, kernel, stride, pad):
    n, h, w, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    pt, pb, pl, pr = pad
    xp = np.full((n, h + pt + pb, w + pl + pr, c), -np.inf, np.float32)
    xp[:, pt:pt + h, pl:pl + w] = x
    oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
    rows = [xp[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :].reshape(-1) for i in range(kh) for j in range(kw)]
    return np.stack(rows)


def im2col_nchw(x, kernel, stride):
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    cols = np.stack([x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], axis=2)
    return cols.reshape(n, c * kh * kw, oh * ow).transpose(0, 2, 1).reshape(n * oh * ow, c * kh * kw)


class Interpreter:
    def __init__(self, backend: str = "ila"):
        if backend not in ("ila", "reference"):
            raise ValueError(backend)
        self.backend = backend
        self.stats = Stats()

    # -- accelerator parts ---------------------------------------------------
    def call(self, callee: str, args, attrs):
        target = callee.split(".")[0]
        self.stats.invocations[target] += 1
        if self.backend == "reference":
            return reference(callee, args, attrs)
        y, counts = run_accel(callee, args, attrs)
        self.stats.add(target, counts)
        return y

    def force(self, acc: _Acc):
        if acc.callee is None:
            return acc.args[0]
        chain, cur = [], acc
        while cur.callee in ("flexasr.maxpool", "flexasr.meanpool") and len(chain) < 64:
            chain.append(cur.callee)
            cur = cur.args[0]
        if chain and cur.callee is None and len(set(chain)) == 1 and self.backend == "ila":
            # one fragment: store once, pool len(chain) times in place, load once
            self.stats.invocations["flexasr"] += len(chain)
            y, counts = run_accel(chain[0], [cur.args[0]], {"pools": len(chain)})
            self.stats.add("flexasr", counts)
            return y
        return self.call(acc.callee, [self.force(a) for a in acc.args], acc.attrs)

    # -- ops -------------------------------------------------------------------
    def run_block(self, block, env):
        self.env = env
        for op in block.ops:
            name = op.name
            get = lambda v: env[v]
            if name in ("func.return", "ila.yield"):
                return [get(v) for v in op.operands]
            env_vals = self.eval_located(op, [get(v) for v in op.operands])
            for r, v in zip(op.results, env_vals):
                env[r] = v
        return []

    def eval_located(self, op, a):
        """`eval`, with any failure turned into an IlaError naming (and located at) `op`."""
        from steplus.passes.isel.opcheck import op_problem

        _check_result_sizes(op)
        problem = op_problem(op)
        if problem is not None:
            raise IlaError(f"step-run: '{op.name}': {problem}", op)
        try:
            return self.eval(op, a)
        except IlaError as e:
            if e.op is None:
                e.op = op
            raise
        except _NUMPY_ERRORS as e:
            raise IlaError(f"step-run: cannot evaluate '{op.name}': {e}", op) from None

    def eval(self, op, a):
        name = op.name
        rtypes = [r.type for r in op.results]
        shape = tuple(rtypes[0].get_shape()) if rtypes and hasattr(rtypes[0], "get_shape") else ()
        p = op.properties
        if name == "arith.constant" and not hasattr(rtypes[0], "get_shape"):
            return [_constant(op).item()]
        if name == "tensor.dim":
            return [np.shape(a[0])[int(a[1])]]
        if name == "tensor.empty" and a:
            it = iter(a)
            shape = tuple(int(next(it)) if d < 0 else d for d in shape)
            if min(shape, default=0) < 0 or np.prod(shape, dtype=np.float64) > MAX_RESULT_ELEMENTS:
                raise IlaError(f"step-run: 'tensor.empty' of shape {list(shape)} is negative or larger than "
                               f"step-run's limit of {MAX_RESULT_ELEMENTS} elements per tensor", op)
            return [np.zeros(shape, np.float32)]
        if name in ("arith.constant", "tosa.const"):
            return [_constant(op)]
        if name == "tensor.empty":
            return [np.zeros(shape, np.float32)]
        if name == "linalg.fill":
            return [np.full(shape, a[0], np.float32)]
        if name == "linalg.matmul":
            return [(a[2] + a[0] @ a[1]).astype(np.float32)]
        if name == "linalg.transpose":
            return [np.transpose(a[0], tuple(p["permutation"].get_values())).copy()]
        if name in ("linalg.add", "tosa.add"):
            return [(a[0] + a[1]).astype(np.float32)]
        if name in ("linalg.sub", "tosa.sub"):
            return [(a[0] - a[1]).astype(np.float32)]
        if name in ("linalg.mul", "tosa.mul"):
            return [(a[0] * a[1]).astype(np.float32)]
        if name == "linalg.conv_2d_nchw_fchw":
            from steplus.runtime.ila.accel import conv2d_nchw

            if tuple(p["dilations"].get_values()) != (1, 1):
                raise IlaError("step-run: 'linalg.conv_2d_nchw_fchw' with dilations other than 1 is not supported", op)

            return [a[2] + conv2d_nchw(a[0], a[1], tuple(p["strides"].get_values()))]
        if name == "tosa.const_shape":
            return [tuple(int(v) for v in p["values"].get_values())]
        if name == "tosa.reshape":
            return [a[0].reshape(shape)]
        if name == "tosa.clamp":
            lo, hi = float(p["min_val"].value.data), float(p["max_val"].value.data)
            return [np.clip(a[0], lo, hi)]
        if name == "tosa.sigmoid":
            return [(1 / (1 + np.exp(-a[0]))).astype(np.float32)]
        if name == "tosa.rsqrt":
            return [(1 / np.sqrt(a[0])).astype(np.float32)]
        if name == "tosa.concat":
            return [np.concatenate(a, axis=p["axis"].value.data)]
        if name == "tensor.extract_slice":
            offs = tuple(p["static_offsets"].get_values())
            idx = tuple(slice(o, o + s) for o, s in zip(offs, shape))
            return [a[0][idx].copy()]
        if name == "tosa.exp":
            return [np.exp(a[0]).astype(np.float32)]
        if name == "tosa.reciprocal":
            return [(1 / a[0]).astype(np.float32)]
        if name == "linalg.conv_2d_ngchw_gfchw":
            x, w = a[0], a[1]
            n, g, c, h, wd = x.shape
            _, f, _, kh, kw = w.shape
            sh, sw = tuple(p["strides"].get_values())
            oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
            out = a[2].copy()
            for i in range(kh):
                for j in range(kw):
                    xs = x[:, :, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
                    out += np.einsum("ngchw,gfc->ngfhw", xs, w[:, :, :, i, j])
            return [out.astype(np.float32)]
        if name == "tosa.tanh":
            return [np.tanh(a[0]).astype(np.float32)]
        if name == "tosa.reduce_max":
            return [a[0].max(axis=p["axis"].value.data, keepdims=True)]
        if name == "tosa.reduce_sum":
            return [a[0].sum(axis=p["axis"].value.data, keepdims=True)]
        if name == "tosa.matmul":
            return [np.matmul(a[0], a[1]).astype(np.float32)]
        if name == "tosa.max_pool2d":
            kh, kw = p["kernel"].get_values()
            win = windows_nhwc(a[0], (kh, kw), tuple(p["stride"].get_values()), tuple(p["pad"].get_values()))
            return [win.max(axis=0).reshape(shape)]
        if name == "linalg.generic":
            from steplus.runtime.ila.generic import eval_generic

            return eval_generic(op, a, {v: self.env[v] for bop in op.body.block.ops for v in bop.operands
                                        if v in self.env})
        if name == "ila.windows":
            return [windows_nhwc(a[0], tuple(p["kernel"].get_values()), tuple(p["stride"].get_values()),
                                 tuple(p["pad"].get_values()))]
        if name == "ila.im2col":
            return [im2col_nchw(a[0], tuple(p["kernel"].get_values()), tuple(p["stride"].get_values()))]
        if name == "ila.invoke":
            return [np.asarray(self.call(p["callee"].data, a, _attrs(op)), np.float32).reshape(shape)]
        if name == "ila.store":
            return [_Acc(rtypes[0].target.data, None, [a[0]], {})]
        if name == "ila.compute":
            return [_Acc(rtypes[0].target.data, p["callee"].data, list(a), _attrs(op))]
        if name == "ila.load":
            return [np.asarray(self.force(a[0]), np.float32).reshape(shape)]
        if name == "ila.fragment":
            from steplus.runtime.ila.fragments import run_fragment

            return run_fragment(self, op, a)
        from steplus.runtime.ila.host_ops import HOST_OPS

        if name in HOST_OPS:
            return HOST_OPS[name](op, a, shape)
        raise IlaError(f"step-run: no numpy semantics for '{name}'", op)


def run_function(module, name: str, inputs, backend: str = "ila"):
    """Run `func.func @name` on numpy inputs; return (outputs, Stats)."""
    from xdsl.dialects import func

    fns = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name]
    if not fns:
        raise IlaError(f"no function @{name}")
    fn = fns[0]
    block = fn.body.blocks[0]
    if len(inputs) != len(block.args):
        raise IlaError(f"@{name} takes {len(block.args)} inputs, got {len(inputs)}")
    env = {}
    for arg, x in zip(block.args, inputs):
        want = tuple(arg.type.get_shape())
        got = tuple(np.shape(x))
        if len(got) != len(want) or any(w >= 0 and g != w for g, w in zip(got, want)):
            raise IlaError(f"@{name}: input {arg.index} has shape {np.shape(x)}, expected {want}")
        env[arg] = np.asarray(x, np.float32)
    interp = Interpreter(backend)
    return interp.run_block(block, env), interp.stats


def random_argument(rng: np.random.Generator, shape: tuple[int, ...], position: int) -> np.ndarray:
    """A random float32 argument: the first (data) ~ N(0, 1), the later ones
    (parameters) ~ N(0, 1/fan_in) with fan_in the product of all but the first dim.

    Example: `[random_argument(rng, (16, 64), k) for k in range(2)]`."""
    fan_in = int(np.prod(shape[1:])) if position and len(shape) > 1 else 1
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def random_arguments(module, name: str, seed: int = 0) -> list[np.ndarray]:
    """`random_argument` for every argument of `func.func @name` in `module`."""
    fn = next(f for f in module.walk() if f.name == "func.func" and f.sym_name.data == name)
    rng = np.random.default_rng(seed)
    return [random_argument(rng, tuple(a.type.get_shape()), k)
            for k, a in enumerate(fn.body.blocks[0].args)]
