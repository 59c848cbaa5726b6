"""Moved: the meaning of `linalg.generic` is in `steplus.passes.isel.semantics.generic` (the one
op-semantics table, numeric and symbolic), `map_dims` in `steplus.utils.layouts`.

This shim keeps `from steplus.runtime.ila.generic import map_dims` working for code written
before the move; a pass should import `steplus.utils.layouts` (a pass importing the runtime is
a back-edge of the layer order).

Example::

    from steplus.utils.layouts import map_dims
"""

from steplus.utils.layouts import map_dims

__all__ = ["map_dims"]
