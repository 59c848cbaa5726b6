"""Put the tick loop of every `@n_run` in one IREE dispatch.

`convert-sync-to-std` emits `@n_run` as plain MLIR: an `scf.for` over the
ticks (see `lowering/sync_run.py`). Compiled as is, IREE keeps the loop on
the host and launches the tick's dispatches at every iteration (HAL queue
operations per tick). `wrap_run_functions(module)` moves everything after the
tick count into one `flow.dispatch.region` (an IREE op, built here as an
unregistered op, printed in generic form), so the whole loop runs inside one
dispatch; scalar results leave the region as rank-0 tensors (an i1 as i8). The module is
then compiled with `--iree-llvmcpu-disable-distribution`: the loop is
sequential, it must not be split over workgroups.

Example: after wrapping, `@integr_run` reads

```text
%ticks = tensor.dim %i, %c0 : tensor<?xi32>
%r:2 = "flow.dispatch.region"(%ticks) ({
  %o = tensor.empty(%ticks) : tensor<?xi32>
  %l:2 = scf.for ... (the tick loop)
  %s = tensor.from_elements %l#0 : tensor<i32>
  "flow.return"(%s, %l#1) : (tensor<i32>, tensor<?xi32>) -> ()
}, {}) {operandSegmentSizes = array<i32: 1, 0>} : (index) -> (tensor<i32>, tensor<?xi32>)
%state = tensor.extract %r#0[] : tensor<i32>
```
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnregisteredOp,
    i32,
)
from xdsl.ir import Block, Region, SSAValue

DISPATCH_FLAGS = ("--iree-llvmcpu-disable-distribution",)
I1, I8 = IntegerType(1), IntegerType(8)


def run_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The `@<node>_run` functions of a lowered module (with a matching `_step`)."""
    funcs = {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, func.FuncOp)}
    return [f for name, f in funcs.items()
            if name.endswith("_run") and f"{name[:-4]}_step" in funcs]


def wrap_in_dispatch(run: func.FuncOp) -> None:
    """Move the loop of `run` (and what it needs) into a flow.dispatch.region."""
    block = run.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    ops = list(block.ops)
    start = next(k for k, op in enumerate(ops) if isinstance(op, tensor.EmptyOp | scf.ForOp))
    dims = [op for op in ops[:start] if isinstance(op, tensor.DimOp)]
    ticks: SSAValue = dims[0].result if dims else block.args[-1]
    inner = Block()
    for op in ops[start:-1]:
        op.detach()
        inner.add_op(op)
    results = list(ret.operands)
    region_values: list[SSAValue] = []
    result_types: list[TensorType] = []  # the region's results: every value as a tensor
    for v in results:
        if isinstance(v.type, TensorType):
            region_values.append(v)
            result_types.append(v.type)
        else:
            if v.type == I1:  # IREE stores i1 tensors as i8: leave as i8
                ext = arith.ExtUIOp(v, I8)
                inner.add_op(ext)
                v = ext.result
            scalar_type = TensorType(v.type, [])
            scalar = tensor.FromElementsOp.create(operands=[v], result_types=[scalar_type])
            inner.add_op(scalar)
            region_values.append(scalar.results[0])
            result_types.append(scalar_type)
    inner.add_op(UnregisteredOp.with_name("flow.return").create(operands=region_values))
    dynamic = [ticks for t in result_types if any(d < 0 for d in t.get_shape())]
    region_op = UnregisteredOp.with_name("flow.dispatch.region").create(
        operands=dynamic, result_types=result_types, regions=[Region(inner), Region()],
        attributes={"operandSegmentSizes": DenseArrayBase.from_list(i32, [len(dynamic), 0])})
    block.insert_op_before(region_op, ret)
    final: list[SSAValue] = []
    for v, r, t in zip(results, region_op.results, result_types):
        if isinstance(v.type, TensorType):
            final.append(r)
        else:
            extract = tensor.ExtractOp(r, [], t.get_element_type())
            block.insert_op_before(extract, ret)
            value = extract.result
            if v.type == I1:
                trunc = arith.TruncIOp(value, I1)
                block.insert_op_before(trunc, ret)
                value = trunc.result
            final.append(value)
    ret.operands = final


def wrap_run_functions(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose `@n_run` loops are each one dispatch."""
    wrapped = module.clone()
    for run in run_functions(wrapped):
        wrap_in_dispatch(run)
    return wrapped


def distinct_output_buffers(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose `@n_run` output buffers are filled with distinct values (0, 1, ...).

    For the host-loop fallback: IREE merges the identical `tensor.empty(%ticks)` of two outputs of
    one type into one buffer and, with the loop on the host, then writes both outputs into it (every
    output came back as the last one's values). A fill of a different constant keeps them apart; in a
    dispatch the buffers are distinct already, so the dispatch path does not pay for the fills."""
    copy = module.clone()
    for run in run_functions(copy):
        empties = [op for op in run.body.block.ops if isinstance(op, tensor.EmptyOp)]
        for k, empty in enumerate(empties):
            t = empty.tensor.type
            elem = t.get_element_type() if isinstance(t, TensorType) else None
            if elem is None:
                continue
            if isinstance(elem, AnyFloat):
                c = arith.ConstantOp(FloatAttr(float(k), elem))
            elif isinstance(elem, IntegerType):
                c = arith.ConstantOp(IntegerAttr(k, elem))
            else:
                continue
            fill = linalg.FillOp((c.result,), (empty.tensor,), (t,))
            run.body.block.insert_ops_after([c, fill], empty)
            for use in list(empty.tensor.uses):
                if use.operation is not fill:
                    use.operation.operands[use.index] = fill.results[0]
    return copy


def without_run_functions(module: ModuleOp) -> ModuleOp:
    """A copy of `module` without the `@n_run` functions (per-tick only)."""
    stripped = module.clone()
    for run in run_functions(stripped):
        run.detach()
        run.erase()
    return stripped
