"""step-run inputs: read `--input NAME=FILE` arrays and check them against the
signature of what runs, for every backend (lus/sync nodes, IREE, ILA functions).

    sigs = node_signature(node)                  # lus.node or sync.node: streams
    arrays = load_inputs(["i=i.csv"], sigs, "@integr")
    sigs = func_signature(fn)                    # func.func: whole tensors

A file is a `.npy` array (never unpickled) or a `.csv` of numbers (UTF-8, a
leading byte-order mark skipped; one row per tick; a row may hold the flattened
elements of a per-tick tensor; integers read exactly, also past 2**53).  A stream
input holds one value per tick: shape `[ticks]` for a scalar, `[ticks, *dims]`
for a tensor; a function argument has the shape of its tensor type.  Strings,
objects, complex numbers and 0-d arrays are rejected, as are wrong shapes and
values the element type cannot hold (NaN, 2.5 or 1e30 for an i32, 2 for an
i1).  Every error names the input, its expected type and shape, and what the
file holds.
"""

from __future__ import annotations

import math
import os
from decimal import Decimal
import warnings
from collections.abc import Sequence
from typing import BinaryIO
from dataclasses import dataclass

import numpy as np
from numpy.lib import format as npformat
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from steplus.tools.cli import InputError, UsageError
from steplus.utils.safe_files import open_regular

_NUMERIC_KINDS = "biuf"
_KIND_NAMES = {"U": "strings", "S": "byte strings", "O": "Python objects",
               "c": "complex numbers", "V": "structured records",
               "M": "dates", "m": "time deltas"}


@dataclass(frozen=True)
class InputSignature:
    """What one input of an entry point expects."""

    name: str
    type_text: str  # the MLIR type, e.g. "i32", "tensor<1x8xf32>"
    element_text: str  # its element type, e.g. "f32"
    dtype: np.dtype
    dims: tuple[int | None, ...]  # per-value shape, None for a dynamic dim
    per_tick: bool  # a stream (leading axis of ticks) or a whole value

    def shape_text(self) -> str:
        dims = ["?" if d is None else str(d) for d in self.dims]
        return "[" + ", ".join((["ticks"] if self.per_tick else []) + dims) + "]"

    def describe(self) -> str:
        if self.per_tick:
            return f"{self.type_text} values, one per tick (shape {self.shape_text()})"
        return f"a {self.type_text} (shape {self.shape_text()})"


def input_signature(name: str, t: Attribute, per_tick: bool) -> InputSignature:
    """What an input `name` of type `t` expects (a stream if `per_tick`)."""
    from steplus.runtime.reactive.ops import numpy_dtype

    dims: tuple[int | None, ...] = ()
    element = t
    if isinstance(t, TensorType):
        dims = tuple(None if d < 0 else d for d in t.get_shape())
        element = t.element_type
    return InputSignature(name, str(t), str(element), numpy_dtype(t), dims, per_tick)


def node_signature(node: Operation) -> list[InputSignature]:
    """The input streams of a `lus.node` or `sync.node`."""
    from steplus.dialects import lus, sync

    if isinstance(node, lus.NodeOp):
        return [input_signature(a.name_hint or f"arg{a.index}", a.type, True)
                for a in node.input_args]
    assert isinstance(node, sync.NodeOp)
    return [input_signature(a.name_hint or f"arg{a.index}", t.element, True)
            for a in node.body.block.args if isinstance(t := a.type, sync.SigInType)]


def func_signature(fn: func.FuncOp) -> list[InputSignature]:
    """The arguments of a `func.func` (whole values)."""
    return [input_signature(a.name_hint or f"arg{a.index}", a.type, False)
            for a in fn.body.blocks[0].args]


def parse_input_specs(specs: Sequence[str]) -> dict[str, str]:
    """`--input NAME=FILE` flags as name -> path (each name once)."""
    given: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        name = name.lstrip("%")
        if not sep or not name or not path:
            raise UsageError(f"--input expects NAME=FILE, got '{spec}'")
        if name in given:
            raise UsageError(f"--input '{name}' is given twice")
        given[name] = path
    return given


def _check_npy_size(f: BinaryIO) -> None:
    """The data a `.npy` header declares must be in the file: np.load allocates
    the declared size before reading (a 100-byte file declaring 10^12 floats was
    a MemoryError). Leaves `f` at its start."""
    version = npformat.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = npformat.read_array_header_1_0(f)
    else:
        shape, _, dtype = npformat.read_array_header_2_0(f)
    declared = math.prod(shape) * dtype.itemsize
    held = os.fstat(f.fileno()).st_size - f.tell()
    if declared > held:
        raise ValueError(f"truncated: its header declares shape {list(shape)} of {dtype} "
                         f"({declared} bytes), the file holds {held}")
    f.seek(0)


CSV_ENCODING = "utf-8-sig"
"""A `.csv` input is UTF-8; a byte-order mark before its first number is skipped
(as Python's csv readers do with `utf-8-sig`: spreadsheets write one)."""


