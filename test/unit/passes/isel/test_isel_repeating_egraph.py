"""isel's e-graph re-sends the saturation command its first iteration made (`repeating_egraph`)
instead of having egglog make it again per iteration.  The iterations are the same: the same
e-graph size after each, the same stop by a limit, and the same selected IR byte for byte as
with egglog's own `EGraph.run`."""

from __future__ import annotations

from pathlib import Path

import pytest

import steplus.passes.isel as isel
from steplus.passes.isel import terms as T
from steplus.tools.loading import load_module

ROOT = Path(__file__).parents[4]
PIPELINE = "isel{targets=flexasr,hlscnn,vta mode=flexible}"


def _select(monkeypatch, path: Path, make, pipeline: str = PIPELINE) -> tuple[str, list]:
    """The selected module's text and the saturations' reports, the e-graph made by `make`."""
    sats: list = []
    saturate = T.saturate

    def recording(eg, *args, **kwargs):
        kwargs["progress"] = lambda s: sats.append((s.iterations, s.nodes))
        sat = saturate(eg, *args, **kwargs)
        sats.append((sat.iterations, sat.nodes, sat.stopped))
        return sat

    with monkeypatch.context() as m:
        m.setattr(isel, "repeating_egraph", make)
        m.setattr(T, "saturate", recording)
        return str(load_module(str(path), pipeline)), sats


@pytest.mark.parametrize("name", ["forms/lstm_seq.mlir", "forms/attention.mlir", "mobilenet_block.mlir"])
def test_same_iterations_and_selection_as_egglogs_run(monkeypatch, name):
    path = ROOT / "examples/isel" / name
    ref, ref_sats = _select(monkeypatch, path, T.make_egraph)
    got, sats = _select(monkeypatch, path, isel.repeating_egraph)
    assert sats == ref_sats and len(sats) >= 3  # every iteration's e-graph size, then the end
    assert got == ref and "ila.invoke" in got


def test_same_stop_by_the_node_limit(monkeypatch):
    path = ROOT / "examples/isel/forms/lstm_seq.mlir"
    pipeline = "isel{targets=flexasr mode=flexible node-limit=300}"
    ref, ref_sats = _select(monkeypatch, path, T.make_egraph, pipeline)
    got, sats = _select(monkeypatch, path, isel.repeating_egraph, pipeline)
    assert ref_sats[-1][2] == "nodes" and sats == ref_sats
    assert got == ref


def test_the_command_is_made_once_per_egraph(monkeypatch):
    """The schedule is turned into egglog's command on the first iteration only."""
    from egglog.egraph_state import EGraphState

    made = []
    to_egg = EGraphState.run_schedule_to_egg

    def counting(self, schedule):
        made.append(schedule)
        return to_egg(self, schedule)

    monkeypatch.setattr(EGraphState, "run_schedule_to_egg", counting)
    _, sats = _select(monkeypatch, ROOT / "examples/isel/forms/layernorm.mlir", isel.repeating_egraph)
    iterations = sats[-1][0]
    assert iterations >= 3 and len(made) == 1
