"""A cache of IREE-compiled modules, keyed by a hash of the lowered IR.

`cached_compile(text, flags, compile_fn)` returns the `.vmfb` bytes for the
MLIR `text` compiled with `flags`; the key is the SHA-256 of the text, the
flags, the IREE compiler version and (for `target-cpu=host`) the host CPU.
Entries are plain files `<key>.vmfb` holding a header line with the SHA-256
of the bytes that follow: a truncated or altered entry fails the check and is
recompiled and rewritten (never unpickled, never trusted). A compile failure
with a compiler diagnostic is remembered as `<key>.fail` (holding the
one-line message), so a fallback path does not retry it every run.

The directory is `$STEPLUS_CACHE_DIR`, else `$XDG_CACHE_HOME/steplus/iree`,
else `~/.cache/steplus/iree`; `STEPLUS_CACHE_DIR=off` disables the cache. It
is created private (0700) and is not used if another user owns it or others
may write to it (loading a module runs its code). At most `MAX_ENTRIES`
modules are kept (the least recently used go first).

`STATS` counts compilations and hits (tests use it to check that a second
run does not recompile).

Example::

    from steplus.runtime.iree_cache import STATS, cached_compile
    vmfb = cached_compile(mlir_text, flags, lambda: compile_str(...))
    STATS.compiles, STATS.hits
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"steplus-vmfb-1 "
MAX_ENTRIES = 256


@dataclass
class CacheStats:
    """What the cache did since the process started (or `reset()`)."""

    compiles: int = 0  # compile_fn calls (misses, failures included)
    hits: int = 0  # modules read back from the cache
    failures_remembered: int = 0  # compile failures answered from a .fail entry

    def reset(self) -> None:
        self.compiles = self.hits = self.failures_remembered = 0


STATS = CacheStats()


class CachedCompileError(Exception):
    """The compilation failed (now or in an earlier run: the message is kept).
    Only a deterministic failure (`remember`, e.g. a compiler diagnostic) is
    stored; a crash or a kill may not happen again."""

    def __init__(self, message: str, remember: bool = True):
        super().__init__(message)
        self.remember = remember


def cache_dir() -> Path | None:
    """The cache directory, or None when the cache is disabled or unsafe."""
    env = os.environ.get("STEPLUS_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "none", "0"):
            return None
        path = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        path = base / "steplus" / "iree"
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = path.stat()
    except OSError:
        return None
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return None
    return path


def _host_identity() -> str:
    """What distinguishes this machine's CPU for `target-cpu=host` code."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [ln for ln in f.read(1 << 20).splitlines()
                     if ln.startswith(("model name", "flags"))]
        return "\n".join(sorted(set(lines)))
    except OSError:
        import platform

        return platform.processor() or platform.machine()


def _compiler_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("iree-base-compiler")
    except PackageNotFoundError:  # pragma: no cover - installed with the runtime
        return "unknown"


def cache_key(text: str, flags: Sequence[str]) -> str:
    """The SHA-256 naming the module compiled from `text` with `flags`."""
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    h.update(b"\0" + "\0".join(flags).encode() + b"\0")
    if any(f.endswith("target-cpu=host") for f in flags):
        h.update(_host_identity().encode())
    h.update(text.encode())
    return h.hexdigest()


def _read_entry(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header, sep, payload = data.partition(b"\n")
    if not sep or not header.startswith(MAGIC):
        return None
    if hashlib.sha256(payload).hexdigest().encode() != header[len(MAGIC):]:
        return None
    return payload


def _write_atomic(directory: Path, name: str, data: bytes) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, directory / name)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass  # a cache that cannot be written is only slower


def _prune(directory: Path) -> None:
    try:
        entries = sorted(directory.glob("*.vmfb"), key=lambda p: p.stat().st_mtime)
        for p in entries[:-MAX_ENTRIES] if len(entries) > MAX_ENTRIES else []:
            p.unlink(missing_ok=True)
    except OSError:
        pass


def cached_compile(text: str, flags: Sequence[str], compile_fn: Callable[[], bytes],
                   directory: Path | None | str = "default") -> bytes:
    """The compiled module for `text`: from the cache, or `compile_fn()` (then
    stored). `compile_fn` raises `CachedCompileError` on failure, which is
    remembered. `directory` overrides `cache_dir()` (None: no cache)."""
    where = cache_dir() if directory == "default" else directory
    key = cache_key(text, flags)
    if where is not None:
        where = Path(where)
        hit = _read_entry(where / f"{key}.vmfb")
        if hit is not None:
            STATS.hits += 1
            try:
                os.utime(where / f"{key}.vmfb")
            except OSError:
                pass
            return hit
        fail = where / f"{key}.fail"
        if fail.is_file():
            STATS.failures_remembered += 1
            try:
                message = fail.read_text(encoding="utf-8", errors="replace")[:2000]
            except OSError:
                message = "iree-compile failed (remembered)"
            raise CachedCompileError(message)
    STATS.compiles += 1
    try:
        vmfb = compile_fn()
    except CachedCompileError as e:
        if where is not None and e.remember:
            _write_atomic(where, f"{key}.fail", str(e).encode())
        raise
    if where is not None:
        digest = hashlib.sha256(vmfb).hexdigest().encode()
        _write_atomic(where, f"{key}.vmfb", MAGIC + digest + b"\n" + vmfb)
        _prune(where)
    return vmfb
