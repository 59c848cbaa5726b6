"""The target descriptions and the semantics registry are checked by basedpyright in `strict`
mode (issue 25 item 4): every module of `dialects/target/` and `dialects/semantics/` (and the
typed-attribute and safe-file helpers of `utils/`) opens with `# pyright: strict`, which
test_lint's basedpyright run then applies; a new module without it would be checked `basic`."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
STRICT = sorted([*REPO.glob("dialects/target/*.py"), *REPO.glob("dialects/semantics/*.py"),
                 REPO / "utils/discardable.py", REPO / "utils/safe_files.py",
                 REPO / "dialects/step/discardable.py", REPO / "dialects/sn40l_attrs.py"])


def test_the_strict_folders_have_modules():
    names = {p.relative_to(REPO).as_posix() for p in STRICT}
    assert {"dialects/target/fabric.py", "dialects/semantics/registry.py"} <= names


@pytest.mark.parametrize("path", STRICT, ids=lambda p: p.relative_to(REPO).as_posix())
def test_module_is_checked_strict(path: Path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# pyright: strict", f"{path.relative_to(REPO)} starts with {first!r}"
