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

Example::

    ila = Ila("toy", inputs={"wr": 1, "addr": 32, "data": 128})
    ila.reg("r", 8)
    ila.instr("SET_R", lambda o, i, s: o.and_(o.eq(i["wr"], 1), o.eq(i["addr"], 0x10)),
              lambda s, i: s.set("r", i["data"]))
    ila.step({"wr": 1, "addr": 0x10, "data": 5}); assert ila.state.regs["r"] == 5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class IlaError(Exception):
    """A command outside the interface, or an ill-formed fragment.

    `op`, when set, is the IR operation at fault (tools report the error at its location)."""

    def __init__(self, message: str, op: Any = None):
        super().__init__(message)
        self.op = op


class PyOps:
    """Concrete bit-vector vocabulary over Python ints and bools."""

    @staticmethod
    def eq(a, b):
        return a == b

    @staticmethod
    def ule(a, b):
        return a <= b

    @staticmethod
    def ult(a, b):
        return a < b

    @staticmethod
    def and_(*xs):
        return all(xs)

    @staticmethod
    def or_(*xs):
        return any(xs)

    @staticmethod
    def not_(x):
        return not x

    @staticmethod
    def extract(x, hi, lo):
        return (x >> lo) & ((1 << (hi - lo + 1)) - 1)


class Z3Ops:
    """Symbolic vocabulary: the same decode functions build z3 terms."""

    def __init__(self):
        import z3

        self.z3 = z3

    def _c(self, a, b):
        z3 = self.z3
        if isinstance(a, int) and not isinstance(b, int):
            a = z3.BitVecVal(a, b.size())
        if isinstance(b, int) and not isinstance(a, int):
            b = z3.BitVecVal(b, a.size())
        return a, b

    def eq(self, a, b):
        a, b = self._c(a, b)
        return a == b

    def ule(self, a, b):
        a, b = self._c(a, b)
        return self.z3.ULE(a, b)

    def ult(self, a, b):
        a, b = self._c(a, b)
        return self.z3.ULT(a, b)

    def and_(self, *xs):
        return self.z3.And(*xs)

    def or_(self, *xs):
        return self.z3.Or(*xs)

    def not_(self, x):
        return self.z3.Not(x)

    def extract(self, x, hi, lo):
        return self.z3.Extract(hi, lo, x)


@dataclass
class State:
    """Architectural state: fixed-width registers and byte/element memories."""

    widths: dict[str, int] = field(default_factory=dict)
    regs: dict[str, int] = field(default_factory=dict)
    mems: dict[str, np.ndarray] = field(default_factory=dict)

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


Decode = Callable[[Any, Mapping[str, Any], Any], Any]
Update = Callable[[State, Mapping[str, int]], None]


@dataclass
class Instruction:
    """One ILA instruction: `decode(ops, inputs, state) -> bool`, `update(state, inputs)`."""

    name: str
    decode: Decode
    update: Update
    # optional symbolic update: (z3 state dict, z3 inputs) -> {state name: new z3 value}
    z3_update: Callable[[dict, Mapping[str, Any]], dict] | None = None


class _SymState:
    """Registers as z3 bit-vectors, for rendering decodes that read state."""

    def __init__(self, state: State, z3):
        self.regs = {n: z3.BitVec(n, w) for n, w in state.widths.items()}

    def get(self, name: str):
        return self.regs[name]


class Ila:
    """An accelerator ILA: inputs, state, a valid predicate and instructions."""

    def __init__(self, name: str, inputs: Mapping[str, int]):
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

    def mem(self, name: str, size: int, dtype=np.uint8) -> None:
        self.state.mems[name] = np.zeros(size, dtype=dtype)

    def instr(self, name: str, decode: Decode, update: Update, z3_update=None) -> Instruction:
        ins = Instruction(name, decode, update, z3_update)
        self.instructions.append(ins)
        return ins

    # -- simulation -------------------------------------------------------
    def step(self, inputs: Mapping[str, int]) -> str | None:
        """Execute one command; return the decoded instruction's name (or None)."""
        if not self.valid(PyOps, inputs, self.state):
            raise IlaError(f"{self.name}: command outside the interface: {dict(inputs)}")
        hit = [ins for ins in self.instructions if ins.decode(PyOps, inputs, self.state)]
        if len(hit) > 1:
            raise IlaError(f"{self.name}: ambiguous decode: {[h.name for h in hit]}")
        if not hit:
            return None
        hit[0].update(self.state, inputs)
        self.trace.append(hit[0].name)
        return hit[0].name

    def run(self, commands: Iterable[Mapping[str, int]]) -> None:
        for c in commands:
            self.step(c)

    # -- z3 rendering -----------------------------------------------------
    def z3_inputs(self):
        import z3

        return {n: z3.BitVec(n, w) for n, w in self.inputs.items()}

    def z3_decodes(self) -> dict[str, Any]:
        """Instruction name -> z3 formula `valid & decode` over symbolic inputs and state."""
        import z3

        ops, inp = Z3Ops(), self.z3_inputs()
        st = _SymState(self.state, z3)
        valid = self.valid(ops, inp, st)
        valid = z3.BoolVal(True) if valid is True else valid
        return {ins.name: z3.And(valid, ins.decode(ops, inp, st)) for ins in self.instructions}

    def z3_state(self) -> dict:
        """Registers as bit-vectors and memories as arrays (bit-vector index -> byte/element)."""
        import z3

        st = {n: z3.BitVec(n, w) for n, w in self.state.widths.items()}
        for n, m in self.state.mems.items():
            bits = max(1, int(m.size - 1).bit_length())
            st[n] = z3.Array(n, z3.BitVecSort(bits), z3.BitVecSort(8 * m.itemsize))
        return st

    def z3_next_state(self, name: str, state: dict | None = None, inputs: dict | None = None) -> dict:
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
