"""The steplus reactive runtime: execute lus nodes tick by tick.

Example::

    from steplus.runtime.reactive import run_node
    outs = run_node(module, "integr", {"i": np.arange(10, dtype=np.int32)}, ticks=10)
    outs[0]   # the first output, one entry per tick (None where absent)
"""

from steplus.runtime.reactive.errors import ReactiveError, RuntimeArithmeticError
from steplus.runtime.reactive.interpreter import ABSENT, NodeRunner, run_node

__all__ = ["ABSENT", "NodeRunner", "ReactiveError", "RuntimeArithmeticError", "run_node"]
