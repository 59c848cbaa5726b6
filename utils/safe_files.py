# pyright: strict
"""Opening a path a user names for reading, without blocking and only if it is a regular file.

`open(path)` on a FIFO waits for a writer forever, and reading `/dev/zero` or
`/dev/urandom` (or a symlink to one) never ends. Every reader of a user-named
file therefore opens it with `O_NONBLOCK` (a FIFO opens at once, with no
writer), checks the *open descriptor* with `fstat` (not the path, which could
change in between) and refuses anything but a regular file: a FIFO, a device,
a socket or a directory. `read_regular` also bounds what is read: a file larger
than `limit` (by `fstat`, or grown while being read) is refused after reading
at most `limit + 1` bytes. With `follow_symlinks=False` a symlink as the last
component is refused too (`O_NOFOLLOW`: a cache entry or a compiled library
must be the file itself).

The errors are `OSError`s (`NotRegularFile`, `FileTooLarge`) whose `strerror`
is the reason, so a caller's `except OSError as e: ... e.strerror` reports them
as it reports a missing file. Standard library only: the fabric's native
loader imports it before anything else of steplus.

Example:

```python
from steplus.utils.safe_files import read_regular, open_regular
data = read_regular("model.mlir", 64 << 20)    # bytes; OSError for a FIFO, a folder, > 64 MiB
with open_regular("archive.pt2") as f:          # a binary file object (seekable: a regular file)
    head = f.read(4)
```
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

CHUNK = 1 << 20
"""Bytes read at a time by `read_regular`."""


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: not read."""


class FileTooLarge(OSError):
    """The file holds more bytes than the reader's limit."""


def _open_fd(path: str | os.PathLike[str], follow_symlinks: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> BinaryIO:
    """`path` opened for reading in binary mode, if it is a regular file (see module doc):
    never blocks; `NotRegularFile` for a FIFO, device, socket or directory, `OSError`
    as `open` raises it otherwise. The caller bounds what it reads."""
    return os.fdopen(_open_fd(path, follow_symlinks), "rb")


def read_regular(path: str | os.PathLike[str], limit: int, *,
                 follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them (see module doc):
    `FileTooLarge` when it holds more (reading at most `limit + 1` bytes),
    `NotRegularFile` when it is not a regular file."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    fd = _open_fd(path, follow_symlinks)
    try:
        if os.fstat(fd).st_size > limit:
            raise FileTooLarge(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(CHUNK, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise FileTooLarge(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
