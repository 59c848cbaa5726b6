"""`nn.LSTM` / `nn.GRU` over a static sequence: one graph, the recurrence unrolled, state on chip.

`aten.lstm.input` / `aten.gru.input` (unidirectional, eval mode, with biases,
any number of layers, `batch_first` or not) become one dense part (role
"rnn"): a linalg function, lowered by `convert-linalg-to-step`, with one cell
per (layer, step). A cell is PyTorch's: per gate, `x_t @ W_i^T + h @ W_h^T +
b` (two tiled `accum`s and a fused `add` map), then `sigmoid`/`tanh` maps and
the state update (LSTM: `c = f*c + i*g`, `h = o*tanh(c)`; GRU: `n = tanh(x W_in
+ b_in + r*(h W_hn + b_hn))`, `h = n + z*(h - n)`). The state `h`, `c` of one
step streams into the next step's matmuls and maps without leaving the chip
(the previous `h` is a streamed left operand: M tiled, N = H and K whole), the
input of layer `l > 0` is layer `l-1`'s `h` stream. Off-chip: the input steps
`x_t` (views of the input), the initial states, the per-gate weights (row
blocks of `weight_ih/hh`, read transposed) and biases (summed where PyTorch
adds them), and the stored results: every step's `h` of the last layer (the
output sequence, one tensor per step at consecutive addresses) and each
layer's final `h` (and `c`).

A constant initial state (the `torch.zeros` nn.GRU/nn.LSTM create when `h0`
is omitted, `zeros_like`, `full`) is no off-chip tensor: the first step
reads no `h` matmul (`h0 W_h^T` is the row `c * W_h.sum(1)`, added to its
biases, derived; nothing for zeros) and its state update reads the scalar.

The weights per gate and the summed biases are derived from the module's
parameters when the part runs (`LoweredPart.derive`); `Lowered.groups` tells
the runner which stores make one output (the sequence: `T` stores, stacked
along the time dim).

Example: the word-language-model LSTM (2 layers, T=6, B=2, H=32) is one graph
of 2 x 6 x 8 matmul accums.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import MatmulOp
from xdsl.ir import SSAValue

from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step import glue, lower_module
from steplus.lowering.linalg_to_step.linalg_build import Body, LinalgFunc, Scalar, tensor_type

RNN = {"aten.lstm.input": 4, "aten.gru.input": 3}  # gates per cell
MAX_CELLS = 4096  # layers x steps: the unrolled graph is bounded


def is_rnn(n) -> bool:
    return getattr(n, "op", None) == "call_function" and name_of(n) in RNN


class Rnn:
    def __init__(self, n, x, hx, params, layers: int, batch_first: bool, shape):
        self.n, self.x, self.hx, self.params = n, x, hx, params
        self.layers, self.batch_first = layers, batch_first
        self.lstm = name_of(n) == "aten.lstm.input"
        self.gates = RNN[name_of(n)]
        s = shape
        self.T, self.B = (s[1], s[0]) if batch_first else (s[0], s[1])
        self.I = s[2]

        self.H = glue.static(params[1])[1]  # weight_hh_l0: [gates*H, H]
        # a constant initial state (torch's zeros when h0 is omitted): its value, or None
        self.fills = [glue.fill_value(h) for h in hx]


def read(n) -> Rnn | str:
    """The recurrence of an `aten.lstm.input`/`aten.gru.input` node, or why not."""
    args = list(n.args)
    if len(args) != 9 or n.kwargs:
        return "an argument form not foreseen"
    x, hx, params, biases, layers, dropout, train, bidirectional, batch_first = args
    if bidirectional:
        return "a bidirectional recurrence is not lowered"
    if train and dropout:
        return "training-mode dropout between layers draws random numbers"
    if not biases:
        return "a recurrence without biases is not lowered"
    if not glue._float_tensor(x) or len(glue.static(x)) != 3:
        return "the input is not a static 3-D floating-point tensor"
    hx = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    lstm = name_of(n) == "aten.lstm.input"
    if len(hx) != (2 if lstm else 1) or not all(glue._float_tensor(h) for h in hx):
        return "the initial states are not floating-point tensors"
    params = list(params)
    if not isinstance(layers, int) or layers < 1 or len(params) != 4 * layers:
        return "the parameters are not weight_ih/weight_hh/bias_ih/bias_hh per layer"
    if not all(glue._weight(p, 2 if k % 4 < 2 else 1) for k, p in enumerate(params)):
        return "the weights and biases are not floating-point parameters"
    r = Rnn(n, x, hx, params, layers, bool(batch_first), glue.static(x))
    if r.layers * r.T > MAX_CELLS:
        return f"{r.layers} layers x {r.T} steps: more than {MAX_CELLS} cells"
    return r


class _Cells:
    """The unrolled function being built: f32 `[M, N]` matmuls and element-wise maps."""

    def __init__(self, fname: str):
        self.fn = LinalgFunc(fname, [])
        self.zero = self.fn.const(0.0)
        self.one = self.fn.const(1.0)

    def matmul(self, a: SSAValue, w: SSAValue, M: int, N: int) -> SSAValue:
        return self.fn.named(MatmulOp, [a, w], self.fn.fill(self.zero, (M, N)))

    def generic(self, ins: list[tuple[SSAValue, bool]], M: int, N: int, body: Body) -> SSAValue:
        """An element-wise generic over (value, is_row) inputs into `[M, N]`."""
        maps = ["d1" if is_row else "d0, d1" for _v, is_row in ins] + ["d0, d1"]
        return self.fn.generic([v for v, _ in ins], self.fn.empty((M, N)), maps, "pp", body)

    def sigmoid(self, x: SSAValue, M: int, N: int) -> SSAValue:
        one = self.one

        def body(s: Scalar, a) -> SSAValue:
            t = s.add(s.exp(s.neg(a[0])), one)
            return s.div(one, t)
        return self.generic([(x, False)], M, N, body)

    def tanh(self, x: SSAValue, M: int, N: int) -> SSAValue:
        return self.generic([(x, False)], M, N, lambda s, a: s.tanh(a[0]))


def rnn_module(r: Rnn, fname: str) -> tuple[ModuleOp, list[tuple[str, tuple]], list[str], list]:
    """The unrolled function, its arguments (synthetic name, 2-D shape), and its
    results' names in order with their groups (see `rnn_part`)."""
    B, H, G = r.B, r.H, r.gates
    t = _Cells(fname)
    args: list[tuple[str, tuple]] = []
    pre = r.n.name

    def arg(name: str, shape: tuple) -> SSAValue:
        args.append((f"{pre}:{name}", shape))
        return t.fn.add_arg(tensor_type(shape))

    xs = [arg(f"x{s}", (B, r.I)) for s in range(r.T)]
    finals_h: list[SSAValue] = []
    finals_c: list[SSAValue | None] = []
    hc, cc = r.fills[0], (r.fills[1] if r.lstm else None)
    # a constant state: a scalar of the first step's bodies
    s0 = t.fn.const(float(hc)) if hc is not None else None
    s1 = t.fn.const(float(cc)) if cc is not None else None
    for layer in range(r.layers):
        In = r.I if layer == 0 else H
        h = arg(f"h0_{layer}", (B, H)) if s0 is None else s0
        c = (arg(f"c0_{layer}", (B, H)) if s1 is None else s1) if r.lstm else None
        wi = [arg(f"l{layer}_wi{g}", (In, H)) for g in range(G)]
        wh = [arg(f"l{layer}_wh{g}", (H, H)) for g in range(G)]
        if r.lstm:
            b = [arg(f"l{layer}_b{g}", (H,)) for g in range(G)]
        else:  # r, z: b_i + b_h; n: b_in and b_hn apart (r multiplies W_hn h + b_hn)
            b = [arg(f"l{layer}_b{g}", (H,)) for g in range(2)] + \
                [arg(f"l{layer}_bin", (H,)), arg(f"l{layer}_bhn", (H,))]
        # from a constant h0: h0 W_h^T is one row (c times W_h's row sums), added to the
        # first step's biases (derived), and the first step reads no h matmul
        b0 = b if hc is None or hc == 0.0 else (
            [arg(f"l{layer}_b{g}h", (H,)) for g in range(G)] if r.lstm else
            [arg(f"l{layer}_b{g}h", (H,)) for g in range(2)] + [b[2], arg(f"l{layer}_bhnh",
                                                                          (H,))])
        outs = []
        for s in range(r.T):
            const_h = s == 0 and hc is not None
            bs = b0 if s == 0 else b
            pi = [t.matmul(xs[s], wi[g], B, H) for g in range(G)]
            ph = [] if const_h else [t.matmul(h, wh[g], B, H) for g in range(G)]

            def preact(g):
                if const_h:
                    return t.generic([(pi[g], False), (bs[g], True)], B, H,
                                     lambda s, a: s.add(a[0], a[1]))
                return t.generic([(pi[g], False), (ph[g], False), (bs[g], True)], B, H,
                                 lambda s, a: s.add(s.add(a[0], a[1]), a[2]))
            if r.lstm:
                pre_g = [preact(g) for g in range(4)]
                i, f, o = (t.sigmoid(pre_g[g], B, H) for g in (0, 1, 3))
                gg = t.tanh(pre_g[2], B, H)
                if s == 0 and s1 is not None:
                    c = t.generic([(f, False), (i, False), (gg, False)], B, H,
                                  lambda s, a, c0=s1: _fma(s, a[0], c0, a[1], a[2]))
                else:
                    assert c is not None
                    c = t.generic([(f, False), (c, False), (i, False), (gg, False)], B, H,
                                  lambda s, a: _fma(s, a[0], a[1], a[2], a[3]))
                h = t.generic([(o, False), (t.tanh(c, B, H), False)], B, H,
                              lambda s, a: s.mul(a[0], a[1]))
            else:
                rz = [t.sigmoid(preact(g), B, H) for g in range(2)]
                if const_h:  # r * (h0 W_hn^T + b_hn): a derived row
                    def cand(s: Scalar, a) -> SSAValue:
                        t1 = s.mul(a[2], a[3])
                        return s.add(s.add(a[0], a[1]), t1)
                    n = t.tanh(t.generic([(pi[2], False), (bs[2], True), (rz[0], False),
                                          (bs[3], True)], B, H, cand), B, H)
                    assert s0 is not None
                    h = t.generic([(n, False), (rz[1], False)], B, H,
                                  lambda s, a, h0=s0: _lerp(s, a[0], a[1], h0))
                else:
                    def cand(s: Scalar, a) -> SSAValue:
                        t1 = s.mul(a[2], s.add(a[3], a[4]))
                        return s.add(s.add(a[0], a[1]), t1)
                    n = t.tanh(t.generic([(pi[2], False), (bs[2], True), (rz[0], False),
                                          (ph[2], False), (bs[3], True)], B, H, cand), B, H)
                    h = t.generic([(n, False), (rz[1], False), (h, False)], B, H,
                                  lambda s, a: _lerp(s, a[0], a[1], a[2]))
            outs.append(h)
        xs = outs
        finals_h.append(h)
        finals_c.append(c)
    # results: the output sequence (last layer, every step), final h per layer, final c
    groups: list = []
    results: list[SSAValue] = []
    names: list[str] = []
    for k, vals in enumerate([xs, finals_h, finals_c if r.lstm else []]):
        user = _getitem(r.n, k)
        if user is None or not vals:
            continue
        results += [v for v in vals if v is not None]
        names.append(user.name)
        groups.append((len(vals), 1 if (k == 0 and r.batch_first) else 0))
    return t.fn.module(results), args, names, groups


