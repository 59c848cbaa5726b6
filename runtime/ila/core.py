"""ILA modelling core: architectural state, instructions, a simulator, z3 terms.

An *instruction-level abstraction* (ILA) of an accelerator is its architectural
state (bit-vector registers and memories), the inputs of one interface command,
and a list of instructions.  Each instruction has a *decode* condition over the
command and the state and an *update* that changes the state.  At most one
instruction decodes per command; a valid command that decodes nothing is a
no-op.  Multi-cycle operations (child ILAs) run to quiescence inside the update
of their trigger instruction, which leaves every observable result unchanged.

Decode conditions are written once against a small bit-vector vocabulary
(`ops.eq`, `ops.ule`, `ops.and_`, ...).  `PyOps` evaluates them on Python ints;
`Z3Ops` builds z3 terms, so the same model renders to SMT (`Ila.z3_decodes`) and
`Ila.check_decode_exclusive()` proves that no two instructions decode the same
command.  Instructions may also carry a symbolic update (`z3_update`); then
`Ila.z3_next_state(name)` gives the next state as z3 terms (registers as
bit-vectors, memories as arrays) — FlexASR's configuration writes and buffer
stores/loads have one; child-ILA triggers run only concretely.

Types: the vocabulary is the `BvOps` protocol over `Bv` values (an int under
`PyOps`, a `z3.BitVecRef` under `Z3Ops`) and `Cond` conditions (bool or
`z3.BoolRef`); a decode reads the state through `StateView`; a `Command` maps
input names to ints.

Example::

    ila = Ila("toy", inputs={"wr": 1, "addr": 32, "data": 128})
    ila.reg("r", 8)
    ila.instr("SET_R", lambda o, i, s: o.and_(o.eq(i["wr"], 1), o.eq(i["addr"], 0x10)),
              lambda s, i: s.set("r", i["data"]))
    ila.step({"wr": 1, "addr": 0x10, "data": 5}); assert ila.state.regs["r"] == 5
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import z3
    from xdsl.ir import Operation

# A bit-vector value as decode conditions see it: a Python int under `PyOps`,
# a z3 term under `Z3Ops`; a condition is a bool or a z3 formula.
Bv: TypeAlias = "int | z3.BitVecRef"
Cond: TypeAlias = "bool | z3.BoolRef"
# An interface command: input name -> value (`Ila.inputs` gives the widths).
Command: TypeAlias = Mapping[str, int]


# Set to 1 to run every accelerator function command by command on its ILA simulator (the
# reference) instead of the vectorized datapaths (`reference_mode`).
REFERENCE_ENV = "STEPLUS_ILA_REFERENCE"


def reference_mode(reference: bool | None = None) -> bool:
    """Whether a driver runs its fragment command by command on the ILA simulator (the reference):
    `reference` when given, else the `STEPLUS_ILA_REFERENCE` environment variable (set and not 0).
    Otherwise the drivers compute the same raw outputs (codes, int lanes) and command counts on
    whole tensors; they fall back to the commands for any fragment outside the shapes they model."""
    if reference is not None:
        return reference
    return os.environ.get(REFERENCE_ENV, "0") not in ("", "0")


class IlaError(Exception):
    """A command outside the interface, or an ill-formed fragment.

    `op`, when set, is the IR operation at fault (tools report the error at its location)."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


class BvOps(Protocol):
    """The bit-vector vocabulary decode conditions are written in (`PyOps` or a `Z3Ops`)."""

    def eq(self, a: Bv, b: Bv) -> Cond: ...
    def ule(self, a: Bv, b: Bv) -> Cond: ...
    def ult(self, a: Bv, b: Bv) -> Cond: ...
    def and_(self, *xs: Cond) -> Cond: ...
    def or_(self, *xs: Cond) -> Cond: ...
    def not_(self, x: Cond) -> Cond: ...
    def extract(self, x: Bv, hi: int, lo: int) -> Bv: ...


class StateView(Protocol):
    """What a decode condition may read of the state: registers by name (`State` or `_SymState`)."""

    def get(self, name: str) -> Bv: ...


