"""step-run paths whose types were narrowed for basedpyright (issue 25 item 4) refuse what they
cannot run with a one-line error instead of failing deeper: `--check` on a sync.node (a Lustre
check needs a lus.node), `--stream` without a standard input."""

from __future__ import annotations

import sys

import pytest
from xdsl.dialects.builtin import f32

from conftest import run_tool
from steplus.tools.cli import UsageError
from steplus.tools.inputs import input_signature
from steplus.tools.step_run import main
from steplus.tools.step_run_stream import stream

SYNC_NODE = """\
sync.node @id(%i: !sync.sigin<f32>) -> (%o: !sync.sigout<f32>) {
  scf.while () : () -> () {
    %true = arith.constant true
    scf.condition(%true)
  } do {
    %x = sync.input(%i) : f32
    %e = sync.output(%o : %x) : f32
    %t = sync.tick(%e) : i32
    scf.yield
  }
  sync.halt
}
"""


def test_check_on_a_sync_node_is_a_usage_error(tmp_path):
    path = tmp_path / "id.mlir"
    path.write_text(SYNC_NODE, encoding="utf-8")
    r = run_tool(main, [str(path), "--node", "id", "--check"])
    assert r.code == 2
    assert r.err.strip() == "step-run: error: --check checks a Lustre node; @id is a sync.node"


def test_stream_without_stdin_is_a_usage_error(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    sig = input_signature("x", f32, True)
    with pytest.raises(UsageError, match="--stream needs a standard input and output"):
        stream([sig], lambda values: values, str, ticks=1, max_ticks=1)
