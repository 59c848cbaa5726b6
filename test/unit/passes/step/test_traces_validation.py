"""Routing / KV-length traces and `bind=` texts are validated on input: every
malformed entry is an error naming the file (or option) and the entry, never a
silent wrong answer, an internal error or a simulator deadlock."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from numpy.lib import format as npformat

from steplus.passes.step.bindings import MAX_BINDING, BindingError, parse_bindings
from steplus.passes.step.traces import MAX_TRACE_BYTES, KVTrace, RoutingTrace, TraceError

GRAPH = """step.graph @g {
^bb0(%ref: !step.stream<[B], !step.tile<1x1xi64>>):
  %x = step.linear_offchip_load %ref {base_addr = 0 : i64, tiled_in_shape = array<i64: 1>, stride = array<i64: 1>, tiled_out_shape = array<i64: 1>} : (!step.stream<[B], !step.tile<1x1xi64>>) -> !step.stream<[B, 1], !step.tile<1x8xbf16>>
  %xf = step.flatten %x {min = 0 : i64, max = 1 : i64} : (!step.stream<[B, 1], !step.tile<1x8xbf16>>) -> !step.stream<[B], !step.tile<1x8xbf16>>
  %sel = step.select_gen {choices = 4 : i64} : !step.stream<[B], !step.selector<4>>
  %p0, %p1, %p2, %p3 = step.partition %xf, %sel : (!step.stream<[B], !step.tile<1x8xbf16>>, !step.stream<[B], !step.selector<4>>) -> (!step.stream<[B_0], !step.tile<1x8xbf16>>, !step.stream<[B_1], !step.tile<1x8xbf16>>, !step.stream<[B_2], !step.tile<1x8xbf16>>, !step.stream<[B_3], !step.tile<1x8xbf16>>)
  step.consume %p0 : !step.stream<[B_0], !step.tile<1x8xbf16>>
  step.consume %p1 : !step.stream<[B_1], !step.tile<1x8xbf16>>
  step.consume %p2 : !step.stream<[B_2], !step.tile<1x8xbf16>>
  step.consume %p3 : !step.stream<[B_3], !step.tile<1x8xbf16>>
}
"""


def _npy(tmp_path, name: str, array: np.ndarray) -> str:
    path = tmp_path / name
    np.save(path, array, allow_pickle=array.dtype.kind == "O")
    return str(path)


def _npz(tmp_path, name: str, **arrays: np.ndarray) -> str:
    path = tmp_path / name
    np.savez(path, **arrays)
    return str(path)


# -- KV-length traces ---------------------------------------------------------------

KV_BAD = [
    ("neg.npy", np.array([3, -5, 7]), "KV length #1 = -5 is out of range [0, 2**40]"),
    ("nan.npy", np.array([3.0, np.nan]), "KV length #1 = nan is not an integer"),
    ("inf.npy", np.array([np.inf, 1.0]), "KV length #0 = inf is not an integer"),
    ("frac.npy", np.array([3.0, 4.0, 2.5]), "KV length #2 = 2.5 is not an integer"),
    ("huge.npy", np.array([1, 2**41]), f"KV length #1 = {2**41} is out of range [0, 2**40]"),
    ("zerod.npy", np.array(5),
     "KV-length trace must be 1-D with at least one length, got shape ()"),
    ("twod.npy", np.ones((2, 2), np.int64),
     "KV-length trace must be 1-D with at least one length, got shape (2, 2)"),
    ("empty.npy", np.zeros(0, np.int64),
     "KV-length trace must be 1-D with at least one length, got shape (0,)"),
    ("str.npy", np.array(["1", "2"]), "a KV-length trace holds integers, got dtype <U1"),
    ("bool.npy", np.array([True]), "a KV-length trace holds integers, got dtype bool"),
    ("obj.npy", np.array([1, None], dtype=object),
     "a KV-length trace holds integers, got dtype object"),
]


@pytest.mark.parametrize("name,array,message", KV_BAD, ids=[c[0] for c in KV_BAD])
def test_bad_kv_trace(tmp_path, name, array, message):
    path = _npy(tmp_path, name, array)
    with pytest.raises(TraceError) as info:
        KVTrace.load(path)
    assert str(info.value) == f"{path}: {message}"


def test_kv_trace_that_is_an_npz(tmp_path):
    path = _npz(tmp_path, "kv.npz", data=np.array([1, 2]))
    with pytest.raises(TraceError) as info:
        KVTrace.load(path)
    assert str(info.value) == f"{path}: is a .npz archive; a KV-length trace is a NumPy .npy file"


def test_kv_trace_header_checked_before_allocation(tmp_path):
    """A header that declares 10**12 int64 entries is rejected from the header."""
    path = tmp_path / "big.npy"
    with open(path, "wb") as f:
        npformat.write_array_header_1_0(
            f, {"descr": "<i8", "fortran_order": False, "shape": (10**12,)})
        f.write(b"\0" * 16)
    with pytest.raises(TraceError) as info:
        KVTrace.load(path)
    assert str(info.value) == (f"{path}: KV-length trace of shape (1000000000000,) is larger "
                               f"than {MAX_TRACE_BYTES} bytes")


@pytest.mark.parametrize("content,message", [
    (b"\x93NUMPY\x01\x00garbage", "not a KV-length trace (a malformed NumPy file)"),
    (b"hello", "not a KV-length trace (a malformed NumPy file)"),
])
def test_malformed_kv_file(tmp_path, content, message):
    path = tmp_path / "bad.npy"
    path.write_bytes(content)
    with pytest.raises(TraceError) as info:
        KVTrace.load(path)
    assert str(info.value) == f"{path}: {message}"


def test_integral_float_kv_trace_is_accepted(tmp_path):
    lengths = [0, 31, 32, 100]
    t = KVTrace.load(_npy(tmp_path, "ok.npy", np.array(lengths, dtype=np.float64)), tile_n=32)
    assert t.lengths.tolist() == lengths
    assert t.seq_len == [(x + 1 + 31) // 32 for x in lengths]


# -- routing traces -----------------------------------------------------------------

ROUTING_BAD = [
    ("frac", np.array([[0.0, 1.5], [2, 3]]), "expert id [0, 1] = 1.5 is not an integer"),
    ("range", np.array([[0, 1], [2, 9]]), "expert id [1, 1] = 9 is out of range [0, 8)"),
    ("negative", np.array([[0, 1], [-1, 2]]), "expert id [1, 0] = -1 is out of range [0, 8)"),
    ("twice", np.array([[0, 1], [3, 5], [4, 4]]),
     "token 2 is routed to expert 4 twice (row 2 = [4, 4])"),
    ("oned", np.array([0, 1]), "routing trace must be [B, K] with B, K >= 1, got shape (2,)"),
    ("zerod", np.array(1), "routing trace must be [B, K] with B, K >= 1, got shape ()"),
    ("nok", np.zeros((3, 0), np.int64),
     "routing trace must be [B, K] with B, K >= 1, got shape (3, 0)"),
    ("str", np.array([["a", "b"]]), "a routing trace holds integers, got dtype <U1"),
]


@pytest.mark.parametrize("name,array,message", ROUTING_BAD, ids=[c[0] for c in ROUTING_BAD])
def test_bad_routing_trace(tmp_path, name, array, message):
    path = _npz(tmp_path, f"{name}.npz", data=array)
    with pytest.raises(TraceError) as info:
        RoutingTrace.load(path, experts=8)
    assert str(info.value) == f"{path}: {message}"


def test_routing_trace_container_errors(tmp_path):
    no_data = _npz(tmp_path, "nodata.npz", x=np.array([[0, 1]]))
    npy = _npy(tmp_path, "r.npy", np.array([[0, 1]]))
    bomb = tmp_path / "bomb.npz"  # declares a 1 GiB member
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("data.npy", "w", force_zip64=True) as m:
            npformat.write_array_header_1_0(
                m, {"descr": "<i8", "fortran_order": False, "shape": (2**27, 1)})
            m.write(b"\0" * 2**30)
    cases = [(no_data, "no array 'data' in the routing trace"),
             (npy, "not a routing trace (expected a NumPy .npz archive)"),
             (str(bomb), f"array 'data' is larger than {MAX_TRACE_BYTES} bytes")]
    for path, message in cases:
        with pytest.raises(TraceError) as info:
            RoutingTrace.load(path, experts=8)
        assert str(info.value) == f"{path}: {message}"


def test_valid_routing_trace_of_any_integer_dtype(tmp_path):
    data = np.array([[0, 1], [1, 2], [7, 0]], dtype=np.uint8)
    t = RoutingTrace.load(_npz(tmp_path, "ok.npz", data=data), experts=8)
    assert t.counts == [2, 2, 1, 0, 0, 0, 0, 1]
    assert t.data.dtype == np.int64 and (t.data == data).all()


# -- through step-opt ---------------------------------------------------------------


def test_step_opt_reports_a_bad_kv_trace_located(tmp_path, step_opt):
    src = tmp_path / "g.mlir"
    src.write_text(GRAPH)
    kv = _npy(tmp_path, "neg.npy", np.array([4, 8, -1]))
    r = step_opt([str(src), "-p", f'step-specialize{{kv="{kv}"}}'])
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == (
        f"{src}:1:1: error: step-specialize: {kv}: KV length #2 = -1 is out of range [0, 2**40]")


def test_step_opt_reports_a_token_routed_twice(tmp_path, step_opt):
    """Today a duplicate expert id simulates to a deadlock; it is an input error."""
    src = tmp_path / "g.mlir"
    src.write_text(GRAPH)
    trace = _npz(tmp_path, "twice.npz", data=np.array([[0, 1], [2, 2]]))
    r = step_opt([str(src), "-p", f'step-specialize{{routing="{trace}"}}'])
    assert r.code == 1 and r.out == ""
    assert r.err.splitlines()[0] == (
        f"{src}:1:1: error: step-specialize: {trace}: token 1 is routed to expert 2 twice "
        "(row 1 = [2, 2])")


def test_step_opt_binds_a_valid_routing_trace(tmp_path, step_opt):
    src = tmp_path / "g.mlir"
    src.write_text(GRAPH)
    data = np.array([[0, 1], [1, 3], [3, 0], [1, 2], [0, 3]])
    counts = np.bincount(data.ravel(), minlength=4)
    trace = _npz(tmp_path, "ok.npz", data=data)
    r = step_opt([str(src), "-p", f'step-specialize{{routing="{trace}"}}'])
    assert r.code == 0, r.err
    expected = "B = 5 : i64, " + ", ".join(f"B_{e} = {c} : i64" for e, c in enumerate(counts))
    assert f"step.bind = {{{expected}}}" in r.out


@pytest.mark.parametrize("bind,message", [
    ("B=-1", "bad binding entry 1 'B=-1': the value must be non-negative"),
    ("B=64,B=32", "bad binding entry 2 'B=32': 'B' is bound twice (first in entry 1)"),
    ("B=4,C=x", "bad binding entry 2 'C=x': the value must be a non-negative integer"),
])
def test_step_opt_bind_errors_are_usage_errors(tmp_path, step_opt, bind, message):
    src = tmp_path / "g.mlir"
    src.write_text(GRAPH)
    r = step_opt([str(src), "-p", f'step-specialize{{bind="{bind}"}}'])
    assert r.code == 2 and r.out == ""
    assert r.err == f"step-opt: error: invalid options for pass 'step-specialize': {message}\n"


# -- binding texts ------------------------------------------------------------------


def test_valid_bindings():
    assert parse_bindings(" B=64, ?L = 3 ,") == {"B": 64, "L": 3}
    assert parse_bindings("") == {}
    assert parse_bindings(f"B={2**63 - 1}") == {"B": MAX_BINDING}


@pytest.mark.parametrize("text,message", [
    ("B", "bad binding entry 1 'B': expected NAME=INTEGER"),
    ("B=64,B=32", "bad binding entry 2 'B=32': 'B' is bound twice (first in entry 1)"),
    ("B=1,?B=2", "bad binding entry 2 '?B=2': 'B' is bound twice (first in entry 1)"),
    ("B=-3", "bad binding entry 1 'B=-3': the value must be non-negative"),
    ("B=1.5", "bad binding entry 1 'B=1.5': the value must be a non-negative integer"),
    ("B=1e3", "bad binding entry 1 'B=1e3': the value must be a non-negative integer"),
    ("B=", "bad binding entry 1 'B=': the value must be a non-negative integer"),
    ("=3", "bad binding entry 1 '=3': the symbol name is empty"),
    ("1B=2", "bad binding entry 1 '1B=2': '1B' is not a symbol name"),
    ("B=9223372036854775808",
     "bad binding entry 1 'B=9223372036854775808': the value exceeds the limit "
     "2**63 - 1 = 9223372036854775807"),
    ("B=" + "9" * 5000, "bad binding entry 1 'B=" + "9" * 35 + "...': "  # cut at 37 chars
                        "the value exceeds the limit 2**63 - 1 = 9223372036854775807"),
])
def test_bad_bindings(text, message):
    with pytest.raises(BindingError) as info:
        parse_bindings(text)
    assert str(info.value) == message
