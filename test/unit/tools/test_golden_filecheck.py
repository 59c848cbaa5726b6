"""The FileCheck tests that pin a simulated cycle count carry golden.py's number:
a lit file cannot import the golden module, so a change of the model that moves
a total must move both, and this test fails while they disagree."""

from __future__ import annotations

import pytest

from conftest import REPO
from golden import FILECHECK_COPIES


@pytest.mark.parametrize(("path", "line", "value"), FILECHECK_COPIES,
                         ids=[f"{p.rsplit('/', 1)[-1]}:{line.split(':')[0][3:]}"
                              for p, line, _ in FILECHECK_COPIES])
def test_filecheck_pins_carry_the_golden_value(path: str, line: str, value: int):
    lines = (REPO / path).read_text().splitlines()
    expected = line.format(value)
    prefix = line.split("{}")[0]
    pinned = [ln for ln in lines if ln.startswith(prefix)]
    assert pinned == [expected], f"{path}: {pinned} should be [{expected!r}] (golden.py)"
