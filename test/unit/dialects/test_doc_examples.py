"""Every documented example parses and verifies; every pass documents itself.

The rule for examples (no wrapping, no guessing):

- A ```` ```mlir ```` fenced block, in the docstring of a module, class,
  function or method of `steplus.dialects`, `steplus.passes` or
  `steplus.lowering`, or in `README.md` and the hand-written pages of `docs/`,
  is a *complete* `step-opt` input: it
  parses as written with every dialect `tools/registry.py` registers (implicit
  `builtin.module`) and the module verifies.  An example of an op that needs
  an enclosing op (a `step.map` in a `step.graph`, an `ila.cmd` in an
  `ila.fragment`, a `lus.fby` in a `lus.node`, ...) is written inside it, with
  the values it consumes as arguments of the enclosing op.  Only parsing and
  verification are checked, not the lus checks `step-opt` runs by default:
  a pass docstring may show an input the pass rejects (causality, recursion).
- A schematic sketch that is not MLIR (`...`, shorthand types) is fenced
  ```` ```text ````, not ```` ```mlir ````.
- A ```` ```python ```` block that prints a module (`print(....module())`) is
  run in a fresh interpreter from the repository root; what it prints must
  parse and verify the same way.  Other Python blocks are illustrations with
  free names and are not run.

The cases are named `<file>:<object>#<n>` (`<file>:<line>` for a page) so
a failure names the docstring to fix.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from dataclasses import dataclass
from types import ModuleType

import pytest
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from conftest import REPO
from steplus.tools.registry import get_all_dialects, get_all_passes
from steplus.tools.step_opt import list_passes

PACKAGES = ("steplus.dialects", "steplus.passes", "steplus.lowering")
FENCE = re.compile(r"^[ \t]*```(\w*)[ \t]*\n(.*?)^[ \t]*```", re.S | re.M)
STEP_OPT_PIPELINE = re.compile(r"step-opt\b[^`]*?\s-p\s+(?:'([^']+)'|([^\s'`]+))")


@dataclass(frozen=True)
class Example:
    where: str
    lang: str
    text: str


def _modules() -> list[ModuleType]:
    mods: list[ModuleType] = []
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        mods.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, name + "."):
            mods.append(importlib.import_module(info.name))
    return mods


def _documented(mod: ModuleType) -> list[tuple[str, object]]:
    """The module and every class, function and method it defines."""
    out: list[tuple[str, object]] = [("", mod)]
    for name, obj in vars(mod).items():
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if getattr(obj, "__module__", None) != mod.__name__:
            continue
        out.append((name, obj))
        if inspect.isclass(obj):
            out += [
                (f"{name}.{m}", f)
                for m, f in vars(obj).items()
                if inspect.isfunction(f)
            ]
    return out


def _relpath(mod: ModuleType) -> str:
    return str(inspect.getfile(mod)).removeprefix(str(REPO) + "/")


def docstring_examples() -> list[Example]:
    examples: list[Example] = []
    for mod in _modules():
        for name, obj in _documented(mod):
            doc = obj.__doc__ if isinstance(obj.__doc__, str) else ""
            blocks = FENCE.findall(inspect.cleandoc(doc))
            for i, (lang, text) in enumerate(b for b in blocks if b[0] in ("mlir", "python")):
                examples.append(Example(f"{_relpath(mod)}:{name or '<module>'}#{i}", lang, text))
    return examples


DOC_PAGES = ["README.md", "SECURITY.md", *sorted(
    str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md")
    if p.parent.name != "dialects")]
"""Hand-written pages (the generated dialect pages repeat the docstrings)."""


def readme_examples() -> list[Example]:
    examples: list[Example] = []
    for page in DOC_PAGES:
        text = (REPO / page).read_text()
        examples += [
            Example(f"{page}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1), m.group(2))
            for m in FENCE.finditer(text)
            if m.group(1) in ("mlir", "python")
        ]
    return examples


def _builds_ir(example: Example) -> bool:
    return example.lang == "python" and re.search(r"print\(.*\.module\(", example.text) is not None


ALL = docstring_examples() + readme_examples()
MLIR = [e for e in ALL if e.lang == "mlir"]
PYTHON = [e for e in ALL if _builds_ir(e)]


def _context() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_and_verify(text: str, where: str) -> None:
    try:
        module = Parser(_context(), text, where).parse_module()
        module.verify()
    except Exception as e:  # report the example, not a traceback into xDSL
        raise AssertionError(f"{where}: {type(e).__name__}: {e}\n--- example:\n{text}") from None


@pytest.mark.parametrize("example", MLIR, ids=[e.where for e in MLIR])
def test_mlir_example_parses_and_verifies(example: Example):
    parse_and_verify(example.text, example.where)


@pytest.mark.parametrize("example", PYTHON, ids=[e.where for e in PYTHON])
def test_python_builder_example_prints_a_valid_module(example: Example):
    run = subprocess.run(
        [sys.executable, "-c", example.text],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, f"{example.where} failed:\n{run.stderr}"
    assert "builtin.module" in run.stdout, f"{example.where} printed no module"
    parse_and_verify(run.stdout, example.where)


def test_examples_are_found_everywhere():
    """The collection itself is checked, so the tests above cannot pass vacuously."""
    files = {e.where.split(":")[0] for e in MLIR}
    for expected in ("dialects/step/__init__.py", "dialects/step/ops/memory.py", "dialects/step/ops/routing.py", "dialects/lus/__init__.py",
                     "dialects/sync.py", "dialects/ila/__init__.py", "passes/lus/clocks.py",
                     "lowering/step_to_runtime.py", "README.md"):
        assert expected in files, f"no ```mlir example collected from {expected}"
    assert {e.where.split(":")[0] for e in PYTHON} >= {
        "dialects/lus/builder.py", "dialects/step/builder.py",
        "docs/guide/python-api.md",
    }


def test_a_broken_example_is_reported_with_its_location():
    fragment = "step.consume %x : !step.stream<[N], i1>\n"
    with pytest.raises(AssertionError, match=r"(?s)here#0: ParseError.*values used but not defined"):
        parse_and_verify(fragment, "here#0")
    with pytest.raises(AssertionError, match=r"(?s)here#1: VerifyException.*step.stream"):
        parse_and_verify("step.graph @g {\n^bb0(%x: i1):\n  step.consume %x : i1\n}\n", "here#1")


def test_sketch_fence_is_not_collected_as_mlir():
    doc = "A.\n\n```text\n%a = step.op %b, ...\n```\n\n```mlir\nstep.graph @g {\n}\n```\n"
    assert [lang for lang, _ in FENCE.findall(doc)] == ["text", "mlir"]


# -- passes ------------------------------------------------------------------

PASSES = sorted(get_all_passes().items())


@pytest.mark.parametrize("name,factory", PASSES, ids=[n for n, _ in PASSES])
def test_pass_docstring_has_summary_and_example(name, factory):
    cls = factory()
    assert cls.name == name
    doc = inspect.cleandoc(cls.__doc__ or "")
    module_doc = inspect.getmodule(cls).__doc__ or ""
    assert doc, f"{name} has no docstring"
    assert doc.splitlines()[0].endswith((".", ")")), f"{name}: summary should be a sentence"
    pipelines = [q or bare for q, bare in STEP_OPT_PIPELINE.findall(doc + "\n" + module_doc)]
    ir_examples = FENCE.findall(doc)
    assert any(lang == "mlir" for lang, _ in ir_examples) or any(
        name in p for p in pipelines
    ), f"{name}: docstring has neither an ```mlir example nor a `step-opt ... -p '{name}'` line"
    for spec in pipelines:
        PassPipeline.parse_spec(dict(get_all_passes()), " ".join(spec.split()))


def test_list_passes_prints_each_docstring_summary(step_opt):
    r = step_opt(["--list-passes"])
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0] == f"Available passes ({len(PASSES)}):"
    for name, factory in PASSES:
        summary = inspect.cleandoc(factory().__doc__).splitlines()[0]
        i = lines.index(name)
        assert lines[i + 1] == f"    {summary}"
    assert r.out == list_passes(get_all_passes())