class PyOps:
    """Concrete bit-vector vocabulary over Python ints and bools (the `Bv` values are ints here)."""

    @staticmethod
    def eq(a: Bv, b: Bv) -> Cond:
        return a == b

    @staticmethod
    def ule(a: Bv, b: Bv) -> Cond:
        return a <= b

    @staticmethod
    def ult(a: Bv, b: Bv) -> Cond:
        return a < b

    @staticmethod
    def and_(*xs: Cond) -> Cond:
        return all(xs)

    @staticmethod
    def or_(*xs: Cond) -> Cond:
        return any(xs)

    @staticmethod
    def not_(x: Cond) -> Cond:
        return not bool(x)

    @staticmethod
    def extract(x: Bv, hi: int, lo: int) -> Bv:
        return (x >> lo) & ((1 << (hi - lo + 1)) - 1)


class Z3Ops:
    """Symbolic vocabulary: the same decode functions build z3 terms."""

    def __init__(self) -> None:
        import z3

        self.z3 = z3

    def _c(self, a: Bv, b: Bv) -> tuple[Bv, Bv]:
        z3 = self.z3
        if isinstance(a, int) and not isinstance(b, int):
            a = z3.BitVecVal(a, b.size())
        if isinstance(b, int) and not isinstance(a, int):
            b = z3.BitVecVal(b, a.size())
        return a, b

    def eq(self, a: Bv, b: Bv) -> Cond:
        a, b = self._c(a, b)
        return a == b

    def ule(self, a: Bv, b: Bv) -> Cond:
        a, b = self._c(a, b)
        return cast("z3.BoolRef", self.z3.ULE(a, b))

    def ult(self, a: Bv, b: Bv) -> Cond:
        a, b = self._c(a, b)
        return cast("z3.BoolRef", self.z3.ULT(a, b))

    def and_(self, *xs: Cond) -> Cond:
        return cast("z3.BoolRef", self.z3.And(*xs))

    def or_(self, *xs: Cond) -> Cond:
        return cast("z3.BoolRef", self.z3.Or(*xs))

    def not_(self, x: Cond) -> Cond:
        return cast("z3.BoolRef", self.z3.Not(x))

    def extract(self, x: Bv, hi: int, lo: int) -> Bv:
        return cast("z3.BitVecRef", self.z3.Extract(hi, lo, x))


@dataclass
class State:
    """Architectural state: fixed-width registers and byte/element memories."""

    widths: dict[str, int] = field(default_factory=dict)
    regs: dict[str, int] = field(default_factory=dict)
    mems: dict[str, npt.NDArray[Any]] = field(default_factory=dict)  # dtype per memory (uint8, int8, int32, ...)

    def set(self, name: str, value: int) -> None:
        """Write a register, keeping its low `width` bits (fields narrower than
        their command bytes silently truncate, as in the hardware)."""
        self.regs[name] = int(value) & ((1 << self.widths[name]) - 1)

    def get(self, name: str) -> int:
        return self.regs[name]

    def sget(self, name: str) -> int:
        """Read a register as a signed two's-complement value."""
        w, v = self.widths[name], self.regs[name]
        return v - (1 << w) if v >> (w - 1) else v


Decode: TypeAlias = Callable[[BvOps, Mapping[str, Bv], StateView], Cond]
Update: TypeAlias = Callable[[State, Command], None]
# symbolic state: register name -> z3 bit-vector, memory name -> z3 array
Z3State: TypeAlias = "dict[str, z3.ExprRef]"
Z3Update: TypeAlias = "Callable[[Z3State, Mapping[str, z3.BitVecRef]], Z3State]"


@dataclass
class Instruction:
    """One ILA instruction: `decode(ops, inputs, state) -> bool`, `update(state, inputs)`."""

    name: str
    decode: Decode
    update: Update
    # optional symbolic update: (z3 state dict, z3 inputs) -> {state name: new z3 value}
    z3_update: Z3Update | None = None


class _SymState:
    """Registers as z3 bit-vectors, for rendering decodes that read state."""

    def __init__(self, state: State, z3: Any) -> None:  # z3: the z3 module, imported lazily
        self.regs: dict[str, Bv] = {n: z3.BitVec(n, w) for n, w in state.widths.items()}

    def get(self, name: str) -> Bv:
        return self.regs[name]


