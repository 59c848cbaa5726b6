"""step-run for tensor programs: lower a linalg file (or recognized PyTorch layers) and run it.

    step-run examples/linalg/swiglu_ffn.mlir --lower 'tile="32x128" schedule="mn_mk"' --preset swiglu-hdl
    step-run examples/linalg/swiglu_ffn_small.mlir --lower 'tile="8x16"' \
        --input arg0=x.npy --input arg1=wg.npy --input arg2=wu.npy --input arg3=wd.npy --output y.npy

A file of `func.func`s on tensors (linalg on tensors, as torch-mlir emits
it) is not a step graph: `--lower OPTIONS` runs
`convert-linalg-to-step{OPTIONS}` first (`--lower ''` for the defaults) and
then simulates the graph like any other (`steplus.tools.step_run_graph`,
whose flags apply). Without `--lower` step-run says so. With `--input NAME=FILE`
for every argument (`%arg0` is `arg0`) the graph runs in functional mode on
them, and `--output` writes the function's results (`result0`, ...; `.npy`
for a single result). The tensor constants (torch-mlir's `dense_resource`
parameters, `dense<...>`) are loaded with their values, with `--input` and
with `--functional` (whose arguments are seeded random).

The functions below also run the parts `aten.lower_exported` builds from a
PyTorch module in the fabric's functional mode: `run_part(part, values)`
binds the part's inputs (numpy arrays by graph node name, e.g. from
`torch.fx.Interpreter`) to its loads in the part's off-chip layout and
returns its outputs by node name.

Example::

    low = lower_exported(torch.export.export(layer, args), tile_n=2, tile_f=16)
    outs = run_part(low.graphs[0], {"x": x, "w_gate": wg, ...}, routing=(idx, w))
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from steplus.dialects.step import ops as so
from steplus.dialects.step import GraphOp
from steplus.dialects.step.discardable import NAME
from steplus.dialects.step.functions import KV_TILES_PER_REQUEST
from steplus.runtime.fabric.build import build_program
from steplus.runtime.fabric.contexts import RandomStoreCtx, StoreCtx

def _stored(st: StoreCtx) -> list[np.ndarray]:
    """The tiles a store wrote, in stream order (a functional run gives each its value)."""
    tiles = [v for v in st.stored if v is not None]
    if len(tiles) != len(st.stored):
        raise ValueError(f"{st.name}: a stored tile has no value (not a functional run)")
    return tiles


def run_lowered(args, load, run_graph) -> int:
    """`step-run FILE --lower OPTIONS`: lower, specialize if asked, simulate.
    `load(args, pipeline)` parses and runs a step-opt pipeline (located errors);
    `run_graph(args, module)` is step-run's graph path."""
    from steplus.tools.cli import UsageError
    from steplus.tools.step_run_graph import specialize_pipeline

    opts = args.lower
    if any(c in opts for c in "{}\n"):
        raise UsageError(f"--lower takes convert-linalg-to-step options (tile=... schedule=... "
                         f"memory=...), got '{opts}'")
    for flag, given in (("--ticks", args.ticks is not None), ("--node", bool(args.node)),
                        ("--func", bool(args.func)), ("--backend", args.backend is not None)):
        if given:
            raise UsageError(f"{flag} does not apply with --lower: the lowered step graph "
                             "runs on the fabric simulator")
    pipeline = f"convert-linalg-to-step{{{opts}}}" if opts.strip() else "convert-linalg-to-step"
    spec = specialize_pipeline(args)
    if args.input or args.output:
        if spec is not None:
            raise UsageError("--input/--output with --lower bind the function's arguments; "
                             "they do not combine with --bind/--routing/--kv")
        module, data = _lower_with_data(args, load, pipeline)
        return run_graph(args, module, data)
    if args.functional and spec is None:  # the tensor constants' values, the rest random
        module = load(args)
        lowered = _lower(args, module, pipeline, load)
        return run_graph(args, module, _constants_data(module, lowered))
    module = load(args, pipeline if spec is None else f"{pipeline},{spec}")
    return run_graph(args, module)


def _lower(args, module: ModuleOp, pipeline: str, load):
    """`lower_module` with the pass options of `pipeline`, reading the `dense_resource`
    blobs the parse of `module` registered (the builtin dialect's blob table is the
    parse's: a fresh context reads it); on error, the pass run through `load` gives
    the located `file:line:col: error:` lines."""
    from steplus.lowering.linalg_to_step import lower_module
    from steplus.tools.cli import InputError, parse_pass_pipeline
    from steplus.tools.loading import new_context
    from steplus.tools.registry import get_all_passes
    from steplus.utils.diagnostics import OpDiagnosticError

    (opts,) = parse_pass_pipeline(get_all_passes(), pipeline).passes
    try:
        (lowered,) = lower_module(module, opts.tile, opts.schedule, opts.memory,  # type: ignore[attr-defined]
                                  ctx=new_context(args.allow_unregistered_dialect))
    except (ValueError, OpDiagnosticError) as e:
        load(args, pipeline)  # raises the located diagnostics
        raise InputError([f"{args.input_file}: error: {e}"]) from None
    return lowered


