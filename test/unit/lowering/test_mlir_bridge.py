"""Our generic form parses and verifies in real MLIR, and what MLIR prints parses back.

Inputs: every example program under examples/ and every round-trip test input
(`test/filecheck/dialects/*/ops.mlir`, split on `// -----`).  Real MLIR is the
upstream Python bindings shipped as `iree.compiler.ir`, with unregistered
dialects allowed (the steplus dialects are unknown to it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from steplus.lowering.mlir_bridge import (
    generic_text,
    InteropError,
    from_mlir,
    parse_xdsl,
    to_mlir,
)

_SPLIT = re.compile(r"^[ \t]*// -----[^\n]*$", re.MULTILINE)


def _inputs() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    files = sorted((REPO / "test" / "filecheck" / "dialects").rglob("ops.mlir"))
    # The Qwen MoE graphs come from the same builder as the Mixtral ones (128
    # experts instead of 8, 1 MB of text each): the Mixtral files cover them.
    files += sorted(p for p in (REPO / "examples").rglob("*.mlir")
                    if not p.name.startswith("moe_qwen_"))
    for path in files:
        for i, chunk in enumerate(_SPLIT.split(path.read_text())):
            if chunk.strip():
                found.append((f"{path.relative_to(REPO)}#{i}", chunk))
    return found


INPUTS = _inputs()


@pytest.mark.parametrize("name,text", INPUTS, ids=[n for n, _ in INPUTS])
def test_generic_form_round_trips_through_real_mlir(name: str, text: str):
    module = parse_xdsl(text, name=name)
    module.verify()
    upstream = to_mlir(module)
    back = from_mlir(upstream)
    back.verify()
    assert _canonical(back) == _canonical(module)


def _canonical(module) -> str:
    """Generic text with SSA names dropped and dictionaries sorted (MLIR renames values; graph regions
    use values before their definition, which structural equivalence rejects); upstream-only cache
    attributes and TOSA's default NaN mode are dropped."""
    for op in module.walk():
        # upstream prints TOSA's default NaN mode, which torch-mlir's output leaves out
        op.properties = dict(sorted((k, v) for k, v in op.properties.items()
                                    if not (k == "nan_mode" and str(v) == "#tosa.nan_mode<PROPAGATE>")))
        # upstream linalg caches its indexing maps on named convolutions
        op.attributes = dict(sorted((k, v) for k, v in op.attributes.items()
                                    if k != "linalg.memoized_indexing_maps"))
        for value in op.results:
            value.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return generic_text(module)


def test_real_mlir_verifies_upstream_dialects():
    # A func whose return type is wrong passes our parser only in generic form
    # with verification off; upstream MLIR must reject it.
    from iree.compiler import ir

    bad = (
        '"builtin.module"() ({\n'
        '  "func.func"() <{sym_name = "f", function_type = () -> i32}> ({\n'
        '    "func.return"() : () -> ()\n'
        "  }) : () -> ()\n"
        "}) : () -> ()\n"
    )
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx, pytest.raises(ir.MLIRError):
        ir.Module.parse(bad)


def test_upstream_rejection_is_an_interop_error():
    # xDSL 0.74 does not check branch operands against the successor's block
    # arguments; real MLIR does, and to_mlir reports its message.
    module = parse_xdsl(
        "func.func @f(%a: i32) {\n  cf.br ^bb1(%a : i32)\n"
        "^bb1(%b: f32):\n  func.return\n}\n"
    )
    module.verify()
    with pytest.raises(InteropError, match="type mismatch"):
        to_mlir(module)


def test_there_are_inputs():
    assert INPUTS
