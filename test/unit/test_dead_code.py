"""No dead code in the source folders (issue 25 §5), checked with vulture (pinned in the test extra).

vulture reads the seven source folders together with the tests, the benches and
the examples (a function only a bench or a test calls is used), plus
`vulture_whitelist.py` (names a framework or registry uses by name, each with its
reason) and the rule names of the Lustre grammar (Lark calls the Transformer's
methods by them). Every finding at vulture's default confidence (60 %) in a
source folder must be gone, or listed in KNOWN_DEAD with the work that removes
it; the list only shrinks (a stale entry fails too).

By hand: `.venv/bin/python test/unit/test_dead_code.py` prints the findings.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["dialects", "passes", "lowering", "runtime", "tools", "utils", "examples/workloads"]
ALSO_READ = ["test", "bench", "examples"]
WHITELIST = Path(__file__).with_name("vulture_whitelist.py")
# Ops, passes and registries reached by name: xDSL ModulePass subclasses (tools/registry.py
# imports them by name), the semantics registry's @impl methods, the fabric placement's
# and simulator's registries, pytest fixtures.
IGNORE_NAMES = ["*Pass"]
IGNORE_DECORATORS = ["@impl", "@impl_*", "@register_impls", "@_places", "@_builds",
                     "@pytest.fixture", "@*.fixture"]

KNOWN_DEAD: set[tuple[str, str]] = {
    # the abstract generator's `raise NotImplementedError; yield` (the yield makes it a generator)
    ("runtime/fabric/context.py", "unreachable code after 'raise'"),
}

_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<msg>.*?) \((?P<conf>\d+)% confidence")


def _grammar_names() -> list[str]:
    names: set[str] = set()
    for lark in (REPO / "lowering").rglob("*.lark"):
        text = lark.read_text(encoding="utf-8")
        names.update(re.findall(r"^\s*[?!]?([a-z_][a-z_0-9]*)\s*:", text, re.M))
        names.update(re.findall(r"->\s*([a-z_][a-z_0-9]*)", text))
    return sorted(names)


def findings() -> set[tuple[str, str]]:
    """(path, name) of every finding in a source folder (the name, or the message
    when there is none, e.g. unreachable code)."""
    cmd = [sys.executable, "-m", "vulture", *SOURCES, *ALSO_READ, str(WHITELIST),
           "--min-confidence", "60", "--exclude", "*/_native/*,*/.venv/*,*/Output/*",
           "--ignore-names", ",".join(IGNORE_NAMES + _grammar_names()),
           "--ignore-decorators", ",".join(IGNORE_DECORATORS)]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 3), out.stderr  # 3: dead code found
    found = set()
    for line in out.stdout.splitlines():
        m = _LINE.match(line)
        assert m, f"unexpected vulture output: {line}"
        path = m["path"]
        if not any(path == s or path.startswith(s + "/") for s in SOURCES):
            continue
        name = re.search(r"'([^']+)'", m["msg"])
        key = m["msg"] if m["msg"].startswith("unreachable") else (name[1] if name else m["msg"])
        found.add((path, key))
    return found


def test_no_dead_code():
    pytest.importorskip("vulture", reason="vulture is pinned in the test extra (./run setup)")
    found = findings()
    new = sorted(found - KNOWN_DEAD)
    stale = sorted(KNOWN_DEAD - found)
    assert not new, ("unused code (delete it, or if a framework uses it by name, add it to "
                     "test/unit/vulture_whitelist.py with why):\n"
                     + "\n".join(f"  {p}: {n}" for p, n in new))
    assert not stale, f"KNOWN_DEAD lists what is gone, drop it: {stale}"


def test_the_check_sees_planted_dead_code(tmp_path):
    pytest.importorskip("vulture", reason="vulture is pinned in the test extra (./run setup)")
    src = tmp_path / "m.py"
    src.write_text("def used():\n    return 1\n\n\ndef unused_helper():\n    return used()\n"
                   "\n\nclass SomePass:\n    pass\n\n\nprint(used())\n")
    out = subprocess.run([sys.executable, "-m", "vulture", str(src), "--ignore-names",
                          ",".join(IGNORE_NAMES)], capture_output=True, text=True, timeout=60)
    assert "unused function 'unused_helper'" in out.stdout
    assert "SomePass" not in out.stdout and "'used'" not in out.stdout


if __name__ == "__main__":
    for p, n in sorted(findings()):
        print(f"{p}: {n}")
