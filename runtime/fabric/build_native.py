"""Command line of `native`: compile the fabric simulator's hot modules with mypyc.

    python -m steplus.runtime.fabric.build_native build|status|clean

Example:

```python
from steplus.runtime.fabric.build_native import main
main(["status"])   # prints {"built": ..., "current": ..., ...}
```
"""

from __future__ import annotations

import sys

from steplus.runtime.fabric.native import main

if __name__ == "__main__":
    sys.exit(main())
