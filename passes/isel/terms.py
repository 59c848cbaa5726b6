"""The e-graph term language of instruction selection, its rewrites and cost model.

Tensor terms (`Ten`) carry the integer parameters their rewrite guards need
(sizes, kernel shapes), so every precondition of spec §5 is an egglog
condition on i64 values.  Rules come in three groups:

- `import` rules: the frontend's canonical op forms (`matmul(x, transpose(w))`
  is `dense(x, w)`, like Relay's `nn.dense`) — always on;
- compiler-IR rules (flexible matching only): zero-bias insertion,
  bubble-reshape-through-linear, add-to-bias-add, matmul->dense, max-pool
  window splitting, batch_matmul -> per-batch matmuls (`bmm` split into `bpart` halves
  down to one batch: `bsel` slices, `bcat` concatenates), reassociate-max(2,2), simplify-reduce-max, im2col
  (filter-major W·colsᵀ for VTA, position-major cols·Wᵀ for FlexASR's linear layer; strides included),
  a 1x1 stride-1 convolution as a plain GEMM (no gather), a grouped convolution as one convolution per
  group (`gconv` split into `gpart` halves),
  reshape/transpose simplifications;
- IR-accelerator rules, per target: flex-linear, flexasr-maxpool (and the
  exact temporal-max-pool pattern), vta-dense, hlscnn-conv2d.

Example::

    eg = make_egraph(targets=("flexasr",), flexible=True)
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from egglog import EGraph, Expr, eq, function, i64, i64Like, rewrite, ruleset, vars_

from steplus.dialects.target.ila import FLEXASR, HLSCNN, VTA


class Sh(Expr):
    """A shape or permutation of rank 1-5 (rank 5: a grouped convolution's NGCHW / GFCHW tensors)."""

    @classmethod
    def s1(cls, a: i64Like) -> Sh: ...
    @classmethod
    def s2(cls, a: i64Like, b: i64Like) -> Sh: ...
    @classmethod
    def s3(cls, a: i64Like, b: i64Like, c: i64Like) -> Sh: ...
    @classmethod
    def s4(cls, a: i64Like, b: i64Like, c: i64Like, d: i64Like) -> Sh: ...
    @classmethod
    def s5(cls, a: i64Like, b: i64Like, c: i64Like, d: i64Like, e: i64Like) -> Sh: ...


class Ten(Expr):
    """A tensor term."""

    @classmethod
    def leaf(cls, i: i64Like) -> Ten: ...


@function
def matmul(a: Ten, b: Ten, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def dense(x: Ten, w: Ten, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def transpose(a: Ten, perm: Sh) -> Ten: ...
@function
def reshape(a: Ten, s: Sh) -> Ten: ...
@function
def add(a: Ten, b: Ten, s: Sh) -> Ten: ...
@function
def bias_add(x: Ten, b: Ten, m: i64Like, n: i64Like) -> Ten: ...
@function
def zeros(n: i64Like) -> Ten: ...
@function
def maxpool(x: Ten, n: i64Like, h: i64Like, w: i64Like, c: i64Like, kh: i64Like, kw: i64Like,
            sh: i64Like, sw: i64Like, pt: i64Like, pb: i64Like, pl: i64Like, pr: i64Like) -> Ten: ...
@function
def windows(x: Ten, n: i64Like, h: i64Like, w: i64Like, c: i64Like, kh: i64Like, kw: i64Like,
            sh: i64Like, sw: i64Like, pt: i64Like, pb: i64Like, pl: i64Like, pr: i64Like) -> Ten: ...
@function
def rmax(a: Ten, t: i64Like, p: i64Like) -> Ten: ...
@function
def pool2(a: Ten, t: i64Like, p: i64Like) -> Ten: ...
@function
def conv2d(x: Ten, w: Ten, n: i64Like, c: i64Like, h: i64Like, wd: i64Like, k: i64Like,
           kh: i64Like, kw: i64Like, sh: i64Like, sw: i64Like) -> Ten: ...
@function
def im2col(x: Ten, n: i64Like, c: i64Like, h: i64Like, wd: i64Like, kh: i64Like, kw: i64Like,
           sh: i64Like, sw: i64Like) -> Ten: ...
@function
def flex_linear(x: Ten, w: Ten, b: Ten, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def flex_maxpool(a: Ten, t: i64Like, p: i64Like) -> Ten: ...
@function
def vta_dense(x: Ten, w: Ten, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def hlscnn_conv2d(x: Ten, w: Ten, n: i64Like, c: i64Like, h: i64Like, wd: i64Like, k: i64Like,
                  kh: i64Like, kw: i64Like, sh: i64Like, sw: i64Like) -> Ten: ...


@function
def gconv(x: Ten, w: Ten, g: i64Like, c: i64Like, h: i64Like, wd: i64Like, f: i64Like,
          kh: i64Like, kw: i64Like, sh: i64Like, sw: i64Like) -> Ten: ...
@function
def gpart(x: Ten, w: Ten, s: i64Like, e: i64Like, g: i64Like, c: i64Like, h: i64Like, wd: i64Like, f: i64Like,
          kh: i64Like, kw: i64Like, sh: i64Like, sw: i64Like) -> Ten: ...


@function
def bmm(a: Ten, b: Ten, nb: i64Like, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def bpart(a: Ten, b: Ten, s: i64Like, e: i64Like, nb: i64Like, m: i64Like, k: i64Like, n: i64Like) -> Ten: ...
@function
def bsel(a: Ten, i: i64Like, nb: i64Like, r: i64Like, c: i64Like) -> Ten: ...
@function
def bcat(x: Ten, y: Ten, cx: i64Like, cy: i64Like, m: i64Like, n: i64Like) -> Ten: ...


ACCEL = {"flex_linear": "flexasr.linear", "flex_maxpool": "flexasr.maxpool",
         "vta_dense": "vta.dense", "hlscnn_conv2d": "hlscnn.conv2d", "flex_lstm": "flexasr.lstm",
         "flex_layernorm": "flexasr.layernorm", "flex_attention": "flexasr.attention"}
_HOST_COMPUTE = {"matmul", "dense", "bias_add", "add", "maxpool", "rmax", "pool2", "conv2d", "bmm", "bpart",
                 "gconv", "gpart",
                 "neg", "addone",
                 "mul", "sub", "sigmoid", "tanh", "exp", "recip", "rsqrt", "rsum",
                 "div", "ext", "trunc", "rmaxr", "guard"}
_LAYOUT = {"windows": 10, "im2col": 10, "reshape": 1, "transpose": 1, "concat4": 1, "rows": 1,
           "addc": 0, "mulc": 0, "bsel": 1, "bcat": 1, "rcat": 1, "cols": 1, "wrows": 1, "vpart": 1, "vadd": 1}
_ACCEL_COST = {"flex_linear": 0, "flex_maxpool": 0, "hlscnn_conv2d": 1, "vta_dense": 2, "flex_lstm": 0,
               "flex_layernorm": 0, "flex_attention": 0}
HOST_COST = 1000
# the pattern-order copies of add/mul cost a little more than the originals
_LAYOUT["addc"] = _LAYOUT["mulc"] = HOST_COST + 1
# a row mean costs more than the row sum and division it names, so an unmatched program keeps its own ops
_LAYOUT["mean"] = 2 * HOST_COST + 1


def node_name(fn) -> str:
    return repr(fn).rsplit(".", 1)[-1]


def expr_name(expr) -> str:
    """The constructor name of a term ("" for a literal), read from its declaration (the cost model
    runs on every e-node many times: `get_callable_fn` + `repr` took seconds on LSTM-WLM)."""
    try:
        ref = expr.__egg_typed_expr__.expr.callable
    except AttributeError:
        from egglog import get_callable_fn

        fn = get_callable_fn(expr)
        return node_name(fn) if fn is not None else ""
    return ref.method_name if hasattr(ref, "method_name") else ref.ident.name


def _slice_share(expr, name) -> int | None:
    """How many slices like this one the sliced tensor has (`bsel`: the batches; `rows` of a
    2-D reshape: total rows / rows taken), or None when the term does not say.

    Extraction costs trees, so a tensor sliced per batch would be paid once per slice: a batched
    product split into per-batch GEMMs would cost its operands' host computation `nb` times."""
    from egglog import get_callable_args

    def lit(x) -> int:
        if not isinstance(x, i64):
            raise TypeError(f"not an i64 literal: {x}")
        return int(x)

    args = get_callable_args(expr)
    try:
        if name == "bsel":
            return max(1, lit(args[2]))
        child = args[0]
        if expr_name(child) == "reshape":
            total = lit(get_callable_args(get_callable_args(child)[1])[0])
            return max(1, total // max(1, lit(args[2])))
    except (TypeError, ValueError, AttributeError, IndexError):
        return None
    return None


def _primary(expr, name: str, child_costs) -> int | Fraction:
    """The cost proper: accelerator calls (almost) nothing, host compute HOST_COST, layout ops little."""
    if name in ("bsel", "rows") and child_costs:
        share = _slice_share(expr, name)
        if share is not None:  # one of `share` equal slices of a tensor: it pays its part of the tensor's cost,
            # exactly: a cost strictly monotone in its children's (`child // share` is not) is what egglog's
            # extractor assumes; with a floor, a cheaper child can leave a slice with no best node (extract.rs panic)
            return _LAYOUT[name] + Fraction(child_costs[0], share) + sum(child_costs[1:])
    if name in _HOST_COMPUTE:
        base = HOST_COST
    else:
        base = _LAYOUT.get(name, _ACCEL_COST.get(name, 0))
    return base + sum(child_costs)


_NAME_KEYS: dict[str, int] = {}
_MASK = (1 << 32) - 1


def _own_key(expr, name: str) -> int:
    """A process-independent key of a node's own label: its constructor's name, or a literal's value."""
    if name:
        key = _NAME_KEYS.get(name)
        if key is None:
            key = _NAME_KEYS[name] = zlib.crc32(name.encode())
        return key
    value = getattr(getattr(getattr(expr, "__egg_typed_expr__", None), "expr", None), "value", None)
    if isinstance(value, bool) or not isinstance(value, int):
        return zlib.crc32(repr(value).encode())
    return value & _MASK


def cost_model(egraph, expr, child_costs):
    """(cost, tie-break, label): `_primary`, then a tie-break between terms of equal cost.

    Extraction keeps, per e-class, the cheapest node; among equal costs egglog's choice depends on
    its internal order, which differs between processes (an LSTM cell whose input and state have
    the same width matches with x and h either way round: issue 24's run-to-run differences).  The
    tie-break is computed from the term alone — labels are crc32s of constructor names, literal
    values and Python's hash of tuples of ints, the same in every process — so equal-cost terms
    are ordered the same way everywhere.  It is additive (a node's own part plus its children's
    tie-breaks), and a node's own part weighs child i's label by i: wrappers that take the
    alternatives as their first operand (`rows(lstm, 0, ..)` and `rows(lstm, 1, ..)`, the h' and c'
    of one LSTM call) order them alike, so both pick the same call.  Every cycle of the e-graph
    passes a node of positive cost, so no cyclic term wins a tie."""
    name = expr_name(expr)
    primary = _primary(expr, name, [c[0] for c in child_costs])
    own = _own_key(expr, name)
    label = hash((own, *(c[2] for c in child_costs))) & _MASK
    tie = own + sum(c[1] + i * c[2] for i, c in enumerate(child_costs))
    return primary, tie, label


a, b, x, w = vars_("a b x w", Ten)
m, k, n, t, p, c, h, wd, kh, kw, sh, sw, pt, pb, pl, pr, q = vars_(
    "m k n t p c h wd kh kw sh sw pt pb pl pr q", i64)
s, s2 = vars_("s s2", Sh)

imports = ruleset(
    rewrite(matmul(x, transpose(w, Sh.s2(1, 0)), m, k, n)).to(dense(x, w, m, k, n)),
    name="imports",
)

_oh = (h + pt + pb - kh) / sh + 1
_ow = (wd + pl + pr - kw) / sw + 1
_coh = (h - kh) / sh + 1
_cow = (wd - kw) / sw + 1

compiler_ir = ruleset(
    rewrite(matmul(a, b, m, k, n)).to(dense(a, transpose(b, Sh.s2(1, 0)), m, k, n)),
    rewrite(transpose(transpose(a, Sh.s2(1, 0)), Sh.s2(1, 0))).to(a),
    rewrite(reshape(reshape(a, s), s2)).to(reshape(a, s2)),
    rewrite(dense(x, w, m, k, n)).to(bias_add(dense(x, w, m, k, n), zeros(n), m, n)),
    rewrite(add(reshape(dense(x, w, m, k, n), Sh.s3(1, m, n)), reshape(b, Sh.s3(1, 1, n)),
                Sh.s3(1, m, n))).to(
        reshape(bias_add(dense(x, w, m, k, n), b, m, n), Sh.s3(1, m, n))),
    rewrite(add(a, reshape(b, Sh.s2(1, n)), Sh.s2(m, n))).to(bias_add(a, b, m, n)),
    rewrite(maxpool(x, n, h, wd, c, kh, kw, sh, sw, pt, pb, pl, pr)).to(
        reshape(rmax(windows(x, n, h, wd, c, kh, kw, sh, sw, pt, pb, pl, pr), kh * kw, n * _oh * _ow * c),
                Sh.s4(n, _oh, _ow, c))),
    rewrite(rmax(a, t, p)).to(rmax(pool2(a, t, p), t / 2, p), eq(t % 2).to(i64(0)), t > 1),
    rewrite(rmax(a, i64(1), p)).to(reshape(a, Sh.s1(p))),
    # batch_matmul -> per-batch GEMMs (D2A/Glenside): split the batch range in halves, one batch is a matmul
    rewrite(bmm(a, b, t, m, k, n)).to(bpart(a, b, i64(0), t, t, m, k, n), t > 1),
    # a batch of one (TOSA writes every matmul batched) is a matmul
    rewrite(bmm(a, b, i64(1), m, k, n)).to(
        reshape(matmul(reshape(a, Sh.s2(m, k)), reshape(b, Sh.s2(k, n)), m, k, n), Sh.s3(1, m, n))),
    rewrite(bpart(a, b, p, q, t, m, k, n)).to(
        bcat(bpart(a, b, p, p + (q - p) / 2, t, m, k, n), bpart(a, b, p + (q - p) / 2, q, t, m, k, n),
             (q - p) / 2, q - p - (q - p) / 2, m, n), q - p > 1),
    rewrite(bpart(a, b, p, p + 1, t, m, k, n)).to(
        reshape(matmul(bsel(a, p, t, m, k), bsel(b, p, t, k, n), m, k, n), Sh.s3(1, m, n))),
    rewrite(conv2d(x, w, n, c, h, wd, k, kh, kw, sh, sw)).to(
        transpose(reshape(dense(reshape(w, Sh.s2(k, c * kh * kw)), im2col(x, n, c, h, wd, kh, kw, sh, sw),
                                k, c * kh * kw, n * _coh * _cow), Sh.s4(k, n, _coh, _cow)),
                  Sh.s4(1, 0, 2, 3))),
    # im2col, position-major: patches · Wᵀ is [N·OH·OW, K], one row per output position and one column per
    # filter, the orientation of FlexASR's linear layer (out features = filters, in features = C·KH·KW)
    rewrite(conv2d(x, w, n, c, h, wd, k, kh, kw, sh, sw)).to(
        transpose(reshape(dense(im2col(x, n, c, h, wd, kh, kw, sh, sw), reshape(w, Sh.s2(k, c * kh * kw)),
                                n * _coh * _cow, c * kh * kw, k), Sh.s4(n, _coh, _cow, k)),
                  Sh.s4(0, 3, 1, 2))),
    # a 1x1 convolution of stride 1 on one image is a plain GEMM, W[K, C] · x[C, H·W]: no im2col gather
    rewrite(conv2d(x, w, i64(1), c, h, wd, k, i64(1), i64(1), i64(1), i64(1))).to(
        reshape(matmul(reshape(w, Sh.s2(k, c)), reshape(x, Sh.s2(c, h * wd)), k, c, h * wd), Sh.s4(1, k, h, wd))),
    # ... and position-major, x[C, H·W]ᵀ · W[K, C]ᵀ
    rewrite(conv2d(x, w, i64(1), c, h, wd, k, i64(1), i64(1), i64(1), i64(1))).to(
        reshape(transpose(dense(transpose(reshape(x, Sh.s2(c, h * wd)), Sh.s2(1, 0)), reshape(w, Sh.s2(k, c)),
                                h * wd, c, k), Sh.s2(1, 0)), Sh.s4(1, k, h, wd))),
    # a grouped convolution (NGCHW x GFCHW, one image; torch's depthwise convolution with a channel
    # multiplier > 1): one 2-D convolution per group, split in halves like bmm, each convolution then
    # im2col'd; group p reads channels [p*C, (p+1)*C) and writes filters [p*F, (p+1)*F)
    rewrite(gconv(x, w, t, c, h, wd, k, kh, kw, sh, sw)).to(
        reshape(gpart(x, w, i64(0), t, t, c, h, wd, k, kh, kw, sh, sw), Sh.s5(1, t, k, _coh, _cow))),
    rewrite(gpart(x, w, p, q, t, c, h, wd, k, kh, kw, sh, sw)).to(
        bcat(gpart(x, w, p, p + (q - p) / 2, t, c, h, wd, k, kh, kw, sh, sw),
             gpart(x, w, p + (q - p) / 2, q, t, c, h, wd, k, kh, kw, sh, sw),
             (q - p) / 2, q - p - (q - p) / 2, k, _coh * _cow), q - p > 1),
    rewrite(gpart(x, w, p, p + 1, t, c, h, wd, k, kh, kw, sh, sw)).to(
        reshape(conv2d(reshape(bsel(reshape(x, Sh.s3(t, c, h * wd)), p, t, c, h * wd), Sh.s4(1, c, h, wd)),
                       reshape(bsel(reshape(w, Sh.s3(t, k, c * kh * kw)), p, t, k, c * kh * kw), Sh.s4(k, c, kh, kw)),
                       i64(1), c, h, wd, k, kh, kw, sh, sw), Sh.s3(1, k, _coh * _cow))),
    name="compiler_ir",
)

flexasr_rules = ruleset(
    # any out and any in up to one PE's input: the driver pads in to % 16 and out to % 64 with zeros and
    # runs a layer past one call's buffers as several calls (runtime/ila/flexasr_driver.run_linear)
    rewrite(bias_add(dense(x, w, m, k, n), b, m, n)).to(
        flex_linear(x, w, b, m, k, n), k <= FLEXASR.max_features),
    rewrite(pool2(a, t, p)).to(flex_maxpool(a, t, p), eq(p % 16).to(i64(0))),
    rewrite(maxpool(x, i64(1), t, p, i64(1), i64(2), i64(1), i64(2), i64(1), i64(0), i64(0), i64(0), i64(0))).to(
        reshape(flex_maxpool(reshape(x, Sh.s2(t, p)), t, p), Sh.s4(1, t / 2, p, 1)),
        eq(p % 16).to(i64(0)), eq(t % 2).to(i64(0))),
    name="flexasr",
)

vta_rules = ruleset(
    rewrite(dense(x, w, m, k, n)).to(
        vta_dense(x, w, m, k, n), eq(m % 16).to(i64(0)), eq(k % 16).to(i64(0)), eq(n % 16).to(i64(0)),
        k <= VTA.max_gemm_blocks * VTA.block),  # larger m, n: tiled programs (vta_driver.dense_tiles)
    name="vta",
)

hlscnn_rules = ruleset(
    rewrite(conv2d(x, w, i64(1), c, h, wd, k, kh, kw, sh, sw)).to(
        hlscnn_conv2d(x, w, i64(1), c, h, wd, k, kh, kw, sh, sw), sh <= HLSCNN.max_stride,
        sw <= HLSCNN.max_stride, k <= HLSCNN.max_filters, k * h * wd <= HLSCNN.max_output_positions,
        h <= HLSCNN.max_height, wd <= HLSCNN.max_height, c <= HLSCNN.max_channels),
    name="hlscnn",
)

TARGET_RULES = {"flexasr": flexasr_rules, "vta": vta_rules, "hlscnn": hlscnn_rules}


def gemm_guard_failures(target: str, m: int, k: int, n: int) -> list[str]:
    """The guards of `target`'s GEMM rule that a dense `[m, k] · [n, k]ᵀ` fails, as text ([] when all
    hold): `vta_rules`' vta.dense and the linear layer of `flexasr_rules` (its bias aside), stated
    again in Python for remarks and `bench/isel_models.py --explain` (a test checks they agree).
    VTA's m and n are unbounded: a dense past the buffers runs as tiled programs
    (`runtime/ila/vta_driver.dense_tiles`); K is not split, so it must fit one block column.
    FlexASR's m, n and the in features' multiple are free: its driver pads in to % 16 and out to
    % 64 with zeros and runs a layer past one call's buffers as several calls
    (`runtime/ila/flexasr_driver.run_linear`); in is not split, so it must fit one PE's input."""
    if target == "vta":
        b = VTA.block
        checks = [(m % b == 0, f"m = {m} % {b} != 0"), (k % b == 0, f"k = {k} % {b} != 0"),
                  (n % b == 0, f"n = {n} % {b} != 0"),
                  (k <= VTA.max_gemm_blocks * b,
                   f"k = {k} > one block column of {VTA.max_gemm_blocks} weight blocks of {b}x{b}")]
    elif target == "flexasr":
        top = FLEXASR.max_features
        checks = [(k <= top, f"in = {k} > {top} ({FLEXASR.max_vectors} vectors of a PE's input)")]
    else:
        raise ValueError(f"no GEMM rule for target '{target}'")
    return [text for ok, text in checks if not ok]


def make_egraph() -> EGraph:
    return EGraph()


@dataclass
class Saturation:
    """How saturation ended: `stopped` is None (saturated) or the limit that stopped it."""

    iterations: int
    nodes: int
    seconds: float
    stopped: str | None


def node_count(egraph: EGraph) -> int:
    return sum(n for _, n in egraph.all_function_sizes())


def saturate(egraph: EGraph, targets, flexible: bool, iterations: int = 40, node_limit: int = 100_000,
             time_limit: float = 300.0,
             progress: Callable[[Saturation], None] | None = None) -> Saturation:
    """Run the import, (compiler-IR,) and target rules until nothing changes or a limit is hit.

    One iteration applies every rule once; the node and time limits are checked
    after each iteration (the e-graph may exceed the node limit by one
    iteration's growth).  Any e-graph reached is valid: extraction only picks
    equivalent terms, so hitting a limit costs matches, not correctness.
    `progress`, if given, receives the state after each iteration (a tool's
    status line; it does not change the result)."""
    from steplus.passes.isel.fused import COMMUTE, FLEXASR_FUSED, LITERAL

    rules = imports
    for tgt in targets:
        rules = rules | TARGET_RULES[tgt]
    if "flexasr" in targets:
        rules = rules | LITERAL | FLEXASR_FUSED
        if flexible:
            rules = rules | COMMUTE
    if flexible:
        from steplus.passes.isel.frontend_forms import NORMALIZE, REAL_FORMS, SHAPES

        rules = rules | compiler_ir | NORMALIZE | REAL_FORMS | SHAPES
        if "flexasr" in targets:
            from steplus.passes.isel.frontend_forms import FLEXASR_FORMS

            rules = rules | FLEXASR_FORMS
    t0 = time.perf_counter()
    done, stopped = 0, "iterations"
    nodes = node_count(egraph)
    while done < iterations:
        report = egraph.run(rules)
        done += 1
        nodes = node_count(egraph)
        if progress is not None:
            progress(Saturation(done, nodes, time.perf_counter() - t0, None))
        if not report.updated:
            stopped = None
            break
        if nodes >= node_limit:
            stopped = "nodes"
            break
        if time.perf_counter() - t0 >= time_limit:
            stopped = "time"
            break
    return Saturation(done, nodes, time.perf_counter() - t0, stopped)
