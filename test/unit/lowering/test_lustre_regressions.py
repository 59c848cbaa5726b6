"""Issue 27's crash and false-rejection list, one regression test each: the
programs run on every lus backend (lus interpreter, sync interpreter, modular
target, IREE where named) with the values of a closed form."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.lowering.lustre import import_lustre
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

T = 12
XS = np.array([3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8], np.int32)


def _module(src: str, name: str = "t.lus"):
    return translate(SourceFile(name, src))  # verified + clock/causality/init checks


def _all_backends(src: str, node: str, **inputs) -> list[np.ndarray]:
    """Outputs on the lus interpreter, equal on the sync interpreter and the
    modular target."""
    module = _module(src)
    got = [np.asarray(c) for c in run_node(module, node, inputs, T)]
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for again in (run_sync_node(lowered, node, inputs, T),
                  run_node_modular(module, node, inputs, T)):
        assert [list(map(int, c)) for c in again] == [list(map(int, c)) for c in got]
    return got


def test_alias_chain_of_locals_and_outputs():
    # `z = x; y = z;` was "Operation using value defined out of its
    # IsolatedFromAbove parent" (the yield kept z's erased placeholder).
    src = """node n(x: int) returns (y, w: int);
    var z: int;
    let z = x; y = z; w = y; tel"""
    y, w = _all_backends(src, "n", x=XS)
    np.testing.assert_array_equal(y, XS)
    np.testing.assert_array_equal(w, XS)


def test_instance_of_a_node_without_inputs_runs_on_every_backend():
    # `y = c() + i` failed on sync and modular: "@c is not a lus.node" (the
    # operand-less instance was taken for a constant).
    src = """node c() returns (o: int); let o = 1 -> pre o + 1; tel
    node n(i: int) returns (y: int); let y = c() + i; tel"""
    (y,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(y, np.arange(1, T + 1) + XS)


def test_input_free_stream_takes_the_clock_of_its_context():
    # A local counter beside an output was "would be on clock 'ck and on its
    # own sub-clock"; it is on the node's clock.
    src = """node n(i: int) returns (o, w: int);
    var v: int;
    let v = 0 -> pre v + 1; o = i; w = v * 2; tel"""
    o, w = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(o, XS)
    np.testing.assert_array_equal(w, 2 * np.arange(T))
    # an unused one too (nothing but `->` decides its clock)
    src = """node n(i: int) returns (o: int);
    var v: int;
    let v = 0 -> pre v + 1; o = i; tel"""
    (o,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(o, XS)


def test_pre_of_an_initialized_constant_stream_is_defined():
    # `1 -> pre (2 -> 3)` was "may be read uninitialized": 1, 2, 3, 3, ...
    src = """node n(i: int) returns (c: int); let c = 1 -> pre (2 -> 3); tel"""
    (c,) = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(c, [1, 2] + [3] * (T - 2))


def test_pre_of_a_constant_follows_the_input_dialect():
    # .lus (Kind 2 / Lustre V6 as Kind 2 reads it): accepted, the constant in
    # every cycle; .ept (Heptagon): an initialization error at the use.
    src = "node n(i: int) returns (c: int; d: bool);\nlet c = pre (2 * 3); d = pre true; tel\n"
    c, d = _all_backends(src, "n", i=XS)
    np.testing.assert_array_equal(c, [6] * T)
    np.testing.assert_array_equal(d, [True] * T)
    with pytest.raises(InputError) as info:
        _module(src, "t.ept")
    assert info.value.lines[0].startswith("t.ept:")
    assert "may be read uninitialized in the first cycle" in info.value.lines[0]
    # a pre of a variable stays an error in both
    for name in ("t.lus", "t.ept"):
        with pytest.raises(InputError):
            _module("node n(i: int) returns (c: int); let c = pre i; tel", name)


def test_constant_pre_in_a_reset_node_restarts_to_the_constant():
    src = """node k(x: int) returns (o: int); let o = pre 5 + x; tel
    node n(x: int; r: bool) returns (y: int); let y = (restart k every r)(x); tel"""
    rs = np.array([i % 4 == 0 for i in range(T)])
    (y,) = _all_backends(src, "n", x=XS, r=rs)
    np.testing.assert_array_equal(y, XS + 5)


def test_iree_node_with_many_outputs_falls_back_or_says_why():
    # 32 outputs and 1 input: the batched dispatch needs 33 bindings (> 32):
    # it runs tick by tick instead (was an internal IndexError).
    from steplus.tools.iree_run import IreeError, IreeNode

    outs = 32
    src = (f"node n(i: int) returns ({'; '.join(f'o{k}: int' for k in range(outs))});\nlet\n"
           + "".join(f"  o{k} = i + {k};\n" for k in range(outs)) + "tel\n")
    module = import_lustre(src, "t.lus").module
    node = IreeNode.from_lus(module, "n")
    assert node.too_wide_to_batch
    got = node.run({"i": XS[:3]}, 3)
    assert [list(c) for c in got] == [list(XS[:3] + k) for k in range(outs)]
    # 33 outputs pass the per-tick limit (64 push constants) too: a clear error
    src33 = src.replace("o31: int", "o31: int; o32: int").replace("tel", "  o32 = i;\ntel")
    with pytest.raises(IreeError, match="split the node's outputs or use --backend sync"):
        IreeNode.from_lus(import_lustre(src33, "t.lus").module, "n").run({"i": XS[:3]}, 3)
