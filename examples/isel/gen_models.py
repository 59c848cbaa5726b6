"""Generate the tensor-level benchmark models of examples/isel/ (run from the repo root).

    .venv/bin/python examples/isel/gen_models.py

Models (TOSA + linalg on tensors, float32): a ResMLP block, one step of an
LSTM language model, a ResNet-20-like conv block, a MobileNet depthwise
block and a Transformer encoder layer.  Linear layers are written as
`add(reshape(dense(x, w)), b)` (the Relay idiom D2A's flexible matching
unlocks) or as bare `dense`.
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parent


def t(shape) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


class F:
    def __init__(self, name: str, args: dict[str, tuple]):
        self.name, self.args, self.lines, self.n = name, args, [], 0
        self.shapes = dict(args)

    def _v(self, shape) -> str:
        self.n += 1
        v = f"%v{self.n}"
        self.shapes[v] = tuple(shape)
        return v

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def zeros(self, shape) -> str:
        v = self._v(shape)
        self.emit(f"{v} = arith.constant dense<0.0> : {t(shape)}")
        return v

    def empty(self, shape) -> str:
        v = self._v(shape)
        self.emit(f"{v} = tensor.empty() : {t(shape)}")
        return v

    def transpose(self, a: str, perm) -> str:
        s = self.shapes[a]
        out = [s[p] for p in perm]
        e = self.empty(out)
        v = self._v(out)
        self.emit(f"{v} = linalg.transpose ins({a} : {t(s)}) outs({e} : {t(out)}) permutation = "
                  f"[{', '.join(map(str, perm))}]")
        return v

    def matmul(self, a: str, b: str) -> str:
        (m, _), (_, n) = self.shapes[a], self.shapes[b]
        z = self.zeros((m, n))
        v = self._v((m, n))
        self.emit(f"{v} = linalg.matmul ins({a}, {b} : {t(self.shapes[a])}, {t(self.shapes[b])}) "
                  f"outs({z} : {t((m, n))}) -> {t((m, n))}")
        return v

    def dense(self, x: str, w: str) -> str:
        return self.matmul(x, self.transpose(w, (1, 0)))

    def reshape(self, a: str, shape) -> str:
        c = f"%s{self.n + 1}"
        self.n += 1
        self.emit(f"{c} = tosa.const_shape {{values = dense<[{', '.join(map(str, shape))}]> : "
                  f"tensor<{len(shape)}xindex>}} : () -> !tosa.shape<{len(shape)}>")
        v = self._v(shape)
        self.emit(f"{v} = tosa.reshape {a}, {c} : ({t(self.shapes[a])}, !tosa.shape<{len(shape)}>) -> {t(shape)}")
        return v

    def add(self, a: str, b: str) -> str:
        sa, sb = self.shapes[a], self.shapes[b]
        out = tuple(max(x, y) for x, y in zip(sa, sb))
        v = self._v(out)
        self.emit(f"{v} = tosa.add {a}, {b} : ({t(sa)}, {t(sb)}) -> {t(out)}")
        return v

    def linear(self, x: str, w: str, b: str) -> str:
        """add(reshape(dense(x, w)), reshape(b)) -> reshape back to 2-D."""
        d = self.dense(x, w)
        m, n = self.shapes[d]
        r = self.add(self.reshape(d, (1, m, n)), self.reshape(b, (1, 1, n)))
        return self.reshape(r, (m, n))

    def unary(self, op: str, a: str, attrs: str = "") -> str:
        s = self.shapes[a]
        v = self._v(s)
        self.emit(f"{v} = tosa.{op} {a}{attrs} : ({t(s)}) -> {t(s)}")
        return v

    def relu(self, a: str) -> str:
        return self.unary("clamp", a, " {min_val = 0.0 : f32, max_val = 3.0e38 : f32, "
                                      "nan_mode = #tosa.nan_mode<IGNORE>}")

    def mul(self, a: str, b: str) -> str:
        sa, sb = self.shapes[a], self.shapes[b]
        out = tuple(max(x, y) for x, y in zip(sa, sb))
        sh = f"%c{self.n + 1}"
        self.n += 1
        self.emit(f'{sh} = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>')
        v = self._v(out)
        self.emit(f"{v} = tosa.mul {a}, {b}, {sh} : ({t(sa)}, {t(sb)}, tensor<1xi8>) -> {t(out)}")
        return v

    def const(self, shape, value: float) -> str:
        c = f"%c{self.n + 1}"
        self.n += 1
        self.shapes[c] = tuple(shape)
        self.emit(f'{c} = "tosa.const"() <{{values = dense<{value:.6e}> : {t(shape)}}}> : () -> {t(shape)}')
        return c

    def binary(self, op: str, a: str, b: str) -> str:
        sa, sb = self.shapes[a], self.shapes[b]
        out = tuple(max(x, y) for x, y in zip(sa, sb))
        v = self._v(out)
        self.emit(f"{v} = tosa.{op} {a}, {b} : ({t(sa)}, {t(sb)}) -> {t(out)}")
        return v

    def row_sum(self, a: str) -> str:
        m, n = self.shapes[a]
        v = self._v((m, 1))
        self.emit(f"{v} = tosa.reduce_sum {a} {{axis = 1 : i32}} : ({t((m, n))}) -> {t((m, 1))}")
        return v

    def layernorm(self, x: str, g: str, b: str, eps: float = 1e-5) -> str:
        """(x - mean) * rsqrt(var + eps) * g + b over the last axis (TOSA ops, as legalisers emit it)."""
        m, n = self.shapes[x]
        mean = self.mul(self.row_sum(x), self.const((1, 1), 1.0 / n))
        d = self.binary("sub", x, mean)
        var = self.mul(self.row_sum(self.mul(d, d)), self.const((1, 1), 1.0 / n))
        r = self.unary("rsqrt", self.add(var, self.const((1, 1), eps)))
        y = self.mul(self.mul(d, r), self.reshape(g, (1, n)))
        return self.add(y, self.reshape(b, (1, n)))

    def conv(self, x: str, w: str, op="linalg.conv_2d_nchw_fchw") -> str:
        sx, sw = self.shapes[x], self.shapes[w]
        if op == "linalg.conv_2d_nchw_fchw":
            out = (sx[0], sw[0], sx[2] - sw[2] + 1, sx[3] - sw[3] + 1)
        else:  # grouped: x[N,G,C,H,W], w[G,F,C,KH,KW]
            out = (sx[0], sx[1], sw[1], sx[3] - sw[3] + 1, sx[4] - sw[4] + 1)
        z = self.zeros(out)
        v = self._v(out)
        self.emit(f"{v} = {op} {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}} "
                  f"ins({x}, {w} : {t(sx)}, {t(sw)}) outs({z} : {t(out)}) -> {t(out)}")
        return v

    def maxpool(self, x: str, k, s) -> str:
        n, h, w, c = self.shapes[x]
        out = (n, (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1, c)
        v = self._v(out)
        self.emit(f"{v} = tosa.max_pool2d {x} {{kernel = array<i64: {k[0]}, {k[1]}>, stride = array<i64: "
                  f"{s[0]}, {s[1]}>, pad = array<i64: 0, 0, 0, 0>, nan_mode = #tosa.nan_mode<IGNORE>}} : "
                  f"({t((n, h, w, c))}) -> {t(out)}")
        return v

    def text(self, results: list[str], doc: str) -> str:
        args = ", ".join(f"{k}: {t(s)}" for k, s in self.args.items())
        res = ", ".join(t(self.shapes[r]) for r in results)
        body = "\n".join(self.lines)
        ret = ", ".join(results)
        return (f"// {doc}\n// Generated by examples/isel/gen_models.py.\n"
                f"func.func @{self.name}({args}) -> ({res}) {{\n{body}\n  func.return {ret} : {res}\n}}\n")


def resmlp():
    f = F("resmlp", {"%x": (16, 256), "%w1": (256, 256), "%b1": (256,), "%w2": (256, 256), "%b2": (256,)})
    h = f.relu(f.linear("%x", "%w1", "%b1"))
    return f.text([f.add("%x", f.linear(h, "%w2", "%b2"))], "ResMLP block: x + linear(relu(linear(x))).")


def lstm_lm():
    args = {"%x": (1, 64), "%h": (1, 64), "%c": (1, 64), "%wout": (256, 64), "%bout": (256,)}
    for g in "ifgo":
        args |= {f"%w{g}": (64, 64), f"%u{g}": (64, 64), f"%b{g}": (64,)}
    f = F("lstm_lm", args)
    gate = {}
    for g in "ifgo":
        z = f.add(f.add(f.dense("%x", f"%w{g}"), f.dense("%h", f"%u{g}")), f.reshape(f"%b{g}", (1, 64)))
        gate[g] = f.unary("tanh" if g == "g" else "sigmoid", z)
    c2 = f.add(f.mul(gate["f"], "%c"), f.mul(gate["i"], gate["g"]))
    h2 = f.mul(gate["o"], f.unary("tanh", c2))
    logits = f.linear(h2, "%wout", "%bout")
    return f.text([logits, h2, c2], "One step of an LSTM language model (hidden 64, vocabulary 256).")


def resnet():
    f = F("resnet_block", {"%x": (1, 16, 12, 12), "%k1": (16, 16, 3, 3), "%k2": (16, 16, 3, 3),
                           "%wfc": (64, 256), "%bfc": (64,)})
    c1 = f.relu(f.conv("%x", "%k1"))
    c2 = f.relu(f.conv(c1, "%k2"))
    p = f.maxpool(f.transpose(c2, (0, 2, 3, 1)), (2, 2), (2, 2))
    flat = f.reshape(p, (1, 256))
    return f.text([f.linear(flat, "%wfc", "%bfc")], "ResNet-20-like block: two 3x3 convs, max-pool, classifier.")


def mobilenet():
    f = F("mobilenet_block", {"%x": (1, 16, 10, 10), "%dw": (16, 1, 1, 3, 3), "%pw": (32, 16, 1, 1),
                              "%wfc": (64, 2048)})
    d = f.conv(f.reshape("%x", (1, 16, 1, 10, 10)), "%dw", op="linalg.conv_2d_ngchw_gfchw")
    d = f.relu(f.reshape(d, (1, 16, 8, 8)))
    pw = f.relu(f.conv(d, "%pw"))
    flat = f.reshape(pw, (1, 2048))
    return f.text([f.dense(flat, "%wfc")], "MobileNet block: depthwise 3x3, pointwise 1x1, dense classifier.")


def transformer():
    d, ff, T = 64, 128, 16
    args = {"%x": (T, d)}
    for n, s in (("q", (d, d)), ("k", (d, d)), ("v", (d, d)), ("o", (d, d)), ("1", (ff, d)), ("2", (d, ff))):
        args |= {f"%w{n}": s, f"%b{n}": (s[0],)}
    args |= {"%g1": (d,), "%be1": (d,), "%g2": (d,), "%be2": (d,)}
    f = F("encoder_layer", args)
    q, k, v = (f.linear("%x", f"%w{n}", f"%b{n}") for n in "qkv")
    scores = f.dense(q, k)
    e = f.unary("exp", scores)
    s = f._v((T, 1))
    f.emit(f"{s} = tosa.reduce_sum {e} {{axis = 1 : i32}} : ({t((T, T))}) -> {t((T, 1))}")
    p = f.mul(e, f.unary("reciprocal", s))
    a = f.matmul(p, v)
    h = f.layernorm(f.add("%x", f.linear(a, "%wo", "%bo")), "%g1", "%be1")
    y = f.layernorm(f.add(h, f.linear(f.relu(f.linear(h, "%w1", "%b1")), "%w2", "%b2")), "%g2", "%be2")
    return f.text([y], "Transformer encoder layer (one head, d=64, ffn=128, 16 tokens, post-LN).")


MODELS = {"resmlp": resmlp, "lstm_lm": lstm_lm, "resnet_block": resnet, "mobilenet_block": mobilenet,
          "encoder_layer": transformer}

if __name__ == "__main__":
    for name, gen in MODELS.items():
        (OUT / f"{name}.mlir").write_text(gen())
        print(f"wrote examples/isel/{name}.mlir")
