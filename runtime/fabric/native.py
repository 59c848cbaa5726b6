"""Compiled (mypyc) builds of the fabric simulator's hot modules, and their loader.

    python -m steplus.runtime.fabric.build_native build    # compile into runtime/fabric/_native/
    python -m steplus.runtime.fabric.build_native status   # built? current? in use?
    python -m steplus.runtime.fabric.build_native clean

`build` compiles `MODULES` (the engine, the channels, the HBM model) with
mypyc into one extension group under `runtime/fabric/_native/`, beside a stamp
holding the SHA-256 of each compiled source and of each library, and the
interpreter's extension suffix. On import of `steplus.runtime.fabric`,
`install()` puts a finder in front of the import system that loads the compiled
modules *only if* the stamp matches the sources and the libraries as they are
now (an edited `engine.py` silently falls back to the pure-Python module until
rebuilt), the folder and its files are this user's and writable by nobody else,
and `STEPLUS_FABRIC_NATIVE` is not `0`. Only the known fabric modules are ever
loaded, by their fixed names inside `_native/` (`expected_files()`); the stamp
cannot name other files (`why_not_current()` says why a build is not used). The pure-Python modules stay the reference: the compiled ones must give
identical cycles (test/unit/runtime/fabric/test_fabric_native.py).

A build (`build_native.py`) needs mypy (mypyc) and a C compiler; without them
it fails with a one-line error and nothing changes. This module is the loader
only, stdlib only (and `utils/safe_files.py`, itself stdlib only): it is imported by
`steplus.runtime.fabric` itself.

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
import stat
import sys
from pathlib import Path

from steplus.utils.safe_files import NotRegularFile, open_regular

HERE = Path(__file__).resolve().parent
OUT = HERE / "_native"
STAMP = OUT / "stamp.json"
PACKAGE = "steplus.runtime.fabric"
MODULES = ("channel", "hbm", "context", "bounds", "engine", "contexts.memory", "contexts.compute", "contexts.routing",
           "contexts.shape", "contexts.generators")
"""Compiled, in dependency order (relative to `steplus.runtime.fabric`)."""
GROUP = f"{PACKAGE}._native_group"
SHARED = f"{GROUP}__mypyc"  # mypyc's shared library of the group
ENV = "STEPLUS_FABRIC_NATIVE"


MAX_STAMP_BYTES = 1 << 16
"""Largest stamp.json read."""
MAX_BINARY_BYTES = 1 << 28
"""Largest compiled library hashed and loaded (256 MiB; a build is ~1.6 MB)."""


def _source(mod: str) -> Path:
    return HERE / (mod.replace(".", "/") + ".py")


def _digest(mod: str) -> str:
    return hashlib.sha256(_source(mod).read_bytes()).hexdigest()


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def expected_files() -> dict[str, str]:
    """Module name -> file name (in `OUT`) of every library a build holds: the
    compiled `MODULES` and mypyc's shared library. Nothing else is ever loaded."""
    names = [SHARED] + [f"{PACKAGE}.{m}" for m in MODULES]
    return {n: n + _suffix() for n in names}


def _my_uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def _unsafe(path: Path, kind: str) -> str | None:
    """Why `path` may not be trusted (None: it may): it must be a `kind`
    ('dir' or 'file', not a symlink) owned by this user, writable by nobody else."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"{path.name}: {e.strerror}"
    if not (stat.S_ISDIR if kind == "dir" else stat.S_ISREG)(st.st_mode):
        return f"{path.name} is not a regular {'folder' if kind == 'dir' else 'file'}"
    uid = _my_uid()
    if uid is not None and st.st_uid != uid:
        return f"{path.name} is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{path.name} is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def file_sha256(path: Path) -> str:
    """SHA-256 of a library file, read through one descriptor (at most `MAX_BINARY_BYTES`)."""
    h = hashlib.sha256()
    try:
        f = open_regular(path, follow_symlinks=False)
    except NotRegularFile:
        raise OSError(f"{path.name} is not a regular file") from None
    with f:
        total = 0
        while chunk := f.read(1 << 20):
            total += len(chunk)
            if total > MAX_BINARY_BYTES:
                raise OSError(f"{path.name} is larger than {MAX_BINARY_BYTES} bytes")
            h.update(chunk)
    return h.hexdigest()


def _stamp() -> dict | None:
    if _unsafe(OUT, "dir") or _unsafe(STAMP, "file"):
        return None
    try:
        with open(STAMP, "rb") as f:
            data = f.read(MAX_STAMP_BYTES + 1)
        if len(data) > MAX_STAMP_BYTES:
            return None
        got = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None
    return got if isinstance(got, dict) else None


def why_not_current() -> str | None:
    """None when a build exists for this interpreter, matches every source as it
    is now, and may be trusted; else the reason it is not used:

    - `_native/` and `stamp.json` must be a folder and a regular file (not
      symlinks) owned by this user and writable by nobody else (loading a
      library runs its code);
    - the stamp's `files` must be exactly `expected_files()` (no other module,
      no path: every file is a bare name inside `_native/`);
    - each library must be such a regular file whose SHA-256 is the stamp's
      `binaries` entry, and each source's SHA-256 the stamp's `sha256` entry."""
    reason = _unsafe(OUT, "dir")
    if reason:
        return reason
    st = _stamp()
    if st is None:
        return "no readable stamp.json"
    if st.get("suffix") != _suffix():
        return "built for another interpreter"
    if st.get("modules") != list(MODULES):
        return "built for other modules"
    files = expected_files()
    if st.get("files") != files:
        return "the stamp lists other files than the fabric modules"
    digests = st.get("sha256")
    binaries = st.get("binaries")
    if not isinstance(digests, dict) or not isinstance(binaries, dict):
        return "the stamp has no source or library hashes"
    try:
        stale = [m for m in MODULES if digests.get(m) != _digest(m)]
    except OSError:
        return "a source cannot be read"
    if stale:
        return f"{stale[0]}.py changed since the build"
    if set(binaries) != set(files.values()):
        return "the stamp hashes other libraries than the fabric modules"
    for f in files.values():
        reason = _unsafe(OUT / f, "file")
        if reason:
            return reason
        try:
            if file_sha256(OUT / f) != binaries[f]:
                return f"{f} does not match its hash in the stamp"
        except OSError as e:
            return f"{f}: {e.strerror or e}"
    return None


def current() -> bool:
    """A build exists for this interpreter, matches every source as it is now,
    and passes the checks of `why_not_current`."""
    return why_not_current() is None


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
    _finder = _Finder(expected_files())
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
    reason = why_not_current()
    return {"built": st is not None, "current": reason is None, "reason": reason, "active": active(),
            "disabled": os.environ.get(ENV, "1") == "0",
            "compile_seconds": (st or {}).get("seconds")}
