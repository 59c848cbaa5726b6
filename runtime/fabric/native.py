"""Compiled (mypyc) builds of the fabric simulator's hot modules, and their loader.

    python -m steplus.runtime.fabric.build_native build    # compile into runtime/fabric/_native/
    python -m steplus.runtime.fabric.build_native status   # built? current? in use?
    python -m steplus.runtime.fabric.build_native clean

`build` compiles `MODULES` (the engine, the channels, the HBM model) with
mypyc into one extension group under `runtime/fabric/_native/`, beside a stamp
holding the SHA-256 of each compiled source and the interpreter's extension
suffix. On import of `steplus.runtime.fabric`, `install()` puts a finder in
front of the import system that loads the compiled modules *only if* the stamp
matches the sources as they are now (an edited `engine.py` silently falls back
to the pure-Python module until rebuilt) and `STEPLUS_FABRIC_NATIVE` is not
`0`. The pure-Python modules stay the reference: the compiled ones must give
identical cycles (test/unit/runtime/fabric/test_fabric_native.py).

A build (`build_native.py`) needs mypy (mypyc) and a C compiler; without them
it fails with a one-line error and nothing changes. This module is the loader
only, stdlib only: it is imported by `steplus.runtime.fabric` itself.

Example:

```python
from steplus.runtime.fabric import native
native.status()   # {'built': ..., 'current': ..., 'active': [...]}
```
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "_native"
STAMP = OUT / "stamp.json"
PACKAGE = "steplus.runtime.fabric"
MODULES = ("channel", "hbm", "engine", "contexts.memory", "contexts.compute", "contexts.routing",
           "contexts.shape", "contexts.generators")
"""Compiled, in dependency order (relative to `steplus.runtime.fabric`)."""
GROUP = f"{PACKAGE}._native_group"
SHARED = f"{GROUP}__mypyc"  # mypyc's shared library of the group
ENV = "STEPLUS_FABRIC_NATIVE"


def _source(mod: str) -> Path:
    return HERE / (mod.replace(".", "/") + ".py")


def _digest(mod: str) -> str:
    return hashlib.sha256(_source(mod).read_bytes()).hexdigest()


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _stamp() -> dict | None:
    try:
        got = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return None
    return got if isinstance(got, dict) else None


def current() -> bool:
    """A build exists for this interpreter and matches every source as it is now."""
    st = _stamp()
    if st is None or st.get("suffix") != _suffix() or st.get("modules") != list(MODULES):
        return False
    digests = st.get("sha256", {})
    try:
        if any(digests.get(m) != _digest(m) for m in MODULES):
            return False
    except OSError:
        return False
    return all((OUT / f).is_file() for f in st.get("files", {}).values())


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the compiled fabric modules (and their shared library) in `_native/`."""

    def __init__(self, files: dict[str, str]):
        self.files = files

    def find_spec(self, fullname, path=None, target=None):
        f = self.files.get(fullname)
        if f is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(OUT / f))
        return importlib.util.spec_from_file_location(fullname, str(OUT / f), loader=loader)


_finder: _Finder | None = None


def install() -> bool:
    """Put the compiled modules in front of the pure ones, if they are current.
    Called by `steplus.runtime.fabric`'s `__init__`; returns whether it did."""
    global _finder
    if _finder is not None:
        return True
    if os.environ.get(ENV, "1") == "0" or not current():
        return False
    st = _stamp() or {}
    _finder = _Finder(dict(st["files"]))
    sys.meta_path.insert(0, _finder)
    return True


def active() -> list[str]:
    """The fabric modules imported from a compiled build (empty: all pure)."""
    out = []
    for m in MODULES:
        mod = sys.modules.get(f"{PACKAGE}.{m}")
        if mod is not None and not str(getattr(mod, "__file__", "")).endswith(".py"):
            out.append(m)
    return out


def status() -> dict:
    st = _stamp()
    return {"built": st is not None, "current": current(), "active": active(),
            "disabled": os.environ.get(ENV, "1") == "0",
            "compile_seconds": (st or {}).get("seconds")}
