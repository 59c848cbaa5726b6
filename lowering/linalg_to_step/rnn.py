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
from xdsl.parser import Parser

from steplus.lowering.linalg_to_step.aten import LoweredPart, name_of
from steplus.lowering.linalg_to_step import glue, lower_module
from steplus.lowering.linalg_to_step.conv import _context

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


def _ty(*shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


class _Text:
    def __init__(self):
        self.lines: list[str] = ["  %zero = arith.constant 0.000000e+00 : f32",
                                 "  %one = arith.constant 1.000000e+00 : f32"]
        self.k = 0

    def fresh(self) -> str:
        self.k += 1
        return f"%v{self.k}"

    def matmul(self, a: str, w: str, M: int, K: int, N: int) -> str:
        e, z, r = self.fresh(), self.fresh(), self.fresh()
        self.lines += [f"  {e} = tensor.empty() : {_ty(M, N)}",
                       f"  {z} = linalg.fill ins(%zero : f32) outs({e} : {_ty(M, N)}) -> "
                       f"{_ty(M, N)}",
                       f"  {r} = linalg.matmul ins({a}, {w} : {_ty(M, K)}, {_ty(K, N)}) "
                       f"outs({z} : {_ty(M, N)}) -> {_ty(M, N)}"]
        return r

    def generic(self, ins: list[tuple[str, bool]], M: int, N: int, body: list[str]) -> str:
        """An element-wise generic over (value, is_row) inputs; `body` computes %y from
        %i0, %i1, ..."""
        e, r = self.fresh(), self.fresh()
        full, row = "affine_map<(d0, d1) -> (d0, d1)>", "affine_map<(d0, d1) -> (d1)>"
        maps = ", ".join([row if is_row else full for _v, is_row in ins] + [full])
        types = ", ".join(f"tensor<{N}xf32>" if is_row else _ty(M, N) for _v, is_row in ins)
        blk = ", ".join(f"%i{k}: f32" for k in range(len(ins)))
        self.lines += [f"  {e} = tensor.empty() : {_ty(M, N)}",
                       f"  {r} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
                       f"[\"parallel\", \"parallel\"]}} ins({', '.join(v for v, _ in ins)} : "
                       f"{types}) outs({e} : {_ty(M, N)}) {{",
                       f"  ^bb0({blk}, %o: f32):", *[f"    {b}" for b in body],
                       "    linalg.yield %y : f32", f"  }} -> {_ty(M, N)}"]
        return r

    def sigmoid(self, x: str, M: int, N: int) -> str:
        return self.generic([(x, False)], M, N, ["%t0 = arith.negf %i0 : f32",
                                                 "%t1 = math.exp %t0 : f32",
                                                 "%t2 = arith.addf %t1, %one : f32",
                                                 "%y = arith.divf %one, %t2 : f32"])

    def tanh(self, x: str, M: int, N: int) -> str:
        return self.generic([(x, False)], M, N, ["%y = math.tanh %i0 : f32"])


def rnn_text(r: Rnn, fname: str) -> tuple[str, list[tuple[str, tuple]], list[str], list]:
    """The unrolled function: its text, its arguments (synthetic name, 2-D shape), and
    its results' names in order with their groups (see `rnn_part`)."""
    B, H, G = r.B, r.H, r.gates
    t = _Text()
    args: list[tuple[str, tuple]] = []
    pre = r.n.name

    def arg(name: str, shape: tuple) -> str:
        args.append((f"{pre}:{name}", shape))
        return f"%a{len(args) - 1}"

    xs = [arg(f"x{s}", (B, r.I)) for s in range(r.T)]
    finals_h: list[str] = []
    finals_c: list[str] = []
    hc, cc = r.fills[0], (r.fills[1] if r.lstm else None)
    for k, v in enumerate((hc, cc)):  # a constant state: a scalar of the first step's bodies
        if v is not None:
            t.lines.append(f"  %s{k} = arith.constant {float(v)!r} : f32")
    for layer in range(r.layers):
        In = r.I if layer == 0 else H
        h = arg(f"h0_{layer}", (B, H)) if hc is None else "%s0"
        c = (arg(f"c0_{layer}", (B, H)) if cc is None else "%s1") if r.lstm else ""
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
            pi = [t.matmul(xs[s], wi[g], B, In, H) for g in range(G)]
            ph = [] if const_h else [t.matmul(h, wh[g], B, H, H) for g in range(G)]
            add3 = ["%t0 = arith.addf %i0, %i1 : f32", "%y = arith.addf %t0, %i2 : f32"]

            def preact(g):
                if const_h:
                    return t.generic([(pi[g], False), (bs[g], True)], B, H,
                                     ["%y = arith.addf %i0, %i1 : f32"])
                return t.generic([(pi[g], False), (ph[g], False), (bs[g], True)], B, H, add3)
            if r.lstm:
                pre_g = [preact(g) for g in range(4)]
                i, f, o = (t.sigmoid(pre_g[g], B, H) for g in (0, 1, 3))
                gg = t.tanh(pre_g[2], B, H)
                if s == 0 and cc is not None:
                    c = t.generic([(f, False), (i, False), (gg, False)], B, H, [
                        "%t0 = arith.mulf %i0, %s1 : f32", "%t1 = arith.mulf %i1, %i2 : f32",
                        "%y = arith.addf %t0, %t1 : f32"])
                else:
                    c = t.generic([(f, False), (c, False), (i, False), (gg, False)], B, H, [
                        "%t0 = arith.mulf %i0, %i1 : f32", "%t1 = arith.mulf %i2, %i3 : f32",
                        "%y = arith.addf %t0, %t1 : f32"])
                h = t.generic([(o, False), (t.tanh(c, B, H), False)], B, H,
                              ["%y = arith.mulf %i0, %i1 : f32"])
            else:
                rz = [t.sigmoid(preact(g), B, H) for g in range(2)]
                if const_h:  # r * (h0 W_hn^T + b_hn): a derived row
                    n = t.tanh(t.generic([(pi[2], False), (bs[2], True), (rz[0], False),
                                          (bs[3], True)], B, H, [
                        "%t1 = arith.mulf %i2, %i3 : f32",
                        "%t2 = arith.addf %i0, %i1 : f32", "%y = arith.addf %t2, %t1 : f32"]),
                        B, H)
                    h = t.generic([(n, False), (rz[1], False)], B, H, [
                        "%t0 = arith.subf %s0, %i0 : f32", "%t1 = arith.mulf %i1, %t0 : f32",
                        "%y = arith.addf %i0, %t1 : f32"])
                else:
                    n = t.tanh(t.generic([(pi[2], False), (bs[2], True), (rz[0], False),
                                          (ph[2], False), (bs[3], True)], B, H, [
                        "%t0 = arith.addf %i3, %i4 : f32", "%t1 = arith.mulf %i2, %t0 : f32",
                        "%t2 = arith.addf %i0, %i1 : f32", "%y = arith.addf %t2, %t1 : f32"]),
                        B, H)
                    h = t.generic([(n, False), (rz[1], False), (h, False)], B, H, [
                        "%t0 = arith.subf %i2, %i0 : f32", "%t1 = arith.mulf %i1, %t0 : f32",
                        "%y = arith.addf %i0, %t1 : f32"])
            outs.append(h)
        xs = outs
        finals_h.append(h)
        finals_c.append(c)
    # results: the output sequence (last layer, every step), final h per layer, final c
    groups: list = []
    results: list[str] = []
    names: list[str] = []
    for k, vals in enumerate([xs, finals_h, finals_c if r.lstm else []]):
        user = _getitem(r.n, k)
        if user is None or not vals:
            continue
        results += vals
        names.append(user.name)
        groups.append((len(vals), 1 if (k == 0 and r.batch_first) else 0))
    sig = ", ".join(f"%a{k}: {_ty(*shape)}" for k, (_n, shape) in enumerate(args))
    rtypes = ", ".join(_ty(B, H) for _ in results)
    text = (f"func.func @{fname}({sig}) -> ({rtypes}) {{\n" + "\n".join(t.lines)
            + f"\n  return {', '.join(results)} : {rtypes}\n}}\n")
    return text, args, names, groups


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


    text, args, names, groups = rnn_text(r, fname)
    if not names:
        raise ValueError("no output of the recurrence is used")
    tm = tile_m if tile_m <= r.B and r.B % tile_m == 0 else r.B
    module = Parser(_context(), text).parse_module()
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
