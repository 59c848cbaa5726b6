"""Compile the fabric simulator's hot modules with mypyc (the build of `native.py`).

    python -m steplus.runtime.fabric.build_native build    # compile into runtime/fabric/_native/
    python -m steplus.runtime.fabric.build_native status   # built? current? in use?
    python -m steplus.runtime.fabric.build_native clean

Needs mypy (mypyc, `pip install mypy==2.4.1`), setuptools and a C compiler;
without them `build` fails with a one-line error and changes nothing (the
pure-Python modules stay in use). See docs/fabric.md, *Compiled build (mypyc)*.

Example:

```python
from steplus.runtime.fabric.build_native import main
main(["status"])   # prints {"built": ..., "current": ..., ...}
```
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from steplus.runtime.fabric.native import (
    GROUP, HERE, MODULES, OUT, STAMP, _digest, _suffix, expected_files, file_sha256, status,
)

try:  # optional: only a build needs them
    from mypyc.build import mypycify
    from setuptools import Distribution
except ImportError:  # pragma: no cover - depends on the environment
    mypycify = None
    Distribution = None


def build(verbose: bool = False) -> float:
    """Compile `MODULES` into `_native/`; returns the seconds it took."""
    t0 = time.perf_counter()
    if mypycify is None or Distribution is None:
        raise RuntimeError("mypyc or setuptools is not installed (pip install mypy==2.4.1)")
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
        files = expected_files()
        built = {ext.name for ext in exts}
        if built != set(files):
            raise RuntimeError(f"mypyc built {sorted(built)}, expected {sorted(files)}")
        for name in files:
            rel = name.replace(".", "/") + _suffix()
            if not (tdir / "lib" / rel).is_file():
                raise RuntimeError(f"mypyc built no {rel}")
        if OUT.is_symlink() or OUT.is_file():
            OUT.unlink()
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir()
        os.chmod(OUT, 0o755)  # whatever the umask: the loader refuses a folder others can write
        for name, f in files.items():
            shutil.copyfile(tdir / "lib" / (name.replace(".", "/") + _suffix()), OUT / f)
            os.chmod(OUT / f, 0o755)
    seconds = time.perf_counter() - t0
    stamp = json.dumps({
        "suffix": _suffix(), "modules": list(MODULES),
        "sha256": {m: _digest(m) for m in MODULES}, "files": files,
        "binaries": {f: file_sha256(OUT / f) for f in files.values()},
        "seconds": round(seconds, 1)}, indent=1) + "\n"
    (OUT / ".gitignore").write_text("*\n")
    tmp = OUT / ".stamp.json.tmp"
    tmp.write_text(stamp)
    os.chmod(tmp, 0o644)
    os.replace(tmp, STAMP)  # last: a half-written build is never current
    return seconds


def clean() -> None:
    if OUT.is_symlink():
        OUT.unlink()
    shutil.rmtree(OUT, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
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
