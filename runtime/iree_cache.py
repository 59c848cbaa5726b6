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
modules are kept (the least recently used go first); pruning deletes only the
cache's own entries (`<sha256>.vmfb` / `.fail`), never other files of the
folder. An entry is read only if it is a regular file (not a symlink, FIFO or
device: opened non-blocking, checked on its descriptor) of at most
`MAX_ENTRY_BYTES`; anything else is a miss.

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
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from steplus.utils.safe_files import read_regular

MAGIC = b"steplus-vmfb-1 "
MAX_ENTRIES = 256
"""Modules kept (and as many remembered failures); the least recently used go first."""
MAX_ENTRY_BYTES = 1 << 30
"""Largest entry read back (1 GiB): a larger file is treated as a miss."""
MAX_FAIL_BYTES = 1 << 16
"""Largest remembered failure message read or written."""
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.(vmfb|fail)")
"""The name of an entry the cache wrote: the only files it reads or prunes."""


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


def _read_bounded(path: Path, limit: int) -> bytes | None:
    """The bytes of `path` if it is a regular file (not a symlink, a FIFO, a
    device) of at most `limit` bytes; None otherwise. Never blocks: the file is
    opened non-blocking and checked on its descriptor before reading."""
    try:
        return read_regular(path, limit, follow_symlinks=False)
    except OSError:
        return None


def _read_entry(path: Path) -> bytes | None:
    data = _read_bounded(path, MAX_ENTRY_BYTES)
    if data is None:
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


def _own_entries(directory: Path, suffix: str) -> list[Path]:
    """The cache's own entries of a kind: `<64 hex digits><suffix>` regular files
    (another program's `.vmfb` in the same folder is not one of them)."""
    out = []
    with os.scandir(directory) as it:
        for e in it:
            if ENTRY_NAME.fullmatch(e.name) and e.name.endswith(suffix) and \
                    e.is_file(follow_symlinks=False):
                out.append(Path(e.path))
    return out


def _prune(directory: Path) -> None:
    """Keep the `MAX_ENTRIES` most recently used modules (and as many
    remembered failures); only the cache's own entries are ever deleted."""
    for suffix in (".vmfb", ".fail"):
        try:
            entries = sorted(_own_entries(directory, suffix), key=lambda p: p.lstat().st_mtime)
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
        remembered = _read_bounded(where / f"{key}.fail", MAX_FAIL_BYTES)
        if remembered is not None:
            STATS.failures_remembered += 1
            message = remembered.decode("utf-8", errors="replace")[:2000]
            raise CachedCompileError(message or "iree-compile failed (remembered)")
    STATS.compiles += 1
    try:
        vmfb = compile_fn()
    except CachedCompileError as e:
        if where is not None and e.remember:
            _write_atomic(where, f"{key}.fail", str(e).encode()[:MAX_FAIL_BYTES])
            _prune(where)
        raise
    if where is not None:
        digest = hashlib.sha256(vmfb).hexdigest().encode()
        _write_atomic(where, f"{key}.vmfb", MAGIC + digest + b"\n" + vmfb)
        _prune(where)
    return vmfb