def bind_constants(module: ModuleOp, lowered) -> dict:
    """The tensors of a `convert-linalg-to-step` graph's loads of tensor constants
    (`lowered.constants`: torch-mlir's parameters), by load name; the other loads are
    left to the caller (step-run --functional: seeded random). Names the loads `ld0,
    ld1, ...`."""
    tensors = {}
    consts = getattr(lowered, "constants", {}) or {}
    for k, (op, (arg, view)) in enumerate(zip(_name_loads(_graph(module)), lowered.loads)):
        NAME.set(op, f"ld{k}")
        if arg in consts:
            tensors[f"ld{k}"] = np.asarray(consts[arg], np.float64).reshape(view)
    return tensors


def _constants_data(module: ModuleOp, lowered):
    from steplus.tools.graph_io import GraphData

    return GraphData(bind_constants(module, lowered), lambda prog: {})


def _lower_with_data(args, load, pipeline: str):
    """`--lower` with `--input ARG=FILE` (every argument of the function, by
    name: `%arg0` -> `arg0`) and `--output`: the function's results as
    `result0`, `result1`, ... in their element types, shaped as it returns them."""
    from xdsl.dialects import func

    from steplus.dialects.semantics.domain import numpy_dtype
    from steplus.tools.cli import UsageError
    from steplus.tools.graph_io import GraphData
    from steplus.tools.inputs import func_signature, load_inputs, require_all

    module = load(args)
    fns = [op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if len(fns) != 1:
        raise UsageError(f"--input/--output with --lower need one function; "
                         f"{args.input_file} has {len(fns)}")
    fn = fns[0]
    sigs = func_signature(fn)
    arrays = load_inputs(args.input, sigs, f"@{fn.sym_name.data}")
    require_all(sigs, arrays, f"@{fn.sym_name.data}")
    types = list(fn.function_type.outputs.data)
    lowered = _lower(args, module, pipeline, load)
    tensors = bind_function(module, lowered, [arrays[s.name] for s in sigs])

    def collect(prog) -> dict:

        stores = [c for c in prog.sim.contexts if isinstance(c, StoreCtx)]
        return {f"result{k}": lay.assemble(_stored(st)).reshape(shape).astype(numpy_dtype(t))
                for k, (st, lay, shape, t) in enumerate(zip(
                    stores, lowered.result_layouts, lowered.result_shapes, types))}

    return module, GraphData(tensors, collect)


def _graph(module: ModuleOp) -> GraphOp:
    return next(o for o in module.walk() if isinstance(o, GraphOp))


def _name_loads(graph: GraphOp) -> list:
    loads = [o for o in graph.body.block.ops
             if isinstance(o, so.LinearOffChipLoadOp | so.RandomOffChipLoadOp)]
    for k, op in enumerate(loads):
        NAME.set(op, op.output.name_hint or f"load{k}")
    return loads


def _bind_dense(part, values: dict) -> dict:
    return bind_function(part.module, part.lowered,
                         [values[name] for name in part.inputs.values()])


def bind_function(module: ModuleOp, lowered, arrays: list) -> dict:
    """The tensors of a `convert-linalg-to-step` graph's loads, by load name, from
    its function's arguments (numpy arrays in order) and its tensor constants
    (`lowered.constants`), each reshaped to the 2-D view its load indexes. Names
    the loads `ld0, ld1, ...`."""
    tensors = {}
    values = {**dict(enumerate(arrays)), **getattr(lowered, "constants", {})}
    for k, (op, (arg, view)) in enumerate(zip(_name_loads(_graph(module)), lowered.loads)):
        name = f"ld{k}"
        NAME.set(op, name)
        tensors[name] = np.asarray(values[arg], np.float64).reshape(view)
    return tensors


def run_function(module: ModuleOp, lowered, arrays: list, config=None) -> list[np.ndarray]:
    """Run a `convert-linalg-to-step` graph (`lower_module`'s module and its
    `Lowered`) in the fabric's functional mode on the function's arguments;
    returns its results, shaped as the function returns them."""

    module = module.clone()
    prog = build_program(_graph(module), config, functional=True,
                         tensors=bind_function(module, lowered, arrays))
    prog.run()
    stores = [c for c in prog.sim.contexts if isinstance(c, StoreCtx)]
    return [lay.assemble(_stored(st)).reshape(shape) for st, lay, shape in
            zip(stores, lowered.result_layouts, lowered.result_shapes)]


def _bind_moe(part, values: dict) -> dict:
    x = np.asarray(values[part.inputs["x"]], np.float64)
    weights = np.asarray(values["routing_weights"], np.float64)
    tensors = {"in_load": x, "w_load": weights}
    wg, wu, wd = (np.asarray(values[part.inputs[k]], np.float64)
                  for k in ("w_gate", "w_up", "w_down"))
    graph = _graph(part.module)
    loads = {op.output.name_hint: op for op in _name_loads(graph)}
    tile_f = loads["down_ld0"].output.type.element.rows.data
    nf = wg.shape[2] // tile_f
    for e in range(wg.shape[0]):
        tensors[f"up_ld{e}"] = np.vstack([wu[e][:, j * tile_f:(j + 1) * tile_f] for j in range(nf)])
        tensors[f"gate_ld{e}"] = np.vstack([wg[e][:, j * tile_f:(j + 1) * tile_f]
                                            for j in range(nf)])
        tensors[f"down_ld{e}"] = wd[e]
    return tensors


def _bind_attention(part, values: dict) -> dict:
    q = np.asarray(values[part.inputs["q"]], np.float64)
    B, Hq, _, HD = q.shape
    kc, vc = (np.asarray(values[part.inputs[k]], np.float64) for k in ("k_cache", "v_cache"))
    R = B * kc.shape[1]
    new = {k: np.asarray(values[part.inputs[k]], np.float64).reshape(R, HD)
           for k in ("k_new", "v_new")}
    pad = [(0, 0), (0, 0), (0, 32), (0, 0)]
    kc, vc = (np.pad(c, pad).reshape(R, -1, HD) for c in (kc, vc))

    def tiles(cache):
        def at(i):
            req, t = divmod(int(np.ravel(i)[0]), KV_TILES_PER_REQUEST)
            return cache[req, 32 * t:32 * t + 32]
        return at

    tensors: dict = {"load_q": q.reshape(B * Hq, HD), "load_k": new["k_new"],
                     "load_v": new["v_new"]}
    for op in _name_loads(_graph(part.module)):
        name = op.output.name_hint or ""
        if name.startswith("k_cache"):
            tensors[name] = tiles(kc)
        elif name.startswith("v_cache"):
            tensors[name] = tiles(vc)
    from steplus.lowering.linalg_to_step.attention_graph import O_BASE

    outs = [o for o in _graph(part.module).body.block.ops
            if isinstance(o, so.RandomOffChipStoreOp) and o.base_addr.value.data == O_BASE]
    for k, op in enumerate(outs):
        NAME.set(op, f"o_store{k}")
    return tensors


def run_part(part, values: dict, routing: tuple | None = None, config=None) -> dict:
    """Run a lowered part functionally; returns {output node name: array}.

    `values`: numpy arrays by graph node name for every input of the part.
    An MoE part needs `routing=(idx [B, K], weights [B, K])`, the router's
    choices, to specialize the graph (its `step-specialize{routing=...}`)."""

    module = part.module.clone()
    part = type(part)(**{**part.__dict__, "module": module})
    values = {**values, **{k: f(values) for k, f in getattr(part, "derive", {}).items()}}
    if part.kind == "moe":
        from steplus.passes.step.specialize import StepSpecializePass

        if routing is None:
            raise ValueError("an MoE part needs routing=(idx, weights)")
        idx, w = (np.asarray(r) for r in routing)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "routing.npz"
            np.savez(path, data=idx.astype(np.int64))
            StepSpecializePass(routing=str(path), rewrite=True).apply(Context(), module)
        tensors = _bind_moe(part, {**values, "routing_weights": w})
    elif part.kind == "attention":
        tensors = _bind_attention(part, values)
    else:
        tensors = _bind_dense(part, values)
    prog = build_program(_graph(module), config, functional=True, tensors=tensors)
    prog.run()
    if part.kind == "attention":
        got = {}
        for c in prog.sim.contexts:
            if isinstance(c, RandomStoreCtx) and c.name.startswith("o_store"):
                for a, v in c.stored:
                    got[int(np.asarray(a).ravel()[0])] = np.asarray(v)
        q = values[part.inputs["q"]]
        return {part.outputs[0]: np.stack([got[i] for i in range(len(got))]).reshape(q.shape)}
    stores = [c for c in prog.sim.contexts if isinstance(c, StoreCtx)]
    if part.kind == "moe":
        return {part.outputs[0]: np.vstack([np.asarray(t) for t in stores[0].stored])}
    low = part.lowered
    shapes = getattr(part, "out_shapes", None) or low.result_shapes
    groups = getattr(low, "groups", None)
    if groups:  # several stores make one output (an RNN's steps): stacked along `axis`
        arrays = [lay.assemble(_stored(st)) for st, lay in zip(stores, low.result_layouts)]
        out, k = {}, 0
        for name, (count, axis), shape in zip(part.outputs, groups, shapes):
            out[name] = np.stack(arrays[k:k + count], axis=axis).reshape(shape)
            k += count
        return out
    return {name: lay.assemble(_stored(st)).reshape(shape) for name, st, lay, shape in
            zip(part.outputs, stores, low.result_layouts, shapes)}


_BOOKKEEPING = {"aten.sym_size.int", "aten._assert_scalar.default",
                "aten.sym_constrain_range_for_size.default",
                "aten._assert_tensor_metadata.default", "ge", "le"}


def _bookkeeping(n) -> bool:
    """A shape check of an exported graph (no tensor value)."""
    t = n.target
    name = getattr(t, "__name__", "") if callable(t) and not hasattr(t, "_schema") else str(t)
    return name in _BOOKKEEPING


def run_exported(ep, low, args, routing=None, config=None):
    """Run an exported program with its lowered parts on the fabric (functional mode).

    Interprets `ep`'s graph (`torch.fx.Interpreter`): a node a lowered part computes
    takes the fabric's value (the part runs once, its inputs bound from the values
    computed so far and the program's parameters, buffers and constants, read from
    `ep`); a node inside a
    part is not run; the rest (views, what was not lowered) runs in torch. `args`: the
    user inputs, as `ep` was exported with; `routing(part, env)` gives an MoE part's
    `(idx, weights)`. Returns (the output, the parts run in order, the ATen ops torch
    ran)."""
    import torch

    owner = {out: p for p in low.graphs for out in p.outputs}
    inside = {n.name for p in low.graphs for n in p.covered} - set(owner)
    done: dict = {}
    ran: list = []
    torch_ops: list = []
    state, consts = ep.state_dict, getattr(ep, "constants", {}) or {}

    class Fabric(torch.fx.Interpreter):
        def run_node(self, n):
            part = owner.get(n.name)
            if part is None:
                if n.name in inside or _bookkeeping(n):
                    return None
                if n.op == "call_function":
                    torch_ops.append(str(n.target))
                return super().run_node(n)
            if id(part) not in done:
                env = {node.name: v.detach().float().numpy() for node, v in self.env.items()
                       if isinstance(v, torch.Tensor)}
                run(part, env)
            value = torch.from_numpy(np.asarray(done[id(part)][n.name], np.float32))
            # a boolean tensor (a mask) a part computes as 0/1 floats: bool again for torch
            dtype = getattr(n.meta.get("val"), "dtype", None)
            if dtype == torch.bool:
                return value != 0
            # a bf16/f16 node: torch's ops after the part (baddbmm) need the graph's dtype
            return value.to(dtype) if dtype in (torch.bfloat16, torch.float16) else value

    by_output = {o: p for p in low.graphs for o in p.outputs}
    nodes = {n.name for n in ep.graph.nodes}
    computed: dict = {}  # every part's outputs, also those no graph node names (im2col)

    def run(part, env: dict) -> None:
        for name in part.inputs.values():  # a part that computes an input no node names
            dep = by_output.get(name)
            if dep is not None and name not in nodes and id(dep) not in done:
                run(dep, env)
        env = {**env, **computed}
        done[id(part)] = run_part(part, env, routing(part, env) if routing else None, config)
        computed.update(done[id(part)])
        ran.append(part.role or part.kind)

    from torch.utils import _pytree

    values, user = [], list(_pytree.tree_leaves(tuple(args)))
    for spec in ep.graph_signature.input_specs:  # parameters, buffers, constants as stored
        name, target = spec.arg.name, getattr(spec, "target", None)
        if target is None:
            values.append(user.pop(0))
            continue
        t = state[target] if target in state else consts.get(target)
        if t is None or getattr(t, "is_meta", False):
            raise ValueError(f"no value for the program's input {name} (a meta tensor?)")
        values.append(t)
    with torch.no_grad():  # the parameters as stored (nn.Parameter): values, not autograd
        out = Fabric(ep.graph_module, garbage_collect_values=False).run(*values)
    return (out[0] if isinstance(out, (tuple, list)) and len(out) == 1 else out), ran, torch_ops


def part_cycles(part, config=None) -> int:
    """Cycles of a lowered part on the fabric simulator (timing mode; a dense part's
    graph has no symbols to bind)."""

    return int(build_program(_graph(part.module.clone()), config).run().cycles)


__all__ = ["bind_function", "part_cycles", "run_exported", "run_function", "run_lowered", "run_part"]