class Ila:
    """An accelerator ILA: inputs, state, a valid predicate and instructions."""

    def __init__(self, name: str, inputs: Mapping[str, int]) -> None:
        self.name = name
        self.inputs = dict(inputs)
        self.state = State()
        self.instructions: list[Instruction] = []
        self.valid: Decode = lambda o, i, s: True
        self.log: list[tuple[str, int, Any]] = []
        self.trace: list[str] = []

    # -- building ---------------------------------------------------------
    def reg(self, name: str, width: int, init: int = 0) -> None:
        self.state.widths[name] = width
        self.state.regs[name] = init

    def mem(self, name: str, size: int, dtype: npt.DTypeLike = np.uint8) -> None:
        self.state.mems[name] = np.zeros(size, dtype=dtype)

    def instr(self, name: str, decode: Decode, update: Update, z3_update: Z3Update | None = None) -> Instruction:
        ins = Instruction(name, decode, update, z3_update)
        self.instructions.append(ins)
        return ins

    # -- simulation -------------------------------------------------------
    def step(self, inputs: Command) -> str | None:
        """Execute one command; return the decoded instruction's name (or None)."""
        if not bool(self.valid(PyOps, inputs, self.state)):
            raise IlaError(f"{self.name}: command outside the interface: {dict(inputs)}")
        hit = [ins for ins in self.instructions if bool(ins.decode(PyOps, inputs, self.state))]
        if len(hit) > 1:
            raise IlaError(f"{self.name}: ambiguous decode: {[h.name for h in hit]}")
        if not hit:
            return None
        try:
            hit[0].update(self.state, inputs)
        except (IndexError, KeyError, ValueError):  # numpy's "index ... is out of bounds"
            raise IlaError(f"{self.name}: {hit[0].name}: the sizes and addresses configured "
                           "before it reach outside the accelerator's memories") from None
        self.trace.append(hit[0].name)
        return hit[0].name

    def run(self, commands: Iterable[Command]) -> None:
        for c in commands:
            self.step(c)

    # -- z3 rendering -----------------------------------------------------
    def z3_inputs(self) -> dict[str, z3.BitVecRef]:
        import z3

        return {n: z3.BitVec(n, w) for n, w in self.inputs.items()}

    def z3_decodes(self) -> dict[str, z3.BoolRef]:
        """Instruction name -> z3 formula `valid & decode` over symbolic inputs and state."""
        import z3

        ops, inp = Z3Ops(), self.z3_inputs()
        st = _SymState(self.state, z3)
        valid = self.valid(ops, inp, st)
        valid = z3.BoolVal(True) if valid is True else valid
        return {ins.name: cast(z3.BoolRef, z3.And(valid, ins.decode(ops, inp, st))) for ins in self.instructions}

    def z3_state(self) -> Z3State:
        """Registers as bit-vectors and memories as arrays (bit-vector index -> byte/element)."""
        import z3

        st: Z3State = {n: z3.BitVec(n, w) for n, w in self.state.widths.items()}
        for n, m in self.state.mems.items():
            bits = max(1, int(m.size - 1).bit_length())
            st[n] = z3.Array(n, z3.BitVecSort(bits), z3.BitVecSort(8 * m.itemsize))
        return st

    def z3_next_state(self, name: str, state: Z3State | None = None,
                      inputs: Mapping[str, z3.BitVecRef] | None = None) -> Z3State:
        """Symbolic next state after instruction `name` (instructions with a z3 update only)."""
        ins = next(i for i in self.instructions if i.name == name)
        if ins.z3_update is None:
            raise IlaError(f"{self.name}: instruction {name} has no symbolic update (a child-ILA trigger)")
        state = dict(self.z3_state() if state is None else state)
        state.update(ins.z3_update(state, self.z3_inputs() if inputs is None else inputs))
        return state

    def check_decode_exclusive(self) -> list[tuple[str, str]]:
        """Pairs of instructions some command decodes to both (empty: proven exclusive)."""
        import z3

        decs = list(self.z3_decodes().items())
        bad = []
        for k, (na, da) in enumerate(decs):
            for nb, db in decs[k + 1:]:
                s = z3.Solver()
                s.add(da, db)
                if s.check() != z3.unsat:
                    bad.append((na, nb))
        return bad


def data_bytes(data: int) -> list[int]:
    """The 16 bytes d[0..15] of a 128-bit word, d[0] least significant."""
    return [(data >> (8 * k)) & 0xFF for k in range(16)]


def bytes_word(bs: Iterable[int]) -> int:
    """Inverse of `data_bytes`."""
    return sum(int(b) << (8 * k) for k, b in enumerate(bs))


def field_value(data: int, lo_byte: int, nbytes: int) -> int:
    """Little-endian value of bytes lo_byte .. lo_byte+nbytes-1 of a word."""
    return (data >> (8 * lo_byte)) & ((1 << (8 * nbytes)) - 1)
