"""Conditions of `lus.when`/`lus.merge`: an `i1` operand or a k-periodic word.

A k-periodic word `prefix(period)` over {0, 1} is a boolean sequence: the
prefix once, then the period forever (`"0(01)"` is 0 0 1 0 1 ...).
"""

from __future__ import annotations

import functools
import re

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

_KPERIODIC = re.compile(r"^([01]*)\(([01]+)\)$")


@functools.lru_cache(maxsize=1024)  # every tick reads words through it
def parse_kperiodic(word: str) -> tuple[str, str]:
    """Split a k-periodic word `prefix(period)` into (prefix, period).

    >>> parse_kperiodic("0(01)")
    ('0', '01')
    """
    m = _KPERIODIC.match(word)
    if m is None:
        raise VerifyException(
            f"invalid k-periodic word '{word}': expected prefix(period) over "
            "{0,1} with a non-empty period, e.g. \"1(0)\" or \"0(01)\""
        )
    return m.group(1), m.group(2)


def kperiodic_value(word: str, cycle: int) -> bool:
    """The value of a k-periodic word at a (0-based) cycle."""
    prefix, period = parse_kperiodic(word)
    if cycle < len(prefix):
        return prefix[cycle] == "1"
    return period[(cycle - len(prefix)) % len(period)] == "1"


def parse_condition(parser: Parser) -> tuple[SSAValue | None, str | None, bool]:
    """Parse `[not] %c` or `[not] "word"`."""
    negated = parser.parse_optional_keyword("not") is not None
    word = parser.parse_optional_str_literal()
    if word is not None:
        return None, word, negated
    unresolved = parser.parse_unresolved_operand()
    return parser.resolve_operand(unresolved, IntegerType(1)), None, negated


def print_condition(printer: Printer, cond, word, negated) -> None:
    printer.print_string(" not " if negated else " ")
    if word is not None:
        printer.print_string_literal(word.data)
    else:
        printer.print_operand(cond)


def verify_condition(op: Operation, cond, word) -> None:
    if (cond is None) == (word is None):
        raise VerifyException(
            f"{op.name} needs exactly one of a condition operand or a k-periodic word"
        )
    if word is not None:
        parse_kperiodic(word.data)
    elif not (isinstance(cond.type, IntegerType) and cond.type.width.data == 1):
        raise VerifyException(f"{op.name} condition must be i1, got {cond.type}")
