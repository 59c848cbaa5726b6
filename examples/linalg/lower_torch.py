"""Lower a PyTorch layer of examples/workloads/ to step graphs (the recognition path).

    .venv/bin/python examples/linalg/lower_torch.py moe --model mixtral --tile-n 16 -o moe.mlir
    .venv/bin/python examples/linalg/lower_torch.py attention --model qwen --kv TRACE.npy -o attn.mlir
    .venv/bin/python examples/linalg/lower_torch.py decoder --model qwen -o layer.mlir

Builds the module (`moe.TopKMoE`, `attention_torch.GQADecodeAttention`,
`decoder_torch.DecoderLayer`) at the model's shapes on the meta device (no
weights are allocated), exports it with `torch.export` and lowers it with
`steplus.lowering.linalg_to_step.aten.lower_exported`. The step graphs go to
`-o` (or stdout), one module; the remarks (what was not lowered, and where)
to stderr. `--tile-n 0` is dynamic tiling. The KV lengths default to the
cached length of the example shape; `--kv` takes a shipped `azure_kv` trace
(one length per sequence, shared by its KV heads).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(kind: str, model: str, batch: int, cached: int):
    import torch

    from steplus.examples.workloads.decoder_torch import CONFIGS, DecoderLayer, decoder_inputs
    from steplus.examples.workloads.attention_torch import GQADecodeAttention
    from steplus.examples.workloads.moe import TopKMoE

    cfg = CONFIGS[model]
    meta = {"device": "meta", "dtype": torch.bfloat16}
    if kind == "moe":
        E, D, F = cfg.experts, cfg.hidden, cfg.inter
        shapes = ((batch, D), (D, E), (E, D, F), (E, D, F), (E, F, D))
        return TopKMoE(E, cfg.top_k, cfg.norm), tuple(torch.empty(s, **meta) for s in shapes)
    if kind == "attention":
        q = (batch, cfg.q_heads, 1, cfg.head_dim)
        new = (batch, cfg.kv_heads, 1, cfg.head_dim)
        cache = (batch, cfg.kv_heads, cached, cfg.head_dim)
        return GQADecodeAttention(), tuple(torch.empty(s, **meta) for s in (q, new, new, cache,
                                                                              cache))
    return DecoderLayer(cfg), decoder_inputs(cfg, batch, cached, **meta)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="lower a PyTorch layer to step graphs")
    p.add_argument("kind", choices=["moe", "attention", "decoder"])
    p.add_argument("--model", choices=["qwen", "mixtral"], default="mixtral")
    p.add_argument("--batch", type=int, default=64, help="sequences / tokens (default 64)")
    p.add_argument("--cached", type=int, default=1000, help="cached KV rows per sequence")
    p.add_argument("--kv", help="a KV-length trace .npy (one length per sequence)")
    p.add_argument("--tile-n", type=int, default=16, help="MoE static tile (0: dynamic)")
    p.add_argument("--tile-f", type=int, default=64)
    p.add_argument("--strategy", choices=["interleaved", "coarse"], default="interleaved")
    p.add_argument("--dense", default="tile=64x256x256 schedule=mnk",
                   help="decoder: convert-linalg-to-step options of the projections")
    p.add_argument("-o", "--output")
    args = p.parse_args(argv)
    if not 1 <= args.batch <= 4096 or not 0 <= args.cached <= 1 << 20:
        p.error("--batch must be in 1..4096 and --cached in 0..2^20")
    import numpy as np
    import torch

    from steplus.lowering.linalg_to_step.aten import lower_exported

    layer, inputs = build(args.kind, args.model, args.batch, args.cached)
    lengths = None
    if args.kv:
        from steplus.examples.workloads.decoder_torch import CONFIGS

        try:
            trace = np.load(args.kv, allow_pickle=False).astype(np.int64)
        except (OSError, ValueError, TypeError) as e:
            p.error(f"--kv: cannot read {args.kv}: {e}")
        if trace.ndim != 1 or len(trace) != args.batch:
            p.error(f"--kv: expected {args.batch} lengths (--batch), got shape {trace.shape}")
        lengths = np.repeat(trace, CONFIGS[args.model].kv_heads).tolist()
    from steplus.tools.progress import status

    try:  # a status line on stderr while torch exports and the graphs lower (a terminal only)
        with status("lower_torch", f"exporting the {args.model} {args.kind} layer") as line:
            exported = torch.export.export(layer, inputs)
            line.set(f"lowering the {args.model} {args.kind} layer to step graphs")
            low = lower_exported(exported,
                                 tile_n=args.tile_n or None, tile_f=args.tile_f,
                                 strategy=args.strategy, kv_lengths=lengths,
                                 dense=args.dense if args.kind == "decoder" else None,
                                 name=f"{args.model}_{args.kind}")
    except ValueError as e:
        p.error(str(e))
    for r in low.remarks:
        print(r, file=sys.stderr)
    if not low.graphs:
        print("lower_torch: error: nothing was lowered (see the remarks)", file=sys.stderr)
        return 1
    from xdsl.dialects.builtin import ModuleOp

    from steplus.dialects.step import GraphOp

    graphs = [op for part in low.graphs for op in part.module.walk() if isinstance(op, GraphOp)]
    for g in graphs:
        g.detach()
    text = str(ModuleOp(graphs)) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
