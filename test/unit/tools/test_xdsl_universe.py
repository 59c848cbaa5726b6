"""steplus is an xDSL universe: plain `xdsl-opt` loads its dialects and passes
through the `xdsl.universe` entry point of pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from xdsl.universe import Universe

from conftest import REPO
from steplus.dialects import get_all_dialects as steplus_dialects
from steplus.tools.registry import get_all_passes

XDSL_OPT = Path(sys.executable).parent / "xdsl-opt"

INTEGRATOR = """\
lus.node @integr(%i: i32) -> (i32) {
  %c0 = arith.constant 0 : i32
  %s = lus.fby %c0 %incr : i32
  %incr = arith.addi %s, %i : i32
  lus.yield (%incr : i32)
}
"""


def test_the_entry_point_is_installed():
    (ep,) = [e for e in entry_points(group="xdsl.universe") if e.name == "steplus"]
    assert ep.value == "steplus.tools.registry:STEPLUS_UNIVERSE"


def test_the_multiverse_holds_every_steplus_dialect_and_pass():
    multiverse = Universe.get_multiverse()  # raises on a name clash with xDSL's own
    assert set(steplus_dialects()) <= set(multiverse.all_dialects)
    assert set(get_all_passes()) <= set(multiverse.all_passes)


def test_xdsl_opt_runs_a_steplus_pass():
    run = subprocess.run([str(XDSL_OPT), "-p", "convert-lus-to-sync"], input=INTEGRATOR,
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert run.returncode == 0, run.stderr
    lines = [line.strip() for line in run.stdout.splitlines()]
    assert "sync.node @integr(%i: !sync.sigin<i32>) -> (%out0: !sync.sigout<i32>) {" in lines
