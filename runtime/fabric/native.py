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

A build needs mypy (mypyc) and a C compiler; without them `build` fails with a
one-line error and nothing changes. Nothing here is imported from the compiled
modules: it is stdlib only (mypyc and setuptools are imported by `build`).

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


def build(verbose: bool = False) -> float:
    """Compile `MODULES` into `_native/`; returns the seconds it took."""
    import shutil
    import tempfile
    import time

    t0 = time.perf_counter()
    try:
        from mypyc.build import mypycify
        from setuptools import Distribution
    except ImportError as e:
        raise RuntimeError(f"mypyc is not installed ({e}); pip install mypy") from e
    root = HERE.parents[1]  # the repository: steplus.X lives in <root>/X
    with tempfile.TemporaryDirectory(prefix="steplus-native-") as tmp:
        tdir = Path(tmp)
        # mypyc names modules after their path: lay out a `steplus` package
        # whose sub-packages point into the repository
        pkg = tdir / "src" / "steplus"
        (pkg / "examples").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "examples" / "__init__.py").write_text("")
        for d in ("utils", "dialects", "passes", "lowering", "runtime", "tools"):
            if (root / d).is_dir():
                (pkg / d).symlink_to(root / d, target_is_directory=True)
        if (root / "examples" / "workloads").is_dir():
            (pkg / "examples" / "workloads").symlink_to(root / "examples" / "workloads",
                                                       target_is_directory=True)
        paths = [f"steplus/runtime/fabric/{m.replace('.', '/')}.py" for m in MODULES]
        cwd = os.getcwd()
        os.chdir(tdir / "src")
        try:
            exts = mypycify(
                paths + ["--follow-imports=silent", "--ignore-missing-imports",
                         "--no-warn-no-return", "--disable-error-code=annotation-unchecked"],
                opt_level="3", debug_level="0", group_name=GROUP,
                target_dir=str(tdir / "c"), verbose=verbose)
            dist = Distribution({"name": "steplus-native", "ext_modules": exts})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib = str(tdir / "lib")
            cmd.build_temp = str(tdir / "tmp")
            cmd.parallel = os.cpu_count() or 1
            cmd.ensure_finalized()
            cmd.run()
        finally:
            os.chdir(cwd)
        files = {}
        for ext in exts:
            rel = ext.name.replace(".", "/") + _suffix()
            src = tdir / "lib" / rel
            if not src.is_file():
                raise RuntimeError(f"mypyc built no {rel}")
            files[ext.name] = ext.name + _suffix()
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir()
        for name, f in files.items():
            shutil.copy2(tdir / "lib" / (name.replace(".", "/") + _suffix()), OUT / f)
    seconds = time.perf_counter() - t0
    STAMP.write_text(json.dumps({
        "suffix": _suffix(), "modules": list(MODULES),
        "sha256": {m: _digest(m) for m in MODULES}, "files": files,
        "seconds": round(seconds, 1)}, indent=1) + "\n")
    (OUT / ".gitignore").write_text("*\n")
    return seconds


def clean() -> None:
    import shutil

    shutil.rmtree(OUT, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m steplus.runtime.fabric.build_native",
                                 description="compile the fabric simulator with mypyc")
    ap.add_argument("action", choices=("build", "status", "clean"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.action == "build":
        try:
            s = build(args.verbose)
        except (RuntimeError, OSError, SystemExit) as e:
            print(f"native: error: build failed: {e}", file=sys.stderr)
            return 1
        except Exception as e:  # a compiler failure inside setuptools
            print(f"native: error: build failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        print(f"native: built {', '.join(MODULES)} in {s:.1f} s into {OUT}", file=sys.stderr)
        return 0
    if args.action == "clean":
        clean()
        return 0
    print(json.dumps(status()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