def _fma(s: Scalar, a: SSAValue, b: SSAValue, c: SSAValue, d: SSAValue) -> SSAValue:
    """a * b + c * d (the LSTM's cell state: f * c + i * g)."""
    t0 = s.mul(a, b)
    return s.add(t0, s.mul(c, d))


def _lerp(s: Scalar, n: SSAValue, z: SSAValue, h: SSAValue) -> SSAValue:
    """n + z * (h - n) (the GRU's new state)."""
    return s.add(n, s.mul(z, s.sub(h, n)))


def _getitem(n, k: int):
    for u in n.users:
        if name_of(u) == "getitem" and u.args[1] == k:
            return u
    return None


def _derive(r: Rnn, args) -> dict:
    """The synthetic inputs from the values by node name: input steps, initial states,
    per-gate transposed weights, summed biases."""
    x, hx, params, H = r.x.name, [h.name for h in r.hx], [p.name for p in r.params], r.H
    out = {}
    for name, _shape in args:
        key = name.split(":", 1)[1]

        def f(v, key=key):
            if key.startswith("x"):
                s = int(key[1:])
                a = np.asarray(v[x])
                return a[:, s] if r.batch_first else a[s]
            if key.startswith(("h0_", "c0_")):
                return np.asarray(v[hx[0 if key[0] == "h" else 1]])[int(key[3:])]
            layer, rest = key[1:].split("_", 1)
            w_ih, w_hh, b_ih, b_hh = (np.asarray(v[p], np.float64)
                                      for p in params[4 * int(layer):4 * int(layer) + 4])
            if rest.startswith("wi"):
                g = int(rest[2:])
                return w_ih[g * H:(g + 1) * H].T
            if rest.startswith("wh"):
                g = int(rest[2:])
                return w_hh[g * H:(g + 1) * H].T
            if rest == "bin":
                return b_ih[2 * H:3 * H]
            if rest == "bhn":
                return b_hh[2 * H:3 * H]
            if rest.endswith("h"):  # a first step's bias from a constant h0: + h0 W_h^T
                hc = r.fills[0]
                g = 2 if rest == "bhnh" else int(rest[1:-1])
                row = hc * w_hh[g * H:(g + 1) * H].sum(axis=1)
                if rest == "bhnh":
                    return b_hh[2 * H:3 * H] + row
                return b_ih[g * H:(g + 1) * H] + b_hh[g * H:(g + 1) * H] + row
            g = int(rest[1:])
            return b_ih[g * H:(g + 1) * H] + b_hh[g * H:(g + 1) * H]
        out[name] = f
    return out


def rnn_part(r: Rnn, fname: str, tile_m: int) -> LoweredPart:
    """The unrolled recurrence as one dense part (ValueError / OpDiagnosticError when
    it cannot be tiled)."""


    module, args, names, groups = rnn_module(r, fname)
    if not names:
        raise ValueError("no output of the recurrence is used")
    tm = tile_m if tile_m <= r.B and r.B % tile_m == 0 else r.B
    (low,) = lower_module(module, tile=f"{tm}x{r.H}", schedule="mn")
    low.groups = groups
    covered = {r.n} | {u for u in r.n.users if name_of(u) == "getitem"}
    # a constant initial state read by the recurrence alone is computed by no one
    covered |= {h for h, v in zip(r.hx, r.fills) if v is not None and set(h.users) == {r.n}}
    return LoweredPart("dense", module, None, {f"arg{k}": n for k, (n, _s) in enumerate(args)},
                       r.B, outputs=names, lowered=low, role="rnn",
                       out_shapes=[glue.static(next(u for u in r.n.users if u.name == nm))
                                   for nm in names],
                       covered=covered, derive=_derive(r, args))
