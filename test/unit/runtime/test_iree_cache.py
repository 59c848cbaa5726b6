"""The IREE module cache (runtime/iree_cache.py) against hostile cache folders (issue 24):
entries that are not regular files never block or read forever, an oversized
entry is a miss, and pruning deletes only the cache's own entries."""

from __future__ import annotations

import os
import threading

import pytest

from steplus.runtime import iree_cache
from steplus.runtime.iree_cache import STATS, CachedCompileError, cache_key, cached_compile

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX files (FIFO, symlinks)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("STEPLUS_CACHE_DIR", str(d))
    STATS.reset()
    return d


def _finishes(fn, seconds: float = 20.0):
    """fn()'s result, or a failure if it does not return within `seconds` (it would block)."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the cache blocked"
    return out[0]


def test_a_fifo_entry_is_a_miss_not_a_hang(cache):
    os.mkfifo(cache / f"{cache_key('ir', [])}.vmfb")
    assert _finishes(lambda: cached_compile("ir", [], lambda: b"compiled")) == b"compiled"
    assert STATS.compiles == 1 and STATS.hits == 0
    assert cached_compile("ir", [], lambda: b"unused") == b"compiled"  # rewritten as a file


def test_a_fifo_failure_entry_is_ignored(cache):
    os.mkfifo(cache / f"{cache_key('ir', [])}.fail")
    assert _finishes(lambda: cached_compile("ir", [], lambda: b"compiled")) == b"compiled"
    assert STATS.failures_remembered == 0


def test_a_symlink_to_dev_zero_is_a_miss(cache):
    (cache / f"{cache_key('ir', [])}.vmfb").symlink_to("/dev/zero")
    assert _finishes(lambda: cached_compile("ir", [], lambda: b"compiled")) == b"compiled"
    assert STATS.compiles == 1


def test_a_symlink_to_a_valid_entry_is_not_followed(cache, tmp_path):
    cached_compile("ir", [], lambda: b"compiled")
    entry = cache / f"{cache_key('ir', [])}.vmfb"
    elsewhere = tmp_path / "elsewhere.vmfb"
    elsewhere.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert cached_compile("ir", [], lambda: b"again") == b"again"
    assert STATS.compiles == 2 and STATS.hits == 0


def test_an_entry_past_the_size_bound_is_a_miss(cache, monkeypatch):
    cached_compile("ir", [], lambda: b"x" * 100)
    monkeypatch.setattr(iree_cache, "MAX_ENTRY_BYTES", 99)  # header + 100 bytes > 99
    assert cached_compile("ir", [], lambda: b"y") == b"y"
    assert STATS.hits == 0 and STATS.compiles == 2


def test_a_remembered_failure_is_read_back_bounded(cache):
    def failing():
        raise CachedCompileError("E" * (iree_cache.MAX_FAIL_BYTES * 2))

    with pytest.raises(CachedCompileError):
        cached_compile("ir", [], failing)
    fail = cache / f"{cache_key('ir', [])}.fail"
    assert fail.stat().st_size == iree_cache.MAX_FAIL_BYTES
    with pytest.raises(CachedCompileError) as e:
        cached_compile("ir", [], lambda: b"unused")
    assert str(e.value) == "E" * 2000


def test_pruning_deletes_only_the_cache_s_own_entries(cache, monkeypatch):
    monkeypatch.setattr(iree_cache, "MAX_ENTRIES", 2)
    foreign = ["model.vmfb", f"{'A' * 64}.vmfb", f"{'0' * 63}.vmfb", "notes.txt"]
    for name in foreign:
        (cache / name).write_bytes(b"someone else's")
        os.utime(cache / name, (1, 1))  # older than anything the cache writes
    for i in range(4):
        cached_compile(f"ir {i}", [], lambda i=i: b"module %d" % i)
        os.utime(cache / f"{cache_key(f'ir {i}', [])}.vmfb", (100 + i, 100 + i))
    own = sorted(p.name for p in cache.glob("*.vmfb") if p.name not in foreign)
    assert own == sorted(f"{cache_key(f'ir {i}', [])}.vmfb" for i in (2, 3))
    assert all((cache / name).read_bytes() == b"someone else's" for name in foreign)
