"""Export a timm-style vision transformer of examples/allspark and read it into a pim.model.

    python examples/allspark/export_pim.py swin-t 224 > swin.mlir          # the pim.model
    python examples/allspark/export_pim.py swin-t 224 --pt2 swin-t.pt2     # the archive
    step-opt swin.mlir -p 'pim-orchestrate,pim-lower-phases'
    echo '' | step-opt -p 'convert-torch-to-pim{export="swin-t.pt2"},pim-orchestrate'

Models: ViT (vit-t/s/b/l/h), Swin (swin-t/s/b/l), PVT v1 (pvt-t/s/m/l), Twins-SVT
(twins-s/b/l), CSWin (cswin-t/s/b/l), Focal (focal-t/s/b).  With ``--pt2 PATH`` the `torch.export.save` archive is written instead
(what `convert-torch-to-pim` reads).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.allspark.zoo import MODELS, export  # noqa: E402
from steplus.dialects.target.pim import PimConfigError, preset  # noqa: E402
from steplus.lowering.torch_to_pim import module_from_graph  # noqa: E402
from steplus.runtime.pim.program import module_text  # noqa: E402
from steplus.tools.progress import status  # noqa: E402


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="export_pim.py", description=__doc__.splitlines()[0])
    p.add_argument("model", choices=MODELS)
    p.add_argument("img", type=int)
    p.add_argument("--pt2", metavar="PATH", help="write the torch.export.save archive here")
    p.add_argument("--preset", default="allspark-16x16")
    args = p.parse_args(argv)
    if not 32 <= args.img <= 1280:
        p.error("IMG must be in [32, 1280]")
    try:
        preset(args.preset)  # an unknown preset is refused here, not by a later pass
    except PimConfigError as e:
        p.error(str(e))
    if args.pt2 and not Path(args.pt2).resolve().parent.is_dir():
        p.error(f"--pt2 {args.pt2}: no such folder")  # before the export, not after it
    try:
        # a status line on stderr while torch exports (a terminal only)
        with status("export_pim", f"exporting {args.model} at {args.img}x{args.img} with "
                                  f"torch.export"):
            ep = export(args.model, args.img)
            if args.pt2:
                import torch

                try:
                    torch.export.save(ep, args.pt2)
                except (OSError, RuntimeError) as e:  # torch says RuntimeError for a bad path
                    print(f"export_pim.py: error: --pt2 {args.pt2}: {e}", file=sys.stderr)
                    return 1
                return 0
            module = module_from_graph(ep.graph, args.model, args.img, args.preset)
    except ValueError as e:
        print(f"export_pim.py: error: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(module_text(module))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
