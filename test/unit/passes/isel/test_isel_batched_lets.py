"""isel adds a function's terms to the e-graph as one egglog program of lets (`let_shallow`,
batched) instead of one `eg.let` call per node, and builds each distinct shape term once
(`frontend.sh`).  The e-graph is the same: the same function sizes after the lets, the same
iterations and e-graph sizes in saturation, and the same selected IR byte for byte as with the
one-by-one lets."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from xdsl.dialects import func

import steplus.passes.isel as isel
from steplus.passes.isel import terms as T
from steplus.passes.isel.frontend import sh
from steplus.passes.isel.views import RealImporter
from steplus.tools.loading import load_module

ROOT = Path(__file__).parents[4]
PIPELINE = "isel{targets=flexasr,hlscnn,vta mode=flexible}"


def _select(monkeypatch, path: Path, batched: bool) -> tuple[str, list]:
    """The selected module's text and the saturations' (iteration, e-graph size) reports."""
    sats: list = []
    saturate = T.saturate

    def recording(eg, *args, **kwargs):
        kwargs["progress"] = lambda s: sats.append((s.iterations, s.nodes))
        sat = saturate(eg, *args, **kwargs)
        sats.append((sat.iterations, sat.nodes, sat.stopped))
        return sat

    with monkeypatch.context() as m:
        m.setattr(isel, "let_shallow", partial(isel.let_shallow, batched=batched))
        m.setattr(T, "saturate", recording)
        return str(load_module(str(path), PIPELINE)), sats


@pytest.mark.parametrize("name", ["forms/lstm_seq.mlir", "forms/attention.mlir"])
def test_same_saturation_and_selection_as_one_let_per_call(monkeypatch, name):
    path = ROOT / "examples/isel" / name
    ref, ref_sats = _select(monkeypatch, path, batched=False)
    got, sats = _select(monkeypatch, path, batched=True)
    assert sats == ref_sats and len(sats) >= 3
    assert got == ref and "ila.invoke" in got


def _terms(name: str) -> list:
    module = load_module(str(ROOT / "examples/isel" / name))
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return [t for _, t, _ in RealImporter(fn.body.blocks[0]).run()]


def test_the_lets_are_one_program_with_the_same_egraph():
    terms = _terms("forms/lstm_seq.mlir")
    one_by_one = T.make_egraph()
    isel.let_shallow(one_by_one, terms, batched=False)
    batched = T.make_egraph()
    programs = []
    run_program = batched._run_program

    def counting(*commands):
        programs.append(len(commands))
        return run_program(*commands)

    batched._run_program = counting
    lets = isel.let_shallow(batched, terms)
    nodes = T.node_count(one_by_one)
    assert len(programs) == 1 and programs[0] == nodes > 50  # one let per node, in one program
    def sizes(eg):
        return sorted((str(f), n) for f, n in eg.all_function_sizes())

    assert sizes(batched) == sizes(one_by_one)
    # each returned reference names a let of the e-graph: extraction finds its term
    assert isel.extract_all(batched, lets, T.cost_model)[0] is not None


def test_one_shape_term_per_shape():
    assert sh([35, 64]) is sh((35, 64))
    assert str(sh([35, 64])) == str(T.Sh.s2(35, 64))
    assert sh([64]) is not sh([35, 64])
