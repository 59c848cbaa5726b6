"""`convert-sync-to-std`: reactive SSA to plain func/scf/arith/tensor.

Two targets:

- `target=step-functions` (default; non-modular, for IREE): each flat
  `sync.node @n` (no `sync.inst`: run `lus-inline-instances` first) becomes

  ```text
  func.func @n_reset() -> (S...)                       // the initial state
  func.func @n_step(%s: S..., %x: I...) -> (S..., O...)  // one tick
  func.func @n_run(%s: S..., %x: tensor<?xI>...)        // N ticks in one call
      -> (S..., tensor<?xO>...)                          // (see sync_run.py)
  ```

  where S are the main loop's carried values, I the inputs and O the outputs.
  `sync.input` becomes a function argument, `sync.output` a returned value,
  `sync.tick`/`sync.sync` disappear, `sync.select` is `arith.select` and
  `sync.undef` a zero of its type (never observed by a correct program).

- `target=modular`: each node becomes `func.func @n(%inst: i32)` that runs
  its main loop forever and talks to a runtime, as in the seed:
  `sync.input`/`sync.output` are `@sch_input_T(%inst, %pos)` /
  `@sch_output_T(%inst, %pos, %v)`; `sync.inst @f k (args)` is
  `@sch_set_instance(%k, %fid)` once on entry (fid: the callee's position in
  the module), `@sch_set_io_T(%k, %pos, %arg)` per argument, `@inst(%k)`,
  and `@sch_get_io_T(%k, %pos)` per result; `sync.tick` is `@tick()`.
  The runtime functions are declared `func.func private` (T is mangled from
  the type: `i32`, `f32`, `tensor_4x8xf32`).

Example (`target=step-functions`, the integrator after convert-lus-to-sync):

```mlir
func.func @integr_reset() -> i32 {
  %c0 = arith.constant 0 : i32
  func.return %c0 : i32
}
func.func @integr_step(%s : i32, %i : i32) -> (i32, i32) {
  %incr = arith.addi %s, %i : i32
  func.return %incr, %incr : i32, i32
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from steplus.dialects import sync
from steplus.lowering.arith_guards import guard_integer_arithmetic
from steplus.lowering.sync_run import run_function
from steplus.utils.diagnostics import OpDiagnosticError

I32 = IntegerType(32)


def zero_of(t: Attribute, op_for_errors: Operation) -> Operation:
    """An op producing a zero of type `t` (the value given to `sync.undef`)."""
    if isinstance(t, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, t))
    if isinstance(t, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, t))
    if isinstance(t, TensorType):
        elem = t.get_element_type()
        zero = 0.0 if isinstance(elem, AnyFloat) else 0
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [zero]))
    raise OpDiagnosticError(op_for_errors, f"convert-sync-to-std: no zero value for type {t}")


def mangle(t: Attribute) -> str:
    """`i32` -> `i32`, `tensor<4x8xf32>` -> `tensor_4x8xf32`."""
    if isinstance(t, TensorType):
        dims = "".join(f"{d if d >= 0 else 'd'}x" for d in t.get_shape())
        return f"tensor_{dims}{mangle(t.get_element_type())}"
    return str(t).replace("!", "").replace("<", "_").replace(">", "").replace(" ", "")


def _main_loop(node: sync.NodeOp) -> scf.WhileOp:
    loops = [op for op in node.body.block.ops if isinstance(op, scf.WhileOp)]
    if len(loops) != 1:
        raise OpDiagnosticError(
            node, "convert-sync-to-std: a sync.node needs exactly one scf.while main loop "
            "in its entry block (as produced by convert-lus-to-sync)"
        )
    return loops[0]


def _rewrite_pure(op: Operation) -> bool:
    """sync.sync -> its values, sync.undef -> a zero, sync.select -> arith.select
    (the same in both targets). True if `op` was one of them."""
    if isinstance(op, sync.SyncOp):
        Rewriter.replace_op(op, [], list(op.operands[1:]))
    elif isinstance(op, sync.UndefOp):
        _replace(op, zero_of(op.result.type, op))
    elif isinstance(op, sync.SelectOp):
        _replace(op, arith.SelectOp(op.cond, op.on_true, op.on_false))
    else:
        return False
    return True


def _rewrite_sync_ops(block: Block, inputs: dict, outputs: list, node: sync.NodeOp) -> None:
    """Replace sync ops in a cloned loop body by their step-function meaning."""
    for op in list(block.walk()):
        if isinstance(op, sync.InputOp):
            Rewriter.replace_op(op, [], [inputs[op.signal]])
        elif isinstance(op, sync.OutputOp):
            if op.parent_block() is not block:
                raise OpDiagnosticError(op, "convert-sync-to-std: sync.output must be in the "
                                            "main loop body, not nested")
            outputs.append((op.signal, op.value))
            Rewriter.replace_op(op, [], [_token(op)])
        elif isinstance(op, sync.TickOp):
            Rewriter.replace_op(op, [], [_token(op)])
        elif _rewrite_pure(op):
            pass
        elif isinstance(op, sync.InstOp):
            raise OpDiagnosticError(
                op, "convert-sync-to-std{target=step-functions}: sync.inst is not supported "
                "(non-modular target); run lus-inline-instances before convert-lus-to-sync"
            )


def _token(before: Operation) -> SSAValue:
    c = arith.ConstantOp(IntegerAttr(0, I32))
    Rewriter.insert_op(c, InsertPoint.before(before))
    return c.result


def _replace(op: Operation, new: Operation) -> None:
    for r, n in zip(op.results, new.results):
        n.name_hint = r.name_hint
    Rewriter.replace_op(op, new)


def step_functions(node: sync.NodeOp) -> list[func.FuncOp]:
    """`@n_reset` and `@n_step` for one flat sync node."""
    name = node.sym_name.data
    loop = _main_loop(node)
    entry = node.body.block
    n_in = node.num_inputs
    in_sigs = entry.args[:n_in]
    prelude = [op for op in entry.ops if op is not loop and not isinstance(op, sync.HaltOp)]
    if loop.next_op is not None and not isinstance(loop.next_op, sync.HaltOp):
        raise OpDiagnosticError(loop.next_op, "convert-sync-to-std: nothing may follow the main loop")
    for op in prelude:
        if isinstance(op, sync.InputOp | sync.OutputOp | sync.TickOp | sync.InstOp):
            raise OpDiagnosticError(op, f"convert-sync-to-std: {op.name} before the main loop "
                                        "is not supported")
    body = loop.after_region.block
    for op in body.walk():
        if isinstance(op, sync.InstOp):
            raise OpDiagnosticError(
                op, "convert-sync-to-std{target=step-functions}: sync.inst is not supported "
                "(non-modular target); run lus-inline-instances before convert-lus-to-sync"
            )
        if isinstance(op, sync.OutputOp) and op.parent_block() is not body:
            raise OpDiagnosticError(op, "convert-sync-to-std: sync.output must be in the "
                                        "main loop body, not nested")
    state_types = [v.type for v in loop.arguments]
    in_types = [s.type.element for s in in_sigs]

    # reset: the prelude, returning the loop's initial values.
    reset_block = Block()
    mapper: dict[SSAValue, SSAValue] = {}
    for op in prelude:
        reset_block.add_op(op.clone(value_mapper=mapper))
    reset_block.add_op(func.ReturnOp(*[mapper.get(v, v) for v in loop.arguments]))
    _rewrite_sync_ops(reset_block, {}, [], node)

    # step: the prelude again (constants it defines), then the loop body.
    step_block = Block(arg_types=[*state_types, *in_types])
    mapper = {}
    for op in prelude:
        step_block.add_op(op.clone(value_mapper=mapper))
    for barg, sarg in zip(body.args, step_block.args):
        sarg.name_hint = barg.name_hint
        mapper[barg] = sarg
    inputs: dict[SSAValue, SSAValue] = {}
    for sig, arg in zip(in_sigs, step_block.args[len(state_types):]):
        arg.name_hint = sig.name_hint
        inputs[sig] = arg
    for op in body.ops:
        if isinstance(op, scf.YieldOp):
            next_state = [mapper.get(v, v) for v in op.operands]
            break
        step_block.add_op(op.clone(value_mapper=mapper))
    else:  # pragma: no cover - scf.while bodies end with scf.yield
        raise AssertionError("while body without scf.yield")
    provisional = func.ReturnOp(*next_state)
    step_block.add_op(provisional)
    outputs: list[tuple[SSAValue, SSAValue]] = []
    _rewrite_sync_ops(step_block, inputs, outputs, node)
    next_state = list(provisional.operands)
    Rewriter.erase_op(provisional)
    order = {sig: k for k, sig in enumerate(entry.args[n_in:])}
    outputs.sort(key=lambda so: order[so[0]])
    if len(outputs) != len(order):
        raise OpDiagnosticError(node, "convert-sync-to-std: every output must be written "
                                      "exactly once per tick")
    out_values = [v for _, v in outputs]
    step_block.add_op(func.ReturnOp(*next_state, *out_values))
    reset = func.FuncOp(f"{name}_reset", ([], state_types), Region(reset_block))
    step = func.FuncOp(
        f"{name}_step",
        ([*state_types, *in_types], [*state_types, *[v.type for v in out_values]]),
        Region(step_block),
    )
    region_dce(reset.body)
    region_dce(step.body)
    for f in (reset, step):  # defined division and int() on IREE (arith_guards.py), @n_run too
        guard_integer_arithmetic(f.body)
    run = run_function(step, len(state_types), name)
    return [reset, step] if run is None else [reset, step, run]


@dataclass
class _Modular:
    module: ModuleOp
    declared: dict[str, func.FuncOp]

    def call(self, block: Block, before: Operation, name: str, args: list[SSAValue],
             results: list[Attribute]) -> func.CallOp:
        if name not in self.declared:
            self.declared[name] = func.FuncOp.external(name, [a.type for a in args], results)
        call = func.CallOp(name, args, results)
        Rewriter.insert_op(call, InsertPoint.before(before))
        return call

    def const(self, block: Block, before: Operation, value: int) -> SSAValue:
        c = arith.ConstantOp(IntegerAttr(value, I32))
        Rewriter.insert_op(c, InsertPoint.before(before))
        return c.result

    def lower(self, node: sync.NodeOp, fids: dict[str, int]) -> func.FuncOp:
        region = node.detach_region(node.body)
        entry = region.block
        n_in = node.num_inputs
        sigs = list(entry.args)
        inst = entry.insert_arg(I32, 0)
        inst.name_hint = "inst"
        first = entry.first_op
        assert first is not None
        seen: set[int] = set()
        for op in list(entry.walk()):
            if isinstance(op, sync.InstOp) and op.id.value.data not in seen:
                seen.add(op.id.value.data)
                callee = op.callee.root_reference.data
                if callee not in fids:
                    raise OpDiagnosticError(op, f"convert-sync-to-std: no sync.node @{callee}")
                self.call(entry, first, "sch_set_instance",
                          [self.const(entry, first, op.id.value.data),
                           self.const(entry, first, fids[callee])], [])
        for op in list(entry.walk()):
            block = op.parent_block()
            assert block is not None
            if isinstance(op, sync.InputOp):
                pos = self.const(block, op, sigs.index(op.signal))
                t = op.result.type
                call = self.call(block, op, f"sch_input_{mangle(t)}", [inst, pos], [t])
                _forward(op, call)
            elif isinstance(op, sync.OutputOp):
                pos = self.const(block, op, sigs.index(op.signal) - n_in)
                self.call(block, op, f"sch_output_{mangle(op.value.type)}", [inst, pos, op.value], [])
                Rewriter.replace_op(op, [], [self.const(block, op, 0)])
            elif isinstance(op, sync.InstOp):
                k = self.const(block, op, op.id.value.data)
                for p, a in enumerate(op.operands):
                    self.call(block, op, f"sch_set_io_{mangle(a.type)}",
                              [k, self.const(block, op, p), a], [])
                self.call(block, op, "inst", [k], [])
                values = []
                for p, r in enumerate(op.res):
                    pos = self.const(block, op, len(op.operands) + p)
                    values.append(self.call(block, op, f"sch_get_io_{mangle(r.type)}",
                                            [k, pos], [r.type]).res[0])
                Rewriter.replace_op(op, [], values)
            elif isinstance(op, sync.TickOp):
                self.call(block, op, "tick", [], [])
                Rewriter.replace_op(op, [], [self.const(block, op, 0)])
            elif _rewrite_pure(op):
                pass
            elif isinstance(op, sync.HaltOp):
                _replace(op, func.ReturnOp())
        for sig in sigs:
            if sig.uses:
                raise OpDiagnosticError(node, "convert-sync-to-std: a signal is used by an op "
                                              "other than sync.input/sync.output")
            entry.erase_arg(sig)
        lowered = func.FuncOp(node.sym_name.data, ([I32], []), region)
        region_dce(lowered.body)
        return lowered


def _forward(op: Operation, call: func.CallOp) -> None:
    for r, n in zip(op.results, call.res):
        n.name_hint = r.name_hint
    Rewriter.replace_op(op, [], list(call.res))


@dataclass(frozen=True)
class ConvertSyncToStdPass(ModulePass):
    """Lower sync nodes to func/scf/arith/tensor (step functions or modular).

    Example: `step-opt -p 'convert-lus-to-sync,convert-sync-to-std'
    examples/lus/integrator.mlir` gives `func.func @integr_reset() -> i32`,
    `func.func @integr_step(%s: i32, %i: i32) -> (i32, i32)` and the batch of
    ticks `func.func @integr_run(%s: i32, %i: tensor<?xi32>) -> (i32,
    tensor<?xi32>)` (see `steplus.lowering.sync_run`);
    `convert-sync-to-std{target=modular}` gives `func.func @integr(%inst: i32)`
    calling `@sch_input_i32`, `@sch_output_i32` and `@tick`.
    """

    name = "convert-sync-to-std"
    target: str = "step-functions"
    """`step-functions`: reset/step/run functions per flat node (for IREE); `modular`: one function per node calling the scheduler runtime.
    One of: step-functions, modular."""

    def __post_init__(self) -> None:
        if self.target not in ("step-functions", "modular"):
            raise ValueError(
                f"convert-sync-to-std: unknown target '{self.target}' "
                "(expected step-functions or modular)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        nodes = [n for n in op.body.block.ops if isinstance(n, sync.NodeOp)]
        if self.target == "step-functions":
            for node in nodes:
                Rewriter.insert_op(step_functions(node), InsertPoint.before(node))
                Rewriter.erase_op(node)
        else:
            fids = {n.sym_name.data: k for k, n in enumerate(nodes)}
            lowering = _Modular(op, {})
            for node in nodes:
                f = lowering.lower(node, fids)
                Rewriter.insert_op(f, InsertPoint.before(node))
                Rewriter.erase_op(node)
            Rewriter.insert_op(list(lowering.declared.values()), InsertPoint.at_end(op.body.block))
            for f in op.body.block.ops:
                if isinstance(f, func.FuncOp):
                    guard_integer_arithmetic(f.body)  # defined division and int() (arith_guards.py)
