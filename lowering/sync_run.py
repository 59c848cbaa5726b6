"""Batch-of-ticks entry points: `@n_run`, N ticks of `@n_step` in one call.

`convert-sync-to-std{target=step-functions}` emits, beside `@n_reset` and
`@n_step`, a function that runs the tick loop inside the compiled code:

```text
func.func @n_run(%s: S..., %x: tensor<?x I>...) -> (S..., tensor<?x O>...)
```

Every input stream is a tensor whose leading dimension is the tick (a
per-tick `tensor<1x4xf32>` becomes `tensor<?x1x4xf32>`), and so is every
output stream; the state goes in and comes out as in `@n_step`, so a run can
continue another.  The number of ticks is the leading size of the first
input; a node without inputs takes it as a last argument `%ticks: index`.
`i1` elements are stored as `i8` in the streams (0 or 1): IREE and numpy
agree on bytes, not on packed bits.

The body is an `scf.for` over the ticks whose iteration is a copy of
`@n_step`'s body; the outputs are written with `tensor.insert` /
`tensor.insert_slice` into `tensor.empty` buffers, so after bufferization
the loop writes the result buffers in place.  A tensor state is carried in
one flat buffer of two values (tick t reads value t mod 2 and writes value
t+1 mod 2): the loop then yields the buffer it was given, updated in place,
which IREE's bufferization requires inside a dispatch (yielding a fresh
tensor, or overwriting the state it still reads, needs a copy it refuses).  `tools/iree_run.py` wraps
the loop in one IREE dispatch region (see `dispatch_region_text`), so the
whole run is one dispatch.

Example (the integrator; `%s` the state, `%i` the input stream):

```mlir
func.func @integr_run(%s : i32, %i : tensor<?xi32>) -> (i32, tensor<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %i, %c0 : tensor<?xi32>
  %o = tensor.empty(%n) : tensor<?xi32>
  %r:2 = scf.for %t = %c0 to %n step %c1 iter_args(%st = %s, %ot = %o) -> (i32, tensor<?xi32>) {
    %x = tensor.extract %i[%t] : tensor<?xi32>
    %incr = arith.addi %st, %x : i32
    %o2 = tensor.insert %incr into %ot[%t] : tensor<?xi32>
    scf.yield %incr, %o2 : i32, tensor<?xi32>
  }
  func.return %r#0, %r#1 : i32, tensor<?xi32>
}
```
"""

from __future__ import annotations

from xdsl.dialects import arith, cf, func, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

I1 = IntegerType(1)
I8 = IntegerType(8)
I64 = IntegerType(64)
INDEX = IndexType()


def stream_type(t: Attribute) -> TensorType | None:
    """The tensor holding one value of type `t` per tick (None if unsupported)."""
    if isinstance(t, TensorType):
        shape = list(t.get_shape())
        if any(d < 0 for d in shape):
            return None
        elem = t.get_element_type()
        return TensorType(I8 if elem == I1 else elem, [DYNAMIC_INDEX, *shape])
    if isinstance(t, IntegerType | AnyFloat):
        return TensorType(I8 if t == I1 else t, [DYNAMIC_INDEX])
    return None


def _storage(t: Attribute) -> Attribute:
    """`t` with i1 elements replaced by i8."""
    if isinstance(t, TensorType):
        return TensorType(I8 if t.get_element_type() == I1 else t.get_element_type(),
                          t.get_shape())
    return I8 if t == I1 else t


def _is_bool(t: Attribute) -> bool:
    return (t.get_element_type() if isinstance(t, TensorType) else t) == I1


def _read(block: Block, stream: SSAValue, t_index: SSAValue, t: Attribute) -> SSAValue:
    """Ops reading tick `t_index` of `stream` as a value of type `t`."""
    if isinstance(t, TensorType):
        shape = list(t.get_shape())
        op: Operation = tensor.ExtractSliceOp(
            stream, [t_index, *([0] * len(shape))], [1, *shape], [1] * (len(shape) + 1),
            _storage(t))
    else:
        op = tensor.ExtractOp(stream, [t_index], _storage(t))
    block.add_op(op)
    value = op.results[0]
    if _is_bool(t):
        zero_t = _storage(t)
        zero = _zero_i8(zero_t)
        block.add_op(zero)
        cmp = arith.CmpiOp(value, zero.result, "ne")
        block.add_op(cmp)
        value = cmp.result
    return value


def _zero_i8(t: Attribute) -> arith.ConstantOp:
    if isinstance(t, TensorType):
        from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [0]))
    return arith.ConstantOp(IntegerAttr(0, I8))


