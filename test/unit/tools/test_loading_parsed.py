"""`load_module(..., parsed=module)` runs a pipeline on an already parsed module instead of
parsing the file again (step-run --backend ila compiles a clone of the program it also runs as
the reference: LSTM-WLM's 1.1 MB parsed once, not twice).  The result is the same IR as a fresh
parse would give, the original is left as it was, and a pass's error is still located in the
file.  step-run also tunes the cyclic collector while it compiles, and restores it."""

from __future__ import annotations

from pathlib import Path

import pytest

from steplus.tools.cli import InputError
from steplus.tools.loading import load_module

ROOT = Path(__file__).parents[3]
LINEAR = ROOT / "examples/isel/linear_reshape.mlir"
MALFORMED = ROOT / "test/filecheck/passes/isel-malformed.mlir"
PIPELINE = "isel{targets=flexasr},convert-ila-to-commands"


def test_pipeline_on_a_parsed_clone_equals_a_fresh_parse():
    source = load_module(str(LINEAR))
    before = str(source)
    clone = source.clone()
    compiled = load_module(str(LINEAR), PIPELINE, parsed=clone)
    assert compiled is clone  # transformed in place, not parsed again
    assert str(compiled) == str(load_module(str(LINEAR), PIPELINE))
    assert "ila." in str(compiled)  # the pipeline did run
    assert str(source) == before  # the reference program is untouched


def test_a_pass_error_on_a_clone_is_located_in_the_file():
    source = load_module(str(MALFORMED))
    with pytest.raises(InputError) as info:
        load_module(str(MALFORMED), "isel{targets=flexasr}", parsed=source.clone())
    text = "\n".join(info.value.lines)
    assert "isel-malformed.mlir:11:3: error: isel: 'tosa.max_pool2d': kernel and stride must be positive" in text


def test_the_collector_is_tuned_only_inside_a_compile():
    import gc

    from steplus.tools.step_run_ila import fewer_collections

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with fewer_collections():
        assert gc.get_threshold()[0] == 50_000
        assert gc.get_freeze_count() > frozen  # the objects made so far are out of its scans
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen == 0
