"""`step-opt --list-passes`: every pass, its summary, and each option with its
type in MLIR terms, default, allowed values and meaning.

An option's meaning and allowed values live with the pass, on its dataclass
field: a docstring right below the field (PEP 257 attribute docstring), or
`field(metadata={"doc": ..., "choices": (...)})`; a `Literal[...]` type gives
the allowed values too. Example (the pass in `passes/isel/__init__.py`):

    mode: str = "flexible"
    \"\"\"How patterns match: `exact` shapes only, or `flexible` (tiling, padding).
    One of: exact, flexible.\"\"\"

lists as

    isel
        Select accelerator invocations by e-graph matching (exact or flexible).
        --mode=<string>  (default: flexible; one of: exact, flexible)
            How patterns match: `exact` shapes only, or `flexible` (tiling, padding).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
import typing
from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO

from xdsl.passes import ModulePass

from steplus.tools.cli import one_line

__all__ = ["OptionDoc", "attribute_docstrings", "list_passes", "option_docs"]

_MLIR_TYPES = {str: "string", int: "int", float: "double", bool: "bool"}
_ONE_OF = re.compile(r"\s*One of:\s*([^.\n]+)\.?\s*$")


@dataclass(frozen=True)
class OptionDoc:
    """One pass option as `--list-passes` shows it."""

    name: str  # as typed in a pipeline, with dashes
    mlir_type: str  # string, int, double, bool, "list of string"
    default: str | None
    choices: tuple[str, ...]
    doc: str  # one line ("" when the pass documents none)


def _mlir_type(hint: object) -> str:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        args = typing.get_args(hint)
        return _MLIR_TYPES.get(type(args[0]), "string") if args else "string"
    if origin in (tuple, list):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return f"list of {_mlir_type(args[0]) if args else 'string'}"
    if origin is typing.Union or (origin is not None and "UnionType" in str(origin)):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _mlir_type(args[0]) if args else "string"
    return _MLIR_TYPES.get(hint, getattr(hint, "__name__", str(hint)))  # type: ignore[arg-type]


def _default_text(value: object) -> str | None:
    if value is dataclasses.MISSING or value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def attribute_docstrings(cls: type) -> dict[str, str]:
    """name -> the string literal right below its definition (a dataclass field,
    or an op's `operand_def`/`prop_def` line), for `cls` and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass in (object, ModulePass) or klass.__module__.startswith("xdsl."):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, nxt in zip(body, body[1:]):
            if isinstance(stmt, ast.AnnAssign):
                target = stmt.target
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]  # an op's `base_addr = prop_def(...)`
            else:
                continue
            if (isinstance(target, ast.Name) and isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
                docs[target.id] = inspect.cleandoc(nxt.value.value)
    return docs


def option_docs(cls: type[ModulePass]) -> list[OptionDoc]:
    """The options of pass class `cls` (its init fields), in declaration order."""
    if not dataclasses.is_dataclass(cls):
        return []
    try:
        hints = typing.get_type_hints(cls)
    except Exception:
        hints = {}
    docstrings = attribute_docstrings(cls)
    out: list[OptionDoc] = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "name":
            continue
        hint = hints.get(f.name, str)
        text = str(f.metadata.get("doc", "")) or docstrings.get(f.name, "")
        choices: tuple[str, ...] = tuple(str(c) for c in f.metadata.get("choices", ()))
        if typing.get_origin(hint) is typing.Literal:
            choices = tuple(str(a) for a in typing.get_args(hint))
        lines = text.splitlines()
        if lines and (m := _ONE_OF.fullmatch(lines[-1])) and not choices:
            choices = tuple(c.strip() for c in m.group(1).split(","))
            lines = lines[:-1]
        summary = " ".join(line.strip() for line in lines).strip()
        default = f.default
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        out.append(OptionDoc(f.name.replace("_", "-"), _mlir_type(hint),
                             _default_text(default), choices, summary))
    return out


def list_passes(passes: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """The `--list-passes` text: name, summary and options of every pass."""
    out = StringIO()
    out.write(f"Available passes ({len(passes)}):\n")
    for name in sorted(passes):
        try:
            cls = passes[name]()
        except Exception as e:
            out.write(f"{name}\n    (unavailable: {one_line(e)})\n")
            continue
        doc = (cls.__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else "(no summary)"
        out.write(f"{name}\n    {summary}\n")
        for opt in option_docs(cls):
            facts = []
            if opt.default is not None:
                facts.append(f"default: {opt.default}")
            if opt.choices:
                facts.append(f"one of: {', '.join(opt.choices)}")
            extra = f"  ({'; '.join(facts)})" if facts else ""
            out.write(f"    --{opt.name}=<{opt.mlir_type}>{extra}\n")
            out.write(f"        {opt.doc or '(undocumented)'}\n")
    return out.getvalue()