def _write(block: Block, value: SSAValue, dest: SSAValue, t_index: SSAValue) -> SSAValue:
    """Ops writing `value` as tick `t_index` of stream `dest`; the new stream."""
    t = value.type
    if _is_bool(t):
        ext = arith.ExtUIOp(value, _storage(t))
        block.add_op(ext)
        value = ext.result
    if isinstance(t, TensorType):
        shape = list(t.get_shape())
        op: Operation = tensor.InsertSliceOp.get(
            value, dest, static_sizes=[1, *shape],
            static_offsets=[DYNAMIC_INDEX, *([0] * len(shape))],
            static_strides=[1] * (len(shape) + 1), offsets=[t_index])
    else:
        op = tensor.InsertOp(value, dest, [t_index])
    block.add_op(op)
    return op.results[0]


SLOTS = 2  # values of a tensor state kept in its buffer (read one, write the other)


def _slot(block: Block, t_index: SSAValue, offset: int) -> SSAValue:
    """(t_index + offset) mod SLOTS, as an index."""
    value = t_index
    if offset:
        c = arith.ConstantOp(IntegerAttr(offset, INDEX))
        add = arith.AddiOp(value, c.result)
        block.add_ops([c, add])
        value = add.result
    m = arith.ConstantOp(IntegerAttr(SLOTS, INDEX))
    rem = arith.RemUIOp(value, m.result)
    block.add_ops([m, rem])
    return rem.result


def _numel(t: TensorType) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    return n


def _history_type(t: TensorType) -> TensorType:
    """One flat tensor holding SLOTS values of the tensor state `t`."""
    return TensorType(t.get_element_type(), [SLOTS * _numel(t)])


def _reassociation(t: TensorType) -> ArrayAttr:
    """All dims of `t` in one group (none for a rank-0 tensor)."""
    rank = len(t.get_shape())
    return ArrayAttr([ArrayAttr([IntegerAttr(k, 64) for k in range(rank)])] if rank else [])


def _offset(block: Block, slot: SSAValue, t: TensorType) -> SSAValue:
    c = arith.ConstantOp(IntegerAttr(_numel(t), INDEX))
    mul = arith.MuliOp(slot, c.result)
    block.add_ops([c, mul])
    return mul.result


def _get_slot(block: Block, buf: SSAValue, slot: SSAValue, t: TensorType) -> SSAValue:
    flat = TensorType(t.get_element_type(), [_numel(t)])
    op = tensor.ExtractSliceOp(buf, [_offset(block, slot, t)], [_numel(t)], [1], flat)
    block.add_op(op)
    if len(t.get_shape()) == 1:
        return op.results[0]
    exp = tensor.ExpandShapeOp(op.results[0], [], _reassociation(t), list(t.get_shape()), t)
    block.add_op(exp)
    return exp.result


def _set_slot(block: Block, value: SSAValue, buf: SSAValue, slot: SSAValue) -> SSAValue:
    t = value.type
    flat = TensorType(t.get_element_type(), [_numel(t)])
    if len(t.get_shape()) != 1:
        col = tensor.CollapseShapeOp.build(
            operands=[value], result_types=[flat],
            properties={"reassociation": _reassociation(t)})
        block.add_op(col)
        value = col.results[0]
    op = tensor.InsertSliceOp.get(
        value, buf, static_sizes=[_numel(t)], static_offsets=[DYNAMIC_INDEX],
        static_strides=[1], offsets=[_offset(block, slot, t)])
    block.add_op(op)
    return op.results[0]


