"""step-opt: the steplus optimizer driver (placeholder, being hardened)."""

import sys

from xdsl.xdsl_opt_main import xDSLOptMain

from steplus.tools.registry import get_all_dialects, get_all_passes


class StepOptMain(xDSLOptMain):
    def register_all_dialects(self):
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)


def main(argv=None) -> int:
    StepOptMain(args=argv).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
