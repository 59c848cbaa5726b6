"""Heptagon automata (`.ept`), lowered to clocks (lowering/lustre/automata.py):
values against a Python model of their semantics (strong `unless` escapes
tested in the previous instant's state, weak `until` escapes taking effect at
the next instant, `then` resetting the target's equations, `continue` not),
on the lus and sync interpreters, the modular target and IREE."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from steplus.lowering.lus_to_sync import ConvertLusToSyncPass
from steplus.runtime.reactive import run_node
from steplus.runtime.reactive.sync_interp import run_sync_node
from steplus.tools.cli import InputError
from steplus.tools.iree_modular import run_node_modular
from steplus.tools.iree_run import run_node_iree
from steplus.tools.lus_translate import translate
from steplus.tools.source import SourceFile

UPDOWN = """node updown(x: bool) returns (o: int)
let
  automaton
    state Up
      do o = 0 fby (o + 1)
      until o >= 3 {how} Down
    state Down
      do o = 0 fby (o - 1)
      unless x then Up
  end
tel
"""
XS = np.array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0], bool)


def _model(xs, reset_down: bool) -> list[int]:
    """The automaton by the book: (ps, pr) from the previous instant, strong
    then body then weak; a state's `0 fby e` memory kept while inactive."""
    up, down = 0, 1
    ps, pr = up, False
    mem: dict[int, int | None] = {up: None, down: None}
    out = []
    for x in xs:
        s, r = (up, True) if ps == down and x else (ps, pr)
        o = 0 if r or mem[s] is None else mem[s]
        mem[s] = o + 1 if s == up else o - 1
        out.append(o)
        ps, pr = (down, reset_down) if s == up and o >= 3 else (s, False)
    return out


@pytest.mark.parametrize("how, reset", [("then", True), ("continue", False)])
def test_automaton_agrees_with_its_semantics_on_every_backend(how, reset):
    module = translate(SourceFile("ud.ept", UPDOWN.format(how=how)))
    inputs = {"x": XS}
    want = _model(XS, reset)
    (got,) = run_node(module, "updown", inputs, len(XS))
    assert [int(v) for v in got] == want
    lowered = module.clone()
    ConvertLusToSyncPass().apply(Context(), lowered)
    for other in (run_sync_node(lowered, "updown", inputs, len(XS)),
                  run_node_modular(module, "updown", inputs, len(XS)),
                  run_node_iree(module, "updown", inputs, len(XS))):
        assert [int(v) for v in other[0]] == want


def test_automaton_is_heptagon_only_and_its_errors_are_located():
    with pytest.raises(InputError) as info:
        translate(SourceFile("ud.lus", UPDOWN.format(how="then")))
    assert info.value.lines[0] == ("ud.lus:3:3: error: unsupported construct: automata "
                                   "(Heptagon, in .ept files) ('automaton')")
    bad = UPDOWN.format(how="then").replace("then Down", "then Left")
    with pytest.raises(InputError) as info:
        translate(SourceFile("ud.ept", bad))
    assert info.value.lines[0] == "ud.ept:6:25: error: no state 'Left' in this automaton"
    bad = UPDOWN.format(how="then").replace("do o = 0 fby (o - 1)", "do p = 0")
    with pytest.raises(InputError) as info:
        translate(SourceFile("ud.ept", bad.replace("returns (o: int)",
                                                    "returns (o: int)\nvar p: int;")))
    assert info.value.lines[0] == ("ud.ept:8:11: error: 'o' is not defined in state 'Down' (a "
                                   "variable of an automaton is defined in every state)")