def run_function(step: func.FuncOp, n_state: int, name: str) -> func.FuncOp | None:
    """`@<name>_run` looping `step` (state first, then inputs) over the ticks;
    None when a value type has no stream form (dynamic shapes, index)."""
    ftype = step.function_type
    state_types = list(ftype.inputs.data[:n_state])
    in_types = list(ftype.inputs.data[n_state:])
    out_types = list(ftype.outputs.data[n_state:])
    in_streams = [stream_type(t) for t in in_types]
    out_streams = [stream_type(t) for t in out_types]
    if any(s is None for s in [*in_streams, *out_streams]) or any(
            isinstance(t, TensorType) and any(d < 0 for d in t.get_shape()) for t in state_types):
        return None
    arg_types = [*state_types, *in_streams]
    if not in_types:
        arg_types.append(INDEX)
    block = Block(arg_types=arg_types)
    for barg, sarg in zip(step.body.block.args, block.args):
        sarg.name_hint = barg.name_hint
    if not in_types:
        block.args[-1].name_hint = "ticks"
    c0 = arith.ConstantOp(IntegerAttr(0, INDEX))
    c1 = arith.ConstantOp(IntegerAttr(1, INDEX))
    block.add_ops([c0, c1])
    if in_types:
        dim = tensor.DimOp(block.args[n_state], c0.result)
        block.add_op(dim)
        n = dim.result
    else:
        n = block.args[-1]
    n.name_hint = "ticks"
    empties = [tensor.EmptyOp([n], s) for s in out_streams]
    block.add_ops(empties)

    # a tensor state is carried in a buffer of SLOTS values (tick t reads slot
    # t mod SLOTS, writes slot t+1 mod SLOTS), so that the loop's yield is the
    # buffer it was given, updated in place: IREE requires it in a dispatch.
    carried_types = [_history_type(t) if isinstance(t, TensorType) else t
                     for t in state_types]
    carried_init = []
    c_zero = c0.result
    for k, t in enumerate(state_types):
        if isinstance(t, TensorType):
            empty = tensor.EmptyOp([], carried_types[k])
            block.add_op(empty)
            carried_init.append(_set_slot(block, block.args[k], empty.tensor, c_zero))
        else:
            carried_init.append(block.args[k])

    body = Block(arg_types=[INDEX, *carried_types, *out_streams])
    t_index = body.args[0]
    t_index.name_hint = "t"
    mapper: dict[SSAValue, SSAValue] = {}
    read_slot = write_slot = None
    if any(isinstance(t, TensorType) for t in state_types):
        read_slot, write_slot = _slot(body, t_index, 0), _slot(body, t_index, 1)
    for k, carg in enumerate(body.args[1:1 + n_state]):
        carg.name_hint = step.body.block.args[k].name_hint
        if isinstance(state_types[k], TensorType):
            mapper[step.body.block.args[k]] = _get_slot(body, carg, read_slot, state_types[k])
        else:
            mapper[step.body.block.args[k]] = carg
    for k, t in enumerate(in_types):
        mapper[step.body.block.args[n_state + k]] = _read(
            body, block.args[n_state + k], t_index, t)
    ret = step.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    checks: list[SSAValue] = []
    for op in step.body.block.ops:
        if op is ret:
            break
        if isinstance(op, cf.AssertOp):  # IREE drops an assert inside a dispatch: data instead
            checks.append(mapper.get(op.arg, op.arg))
            continue
        body.add_op(op.clone(value_mapper=mapper))
    results = [mapper.get(v, v) for v in ret.operands]
    streams = [_write(body, v, dest, t_index)
               for v, dest in zip(results[n_state:], body.args[1 + n_state:])]
    state = [_set_slot(body, v, carg, write_slot) if isinstance(v.type, TensorType) else v
             for v, carg in zip(results[:n_state], body.args[1:1 + n_state])]
    failed: list[SSAValue] = []
    init_failed: list[SSAValue] = []
    if checks:
        first = body.insert_arg(I64, len(body.args))
        first.name_hint = "failed"
        failed = [_first_failure(body, checks, t_index, first)]
        none = arith.ConstantOp(IntegerAttr(NO_FAILURE, I64))
        block.add_op(none)
        init_failed = [none.result]
    body.add_op(scf.YieldOp(*state, *streams, *failed))
    loop = scf.ForOp(c0.result, n, c1.result,
                     [*carried_init, *(e.tensor for e in empties), *init_failed], Region(body))
    block.add_op(loop)
    final = list(loop.results)
    if checks:  # NO_FAILURE (a min's identity) is returned as -1
        none_result = arith.ConstantOp(IntegerAttr(NO_FAILURE, I64))
        minus1 = arith.ConstantOp(IntegerAttr(-1, I64))
        is_none = arith.CmpiOp(final[-1], none_result.result, "eq")
        first_failed = arith.SelectOp(is_none, minus1.result, final[-1])
        block.add_ops([none_result, minus1, is_none, first_failed])
        final[-1] = first_failed.result
    if read_slot is not None:
        last = _slot(block, n, 0)
        final = [_get_slot(block, v, last, t) if isinstance(t, TensorType) else v
                 for v, t in zip(final[:n_state], state_types)] + final[n_state:]
    block.add_op(func.ReturnOp(*final))
    return func.FuncOp(f"{name}_run", (arg_types, [*state_types, *out_streams, *([I64] if checks else [])]),
                       Region(block))


NO_FAILURE = 2**63 - 1
"""The first failing tick before any failed: the identity of the min that finds it."""


def _first_failure(body: Block, checks: list[SSAValue], t_index: SSAValue, first: SSAValue) -> SSAValue:
    """The first tick whose run-time checks (`cf.assert` conditions) failed, or NO_FAILURE:
    min(`first`, this tick if a check failed) — a min reduction, which LLVM vectorizes (the
    checks' messages are the step function's; the driver re-runs that tick with `@n_step`)."""
    ok = checks[0]
    for c in checks[1:]:
        both = arith.AndIOp(ok, c)
        body.add_op(both)
        ok = both.result
    none = arith.ConstantOp(IntegerAttr(NO_FAILURE, I64))
    t64 = arith.IndexCastOp(t_index, I64)
    here = arith.SelectOp(ok, none.result, t64.result)
    update = arith.MinSIOp(first, here.result)
    body.add_ops([none, t64, here, update])
    return update.result
