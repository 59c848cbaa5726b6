"""Sizes in pass options (utils/sizes.py): one strict grammar over the whole text (issue 24:
`hbm="1   TiB"` read 1 byte and text past 40 characters was ignored)."""

from __future__ import annotations

import pytest

from steplus.utils.sizes import MAX_SIZE, MAX_SIZE_TEXT, parse_size


@pytest.mark.parametrize("text, value", [
    ("4096", 4096),
    ("64GiB", 64 * 2**30),
    ("64gib", 64 * 2**30),
    ("1.5TiB", 3 * 2**39),
    ("12KB", 12_000),
    ("1B", 1),
    ("0.5KiB", 512),
    ("1EiB", 2**60),
    ("9007199254740993", 2**53 + 1),  # exact: through a float it is 2**53
    ("0" * 60 + "1KiB", 1024),  # 64 characters: the limit
])
def test_valid_sizes_are_exact(text, value):
    assert parse_size(text, "hbm") == value


@pytest.mark.parametrize("text, message", [
    ("1   TiB", r"hbm must be a size like 64GiB or 4096 \(no spaces\), got '1   TiB'"),
    (" 64GiB", r"\(no spaces\)"),
    ("64GiB\n", r"\(no spaces\)"),
    ("1_000", r"got '1_000'"),
    ("١٢", r"got '١٢'"),  # Arabic-Indic digits
    ("64 parsecs", r"no spaces"),
    ("64parsecs", r"unknown unit 'parsecs'"),
    ("1e3", r"hbm must be a size like 64GiB or 4096, got '1e3'"),
    ("", r"got ''"),
    ("-1", r"got '-1'"),
    ("0", r"between 1 B and 1 EiB"),
    ("1.5B", r"whole number of bytes, got '1.5B' = 1.5 B"),
    ("1025PiB", r"unknown unit 'PiB'"),
    ("1.5EiB", r"between 1 B and 1 EiB"),
    ("0" * 61 + "1KiB", rf"at most {MAX_SIZE_TEXT} characters, got 65 characters"),
])
def test_anything_else_is_an_error_naming_the_option(text, message):
    with pytest.raises(ValueError, match=message):
        parse_size(text, "hbm")


def test_the_bound_is_one_exbibyte():
    assert MAX_SIZE == 2**60
    assert parse_size(str(2**60), "ddr") == 2**60
    with pytest.raises(ValueError, match="between 1 B and 1 EiB"):
        parse_size(str(2**60 + 1), "ddr")
