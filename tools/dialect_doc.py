"""Generate one markdown page per steplus dialect from the op and type definitions.

    step-opt --gen-dialect-doc docs/dialects

The page of a dialect is made of the module docstring of the dialect, then every
type/attribute and every operation with its docstring (summary, description,
example) and a table of its operands, results, properties and regions: their
types in words (from the IRDL constraints) and their meaning (the docstring
written right below the `prop_def` / `operand_def` line of the op class, as
for pass options).  Nothing is written by hand: edit the docstrings, then
regenerate.
"""

from __future__ import annotations

import inspect
import os
import sys
from io import StringIO

from xdsl.ir import Dialect, Operation
from xdsl.irdl import IRDLOperation

from steplus.dialects import get_all_dialects
from steplus.tools.function_doc import render_function_library
from steplus.tools.pass_options import attribute_docstrings as _attribute_docstrings


def _doc(obj: object) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


_TYPE_NAMES = {
    "DenseArrayBase": "dense integer array, `array<i64: ...>`",
    "StringAttr": "string",
    "IntegerAttr": "integer attribute",
    "IntAttr": "integer",
    "SymbolRefAttr": "symbol reference, `@name`",
    "FunctionType": "function type, `(T, ...) -> (T, ...)`",
    "UnitAttr": "unit (present or absent)",
    "TensorType": "tensor",
    "IntegerType": "integer type",
}


def _readable(c: object) -> str:
    """An IRDL constraint in words (`BaseAttr(DenseArrayBase)` -> a dense integer
    array), its repr where no reading is known."""
    kind = type(c).__name__
    if kind == "RangeLengthConstraint" and getattr(getattr(c, "length", None), "value", None) == 1:
        return _readable(getattr(c, "constraint"))
    if kind == "RangeOf":  # the def says single, optional or variadic
        return _readable(getattr(c, "constr"))
    if kind == "BaseAttr":
        attr = getattr(c, "attr")
        name = getattr(attr, "name", None)
        if attr.__name__ in _TYPE_NAMES:
            return _TYPE_NAMES[attr.__name__]
        return f"`!{name}`" if isinstance(name, str) else attr.__name__
    if kind == "EqAttrConstraint":
        return f"`{getattr(c, 'attr')}`"
    if kind == "AnyAttr":
        return "any type"
    if kind == "VarConstraint":
        inner = _readable(getattr(c, "constraint"))
        return f"{inner}, `{getattr(c, 'name')}` (the same wherever `{getattr(c, 'name')}` appears)"
    if kind == "ParamAttrConstraint":
        base = getattr(getattr(c, "base_attr", None), "__name__", "")
        params = list(getattr(c, "param_constrs", ()))
        if base == "DenseArrayBase" and params and type(params[0]).__name__ == "EqAttrConstraint":
            element = _readable(params[0]).strip("`")
            return f"dense `{element}` array, `array<{element}: ...>`"
        if base == "IntegerAttr" and len(params) == 2:
            if type(params[1]).__name__ == "EqAttrConstraint":
                return f"{_readable(params[1])} integer"
            return "integer attribute"
    if kind == "SymbolNameConstraint":
        return "symbol name, `@name`"
    if kind == "AnyOf":
        return " or ".join(_readable(a) for a in getattr(c, "attr_constrs", ()))
    return str(c).replace("\n", " ")


def _constraint(d: object) -> str:
    """The type of an operand/result/property definition `d` in words."""
    text = _readable(getattr(d, "constr", d))
    name = type(d).__name__
    if name.startswith("Var"):
        text = f"any number of {text}"
    elif name.startswith("Opt"):
        text = f"optional {text}"
    return text.replace("\n", " ").replace("|", "\\|")


# Properties whose meaning is the same on every op that has them (MLIR's conventions);
# an op's own docstring below its `prop_def` line takes precedence.
GENERIC_MEANINGS = {
    "sym_name": "The op's symbol name, `@name`, unique in its symbol table.",
    "function_type": "The signature: argument types to result types.",
    "operandSegmentSizes": "How many operands each operand group has, in order (printed by the "
                           "generic form only; the custom syntax derives it).",
    "resultSegmentSizes": "How many results each result group has, in order (printed by the "
                          "generic form only).",
}


def render_op(op: type[Operation]) -> str:
    """The markdown section of one operation."""
    out = StringIO()
    out.write(f"### `{op.name}` ({op.__name__})\n\n")
    doc = _doc(op)
    out.write((doc or "_No description._") + "\n\n")
    if not issubclass(op, IRDLOperation):
        raise TypeError(f"{op.name}: only IRDL operations have a generated reference")
    op_def = op.get_irdl_definition()
    meanings = {**GENERIC_MEANINGS, **_attribute_docstrings(op)}
    rows: list[tuple[str, str, str]] = []
    rows += [("operand", n, _constraint(d)) for n, d in op_def.operands]
    rows += [("result", n, _constraint(d)) for n, d in op_def.results]
    rows += [("property", n, _constraint(d)) for n, d in op_def.properties.items()]
    rows += [("attribute", n, _constraint(d)) for n, d in op_def.attributes.items()]
    rows += [("region", n, "region") for n, _ in op_def.regions]
    if rows:
        out.write("| kind | name | type | meaning |\n|---|---|---|---|\n")
        for kind, name, constr in rows:
            meaning = " ".join(meanings.get(name, "").split()).replace("|", "\\|")
            out.write(f"| {kind} | `{name}` | {constr} | {meaning} |\n")
        out.write("\n")
    return out.getvalue()


def _dialect_intro(name: str, op_module: str) -> str:
    """The dialect's description: the docstring of the first module, from the module of
    its first op up through its parent packages, that begins "The `name` dialect"
    (ops may live in a submodule, e.g. `dialects/step/ops/graph.py`), else the op
    module's own docstring."""
    parts = op_module.split(".")
    for end in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:end]))
        doc = inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""
        if doc.startswith(f"The `{name}` dialect"):
            return doc
    module = sys.modules.get(op_module)
    return inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""


def render_dialect(dialect: Dialect) -> str:
    """The whole markdown page of a dialect."""
    out = StringIO()
    out.write(f"# The `{dialect.name}` dialect\n\n")
    out.write(
        "<!-- Generated by `step-opt --gen-dialect-doc docs/dialects`; "
        "do not edit by hand. -->\n\n"
    )
    ops = list(dialect.operations)
    attrs = list(dialect.attributes)
    intro = _dialect_intro(dialect.name, ops[0].__module__ if ops else "")
    if intro:
        out.write(intro + "\n\n")
    if attrs:
        out.write("## Types and attributes\n\n")
        for attr in attrs:
            out.write(f"### `{attr.name}` ({attr.__name__})\n\n")
            out.write((_doc(attr) or "_No description._") + "\n\n")
    out.write(f"## Operations ({len(ops)})\n\n")
    for op in ops:
        out.write(render_op(op))
    return out.getvalue()


def write_dialect_docs(directory: str) -> list[str]:
    """Write `<directory>/<dialect>.md` for every steplus dialect, and the
    `step.apply` library page `step-functions.md`; return the paths."""
    os.makedirs(directory, exist_ok=True)
    paths: list[str] = []
    for name, factory in sorted(get_all_dialects().items()):
        path = os.path.join(directory, f"{name}.md")
        with open(path, "w") as f:
            f.write(render_dialect(factory()))
        paths.append(path)
    path = os.path.join(directory, "step-functions.md")
    with open(path, "w") as f:
        f.write(render_function_library())
    paths.append(path)
    return paths
