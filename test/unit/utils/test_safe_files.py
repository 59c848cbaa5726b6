"""utils/safe_files.py: a user-named path is read only if it is a regular file, never blocking
(a FIFO with no writer opens at once and is refused), and never past the reader's limit."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from steplus.utils.safe_files import FileTooLarge, NotRegularFile, open_regular, read_regular

posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX files (FIFO, /dev/zero)")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def _within(seconds: float, fn):
    """fn() run in a thread; fails (instead of hanging the suite) if it has not returned."""
    out: dict[str, object] = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out.get("value")


def test_a_regular_file_is_read_whole(tmp_path: Path):
    p = tmp_path / "a.bin"
    p.write_bytes(b"abc" * 1000)
    assert read_regular(p, 3000) == b"abc" * 1000
    with open_regular(str(p)) as f:
        assert f.read(3) == b"abc" and f.seekable()


def test_size_bound_is_inclusive(tmp_path: Path):
    p = tmp_path / "a.bin"
    p.write_bytes(bytes(10))
    assert read_regular(p, 10) == bytes(10)
    with pytest.raises(FileTooLarge) as info:
        read_regular(p, 9)
    assert info.value.strerror == "larger than 9 bytes" and info.value.filename == str(p)
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(tmp_path / "empty", 0) == b""
    with pytest.raises(ValueError, match="limit must be >= 0"):
        read_regular(p, -1)


@posix
def test_a_fifo_does_not_block_and_is_refused(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: a plain open() would wait forever
    before = _open_fds()
    with pytest.raises(NotRegularFile) as info:
        _within(5, lambda: read_regular(fifo, 100))
    assert info.value.strerror == "not a regular file"
    with pytest.raises(NotRegularFile):
        _within(5, lambda: open_regular(fifo))
    assert _open_fds() == before  # the descriptor opened to look was closed


def test_a_directory_is_refused(tmp_path: Path):
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(tmp_path, 100)
    with pytest.raises(NotRegularFile):
        open_regular(tmp_path)


@posix
def test_a_device_is_refused():
    # /dev/zero never ends: refused on its descriptor before any read
    with pytest.raises(NotRegularFile):
        _within(5, lambda: read_regular("/dev/zero", 1 << 30))


@posix
def test_symlinks_followed_unless_refused(tmp_path: Path):
    target = tmp_path / "t"
    target.write_bytes(b"x")
    link = tmp_path / "l"
    link.symlink_to(target)
    assert read_regular(link, 1) == b"x"
    with pytest.raises(OSError) as info:
        read_regular(link, 1, follow_symlinks=False)
    assert not isinstance(info.value, FileTooLarge)
    dev = tmp_path / "zero"
    dev.symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile):  # following a link does not let a device through
        read_regular(dev, 10)


def test_a_missing_file_is_the_usual_oserror(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "nope", 10)
