"""Helpers shared by the step op verifiers (operand kinds, element types, placement).

The dims a result must have come from each op's shape rule
(`shape_rules.verify_result_shapes`), not from here."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from steplus.utils.attrs import int_of, ints_of  # noqa: F401  (the ops use them from here)
from steplus.dialects.step.types import SelectorType, TileType, StreamType

# The custom form of most step ops: `step.op %a, %b {props} : (A, B) -> R`.
FMT = "operands attr-dict `:` functional-type(operands, results)"
# The custom form of generators (no operands): `step.op {props} : R`.
GEN_FMT = "attr-dict `:` type($output)"


def stream_of(op: Operation, value: SSAValue, what: str) -> StreamType:
    """The stream type of `value`, or a verifier error naming the operand."""
    t = value.type
    if not isinstance(t, StreamType):
        raise VerifyException(f"{op.name}: {what} must be a !step.stream, got {t}")
    return t


def is_address(t: Attribute) -> bool:
    return isinstance(t, TileType) and t.is_address


def is_i1(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def selector_of(op, s: StreamType, n: int | None = None) -> SelectorType:
    """The selector element type of the stream `s` (choosing among `n`, if given)."""
    if not isinstance(s.element, SelectorType):
        raise VerifyException(f"{op.name}: sel elements must be !step.selector")
    if n is not None and s.element.choices.data != n:
        raise VerifyException(
            f"{op.name}: selector chooses among {s.element.choices.data}, expected {n}"
        )
    return s.element


@dataclass(frozen=True, init=False)
class DirectlyIn(HasParent):
    """`HasParent` (the parent matched by op class) with a message that says
    where the op must be and where it was found. A detached op is not checked.

    Example: `IN_GRAPH = DirectlyIn("a step.graph", GraphOp)` (ops/graph.py)
    rejects a `step.map` at module level or in a `func.func` with
    "step.map must be directly inside a step.graph (found in func.func)".
    """

    where: str

    def __init__(self, where: str, head: type[Operation], *tail: type[Operation]):
        super().__init__(head, *tail)
        object.__setattr__(self, "where", where)

    def verify(self, op: Operation) -> None:
        parent = op.parent_op()
        if parent is not None and not isinstance(parent, self.op_types):
            raise VerifyException(
                f"{op.name} must be directly inside {self.where} (found in {parent.name})")


def check_base_addr(op: Operation) -> None:
    """An off-chip `base_addr` is a byte address: non-negative."""
    addr = op.properties["base_addr"]
    assert isinstance(addr, IntegerAttr)  # the ops' prop_def(IntegerAttr[I64]) held
    if int_of(addr) < 0:
        raise VerifyException(f"{op.name}: base_addr must be non-negative, got {int_of(addr)}")


def check_graph(graph: Operation) -> None:
    """The rules of a `step.graph` itself: a non-empty name, at module level
    (not nested in another graph or a `lus.node`), stream arguments only."""
    name = graph.properties["sym_name"]
    if not getattr(name, "data", ""):
        raise VerifyException("step.graph: the graph name must not be empty")
    parent = graph.parent_op()
    if parent is not None and parent.name != "builtin.module":
        raise VerifyException(
            f"step.graph must be directly inside a builtin.module (found in {parent.name})")
    block = graph.regions[0].first_block
    for arg in block.args if block is not None else ():
        if not isinstance(arg.type, StreamType):
            raise VerifyException(
                f"step.graph: argument #{arg.index} must be a !step.stream, got {arg.type}")
