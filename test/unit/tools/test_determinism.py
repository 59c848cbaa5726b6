"""The same simulation twice, in separate processes, gives the same bytes (issue 24).

step-run runs a shipped graph in two fresh interpreters with different string-hash
seeds (PYTHONHASHSEED: set and dict order of strings differ between them), and the
metrics, the per-context table and the Chrome trace must be identical byte for byte.
(The isel half of this check is test/unit/passes/isel's.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

STEP = REPO / "examples" / "step"
ROUTING = REPO / "examples" / "data" / "step-traces" / "expert_routing" / "mixtral_b64" / "008_010.npz"


def _step_run(args: list[str], seed: int, trace: Path | None) -> tuple[bytes, bytes]:
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    argv = [sys.executable, "-c", "import sys; from steplus.tools.step_run import main; "
            "sys.exit(main())", *args]
    if trace is not None:
        argv += ["--trace", str(trace)]
    r = subprocess.run(argv, env=env, capture_output=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    return r.stdout, trace.read_bytes() if trace is not None else b""


@pytest.mark.parametrize("args", [
    [str(STEP / "attention_dynamic_b16_high.mlir"), "--json"],  # work stealing, merges
    [str(STEP / "moe_mixtral_dyn.mlir"), "--routing", str(ROUTING)],  # routing, dynamic tiles
], ids=["attention-dynamic", "moe-mixtral-dyn"])
def test_step_run_twice_gives_identical_bytes(args, tmp_path):
    first = _step_run(args, 1, tmp_path / "a.json")
    second = _step_run(args, 2, tmp_path / "b.json")
    assert first[0] and first[1]
    assert first[0] == second[0]
    assert first[1] == second[1]
