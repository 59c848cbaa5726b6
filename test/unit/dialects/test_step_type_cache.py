"""The parse cache of `!step.stream` / `!step.tile` types (keyed by their text).

A repeated type text is not lexed again: the attribute parsed the first time
is returned. The cache must never change what is parsed or where an error is
reported.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import bf16, f32
from xdsl.utils.exceptions import ParseError, VerifyException

from steplus.dialects.step import types as step_types
from steplus.dialects.step.types import StreamType, TileType
from steplus.lowering.mlir_bridge import parse_xdsl


def _arg_types(text: str):
    module = parse_xdsl(text)
    graph = next(iter(module.ops))
    return [a.type for a in graph.body.block.args]


def _graph(*types: str) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    return "step.graph @g {\n^bb0(" + args + "):\n}\n"


def test_same_text_gives_the_same_attribute():
    t = '!step.stream<[B, "ceil(B/16)", 16], !step.tile<16x64xbf16>>'
    a, b = _arg_types(_graph(t, t))
    assert a is b
    assert a == StreamType(["B", "ceil(B/16)", 16], TileType(16, 64, bf16))


def test_spacing_and_comments_do_not_confuse_the_cache():
    spaced = '!step.stream<[B,   4],!step.tile<1x64xf32> >'
    commented = '!step.stream<[B, 4], // four\n !step.tile<1x64xf32>>'
    plain = "!step.stream<[B, 4], !step.tile<1x64xf32>>"
    types = _arg_types(_graph(spaced, commented, plain, spaced))
    assert all(t == StreamType(["B", 4], TileType(1, 64, f32)) for t in types)


def test_distinct_texts_stay_distinct():
    a, b, c = _arg_types(_graph("!step.tile<16x64xf32>", "!step.tile<16x64xbf16>",
                                "!step.tile<?x64xf32>"))
    assert (a.rows.data, a.scalar) == (16, f32)
    assert b.scalar == bf16
    assert c.rows.data == -1 and not c.is_static


def test_a_bad_type_is_rejected_every_time():
    # the failing text is never cached: the second use fails the same way
    bad = '!step.stream<["1.5"], i1>'
    for _ in range(2):
        with pytest.raises((ParseError, VerifyException), match="1.5"):
            parse_xdsl(_graph(bad))


def test_a_quoted_angle_bracket_is_not_cached_wrongly():
    # the `>` inside the quoted dim ends the cheap text match early; the text
    # is parsed normally (and the dim rejected by the dimension grammar)
    for _ in range(2):
        with pytest.raises((ParseError, VerifyException), match="comparison|not allowed"):
            parse_xdsl(_graph('!step.stream<["B > 2"], i1>'))


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(step_types, "MAX_CACHED_TYPES", 4)
    monkeypatch.setattr(step_types, "_TYPES", {})
    types = [f"!step.tile<{r}x8xf32>" for r in range(1, 11)]
    parsed = _arg_types(_graph(*types))
    assert [t.rows.data for t in parsed] == list(range(1, 11))
    assert len(step_types._TYPES) <= 4


@pytest.mark.parametrize("line,col", [
    ('  %x = "step.consume"() {note = "open} : () -> ()', 33),
    ('  %x = "step.consume"() {note = "a\\"b // c} : () -> ()', 33),
])
def test_an_unclosed_string_literal_is_reported_where_it_starts(tmp_path, capsys, line, col):
    from steplus.tools.step_opt import main

    path = tmp_path / "bad.mlir"
    path.write_text('// a "quoted" comment\n' + line + '\n%y = "test.op"() {s = "fine // not a comment"} : () -> ()\n')
    assert main([str(path)]) != 0
    err = capsys.readouterr().err
    assert f"bad.mlir:2:{col}: error: string literal is not closed on its line" in err