def _exact_integers(f: BinaryIO, arr: np.ndarray) -> np.ndarray:
    """A CSV read as float64 `arr` (some entry is written as a real, `1.0`, or an
    integer past int64): when every entry is an integer and some is past 2**53,
    where float64 rounds (`9007199254740993` became ...992), the entries again from
    their text, exactly, as int64 (or uint64); else `arr`."""
    big = float(2**53)
    if not (np.isfinite(arr).all() and (arr == np.round(arr)).all()
            and (np.abs(arr) >= big).any()):
        return arr
    f.seek(0)
    texts = np.loadtxt(f, delimiter=",", ndmin=1, dtype=object, converters=str,
                       encoding=CSV_ENCODING)
    exact: list[int] = []
    for text, approx in zip(texts.flat, arr.flat):
        if abs(approx) >= 2.0**65:  # out of every integer type: the check says so
            return arr
        d = Decimal(str(text).strip())  # numpy parsed it as a finite float64 already
        if d != d.to_integral_value():
            return arr  # a real: the element type decides (an integer type refuses it)
        exact.append(int(d))
    for dtype in (np.int64, np.uint64):
        info = np.iinfo(dtype)
        if all(info.min <= v <= info.max for v in exact):
            return np.array(exact, dtype=dtype).reshape(arr.shape)
    return arr


def read_array(path: str, name: str) -> np.ndarray:
    """The array in a `.npy` or `.csv` file (InputError if unreadable)."""
    try:  # a regular file only: a FIFO or /dev/zero would block or never end
        with open_regular(path) as f:
            if path.endswith(".npz"):
                raise ValueError("a .npz archive; an input is one .npy array or a .csv file")
            if path.endswith(".npy"):
                _check_npy_size(f)
                return np.asarray(np.load(f, allow_pickle=False))
            with warnings.catch_warnings():  # an empty file is 0 ticks, no warning
                warnings.simplefilter("ignore", UserWarning)
                try:  # integers exactly (a float64 rounds past 2**53), else numbers
                    return np.loadtxt(f, delimiter=",", ndmin=1, dtype=np.int64,
                                      encoding=CSV_ENCODING)
                except (ValueError, OverflowError):
                    f.seek(0)
                    arr = np.loadtxt(f, delimiter=",", ndmin=1, encoding=CSV_ENCODING)
                    return _exact_integers(f, arr)
    except (OSError, ValueError, EOFError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e).strip()
        reason = reason.splitlines()[0] if reason else type(e).__name__
        raise InputError([f"{path}: error: cannot read input '{name}': {reason}"]) from None


def _shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_shape(sig: InputSignature, arr: np.ndarray, csv: bool) -> np.ndarray | None:
    """`arr` in the expected shape (a CSV row may hold a flattened tensor), or None."""
    want = ((None,) if sig.per_tick else ()) + sig.dims
    if csv and sig.per_tick and sig.dims and None not in sig.dims and arr.ndim <= 2:
        width = math.prod(sig.dims)  # type: ignore[arg-type]
        if (arr.shape[1] if arr.ndim == 2 else 1) == width:
            arr = arr.reshape((arr.shape[0], *sig.dims))  # type: ignore[arg-type]
    if arr.ndim != len(want) or any(w is not None and g != w for g, w in zip(arr.shape, want)):
        return None
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> str:
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{arr[index].item()} at index {list(index)}"


def _value_problem(sig: InputSignature, arr: np.ndarray) -> str | None:
    """Why the values of `arr` do not fit the element type, or None."""
    target = sig.dtype
    if target.kind == "b":
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            return f"{_first_bad(arr, bad)}, not 0 or 1"
        return None
    if target.kind in "iu":
        info = np.iinfo(target)
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                return f"{_first_bad(arr, bad)}, not an integer"
            # float(info.max) rounds up to 2**(bits-1): compare with that bound.
            bad = (arr < float(info.min)) | (arr >= float(info.max) + 1.0)
        else:
            bad = (arr < info.min) | (arr > info.max)
        if bad.any():
            return f"{_first_bad(arr, bad)}, out of range for {sig.element_text}"
        return None
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        with np.errstate(over="ignore"):
            bad = finite & ~np.isfinite(arr.astype(target))
        if bad.any():
            return f"{_first_bad(arr, bad)}, out of range for {sig.element_text}"
    return None


def check_array(sig: InputSignature, arr: np.ndarray, path: str) -> np.ndarray:
    """`arr` checked against `sig` and cast to its dtype (InputError if it does not fit)."""

    def fail(problem: str) -> InputError:
        return InputError([f"{path}: error: input '{sig.name}' expects {sig.describe()}; "
                           f"got {problem}"])

    kind = arr.dtype.kind
    if kind not in _NUMERIC_KINDS:
        raise fail(f"an array of {_KIND_NAMES.get(kind, str(arr.dtype))}")
    if arr.ndim == 0:
        raise fail("a 0-d array (a single value)")
    shaped = _check_shape(sig, arr, csv=not path.endswith(".npy"))
    if shaped is None:
        raise fail(f"an array of shape {_shape_text(arr.shape)}")
    problem = _value_problem(sig, shaped)
    if problem is not None:
        raise fail(problem)
    return shaped.astype(sig.dtype)


def load_inputs(specs: Sequence[str], sigs: Sequence[InputSignature],
                entry: str) -> dict[str, np.ndarray]:
    """Read and check every `--input`; unknown names are a usage error.

    Returns only the inputs given (the caller decides about missing ones)."""
    given = parse_input_specs(specs)
    by_name = {s.name: s for s in sigs}
    for name in given:
        if name not in by_name:
            have = ", ".join(f"'{s.name}'" for s in sigs) or "none"
            raise UsageError(f"--input: {entry} has no input '{name}' (inputs: {have})")
    return {name: check_array(by_name[name], read_array(path, name), path)
            for name, path in given.items()}


def require_all(sigs: Sequence[InputSignature], inputs: dict[str, np.ndarray],
                entry: str) -> None:
    """A usage error naming the inputs of `entry` that no `--input` gives."""
    missing = [s for s in sigs if s.name not in inputs]
    if missing:
        need = "; ".join(f"{s.name}: {s.describe()}" for s in missing)
        raise UsageError(f"missing --input for {entry}: {need}")
