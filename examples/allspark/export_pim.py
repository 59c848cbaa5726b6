"""Print the pim.model of a timm-style ViT, read from its torch.export graph.

    python examples/allspark/export_pim.py vit-b 224 > vit.mlir
    step-opt vit.mlir -p 'pim-orchestrate,pim-lower-phases'
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.allspark.vit_timm import CONFIGS, export  # noqa: E402
from steplus.lowering.torch_to_pim import module_from_graph  # noqa: E402
from steplus.runtime.pim.program import module_text  # noqa: E402
from steplus.tools.progress import status  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in CONFIGS or not argv[1].isdigit():
        print(f"usage: export_pim.py {{{','.join(CONFIGS)}}} IMG", file=sys.stderr)
        return 2
    name, img = argv[0], int(argv[1])
    if not 32 <= img <= 1280:
        print("export_pim.py: error: IMG must be in [32, 1280]", file=sys.stderr)
        return 2
    try:
        # a status line on stderr while torch exports (a terminal only)
        with status("export_pim", f"exporting {name} at {img}x{img} with torch.export"):
            module = module_from_graph(export(name, img).graph, name, img)
    except ValueError as e:
        print(f"export_pim.py: error: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(module_text(module))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
