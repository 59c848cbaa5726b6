"""Routing and KV-length traces, turned into what the step graphs consume.

Reference-workload spec §6: an expert-routing trace is an `.npz` with key
`data`, an int array `[B, K]` of expert ids (top-k per token); a KV-length
trace is an `.npy` of `B` KV-cache lengths. The shipped copies live under
`examples/data/step-traces/` (see its README for provenance).

Example:

```python
from steplus.passes.step.traces import RoutingTrace
t = RoutingTrace.load("examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz", experts=8)
t.counts          # tokens per expert c_e: [13, 10, 17, 14, 17, 10, 24, 23]
t.tiles(16)       # T_e = ceil(c_e / 16)
```
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
from numpy.lib import format as npformat

from steplus.utils.safe_files import open_regular


ROUTING_TRACES = {
    ("mixtral", 64): "mixtral_b64/008_010.npz",
    ("mixtral", 1024): "mixtral_b1024/019_009.npz",
    ("qwen", 64): "qwen_b64/032_012.npz",
    ("qwen", 1024): "qwen_b1024/022_016.npz",
}
"""(model, batch) -> the routing trace the reference experiments use (spec §6.1),
relative to `examples/data/step-traces/expert_routing/`."""


def shipped_routing_trace(model: str, batch: int) -> Path:
    """The path of a shipped routing trace (in a source checkout)."""
    root = Path(__file__).resolve().parents[2] / "examples" / "data" / "step-traces"
    return root / "expert_routing" / ROUTING_TRACES[(model, batch)]


class TraceError(Exception):
    """A trace file is missing or malformed."""


MAX_TRACE_BYTES = 256 * 2**20
"""The largest trace array accepted (bytes of data, read from the header
before anything is allocated)."""
MAX_TRACE_VALUE = 2**40
"""The largest KV length accepted."""

_NUMERIC_KINDS = "iuf"  # signed, unsigned, float: checked for integral values


def read_trace_array(path: str | Path, what: str, member: str | None = None) -> np.ndarray:
    """The array of a `.npy` file (or of `member` of an `.npz` archive), read
    without pickle; its header is checked first (numeric dtype, at most
    `MAX_TRACE_BYTES`). Errors name `path` and `what` the file should be."""
    try:
        with open_regular(path) as f:  # not a FIFO (blocks) or a device
            is_zip = f.read(4) == b"PK\x03\x04"
            f.seek(0)
            if member is None:
                if is_zip:
                    raise TraceError(f"{path}: is a .npz archive; a {what} is a NumPy .npy file")
                return _read_npy(f, path, what)
            if not is_zip:
                raise TraceError(f"{path}: not a {what} (expected a NumPy .npz archive)")
            with zipfile.ZipFile(f) as z:
                names = z.namelist()
                if f"{member}.npy" not in names:
                    raise TraceError(f"{path}: no array '{member}' in the {what}")
                info = z.getinfo(f"{member}.npy")
                if info.file_size > MAX_TRACE_BYTES + 4096:
                    raise TraceError(f"{path}: array '{member}' is larger than "
                                     f"{MAX_TRACE_BYTES} bytes")
                with z.open(info) as m:
                    return _read_npy(m, path, what)
    except OSError as e:
        raise TraceError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile, NotImplementedError):
        raise TraceError(f"{path}: not a {what} (a malformed NumPy file)") from None


def _read_npy(f: IO[bytes], path: str | Path, what: str) -> np.ndarray:
    version = npformat.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = npformat.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = npformat.read_array_header_2_0(f)
    else:
        raise TraceError(f"{path}: unsupported NumPy format version {version}")
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None:
        raise TraceError(f"{path}: a {what} holds integers, got dtype {dtype}")
    if math.prod(shape) * dtype.itemsize > MAX_TRACE_BYTES:
        raise TraceError(f"{path}: {what} of shape {shape} is larger than "
                         f"{MAX_TRACE_BYTES} bytes")
    count = math.prod(shape)
    data = np.frombuffer(f.read(count * dtype.itemsize), dtype=dtype)
    if data.size != count:
        raise TraceError(f"{path}: {what} is truncated")
    return data.reshape(shape, order="F" if fortran else "C")


def _integral(data: np.ndarray, path: str | Path, what: str) -> np.ndarray:
    """`data` as int64, or an error naming the first non-integer entry."""
    if data.dtype.kind == "f":
        finite = np.isfinite(data)
        bad = ~finite | (np.where(finite, data, 0) % 1 != 0)
        if bad.any():
            raise TraceError(_entry_error(path, what, bad, data, "is not an integer"))
        if data.size and np.abs(data).max() > MAX_TRACE_VALUE:
            raise TraceError(_entry_error(path, what, np.abs(data) > MAX_TRACE_VALUE, data,
                                          f"exceeds the limit 2**40 = {MAX_TRACE_VALUE}"))
    elif data.dtype.kind == "u" and data.size and data.max() > MAX_TRACE_VALUE:
        raise TraceError(_entry_error(path, what, data > MAX_TRACE_VALUE, data,
                                      f"exceeds the limit 2**40 = {MAX_TRACE_VALUE}"))
    return data.astype(np.int64)


def _entry_error(path: str | Path, what: str, bad: np.ndarray, data: np.ndarray,
                 why: str) -> str:
    """`path: <what> [i, j] = v <why>` for the first entry where `bad` holds."""
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    where = f"#{index[0]}" if len(index) == 1 else f"[{', '.join(map(str, index))}]"
    return f"{path}: {what} {where} = {data[index]} {why}"


@dataclass(frozen=True)
class RoutingTrace:
    """An MoE expert-routing trace: `data[b, k]` = the k-th expert of token b."""

    data: np.ndarray  # int64 [B, K]
    experts: int

    @classmethod
    def load(cls, path: str | Path, experts: int) -> RoutingTrace:
        """Read and check a routing trace: an `.npz` whose `data` is an integer
        array [B, K] (B, K >= 1) of expert ids in [0, experts), no token
        routed twice to the same expert."""
        what = "routing trace"
        raw = read_trace_array(path, what, member="data")
        if raw.ndim != 2 or 0 in raw.shape:
            raise TraceError(f"{path}: routing trace must be [B, K] with B, K >= 1, "
                             f"got shape {raw.shape}")
        data = _integral(raw, path, "expert id")
        out_of_range = (data < 0) | (data >= experts)
        if out_of_range.any():
            raise TraceError(_entry_error(path, "expert id", out_of_range, data,
                                          f"is out of range [0, {experts})"))
        ordered = np.sort(data, axis=1)
        twice = np.argwhere(ordered[:, 1:] == ordered[:, :-1])
        if twice.size:
            b, k = (int(i) for i in twice[0])
            raise TraceError(f"{path}: token {b} is routed to expert {ordered[b, k]} twice "
                             f"(row {b} = {data[b].tolist()})")
        return cls(data, experts)

    @property
    def batch(self) -> int:
        return int(self.data.shape[0])

    @property
    def top_k(self) -> int:
        return int(self.data.shape[1])

    @property
    def counts(self) -> list[int]:
        """`c_e`: tokens routed to each expert (bincount)."""
        return np.bincount(self.data.ravel(), minlength=self.experts).astype(int).tolist()

    def tiles(self, tile_n: int | None) -> list[int]:
        """`T_e`: token tiles per expert, `ceil(c_e / tN)`; dynamic (None): `[c_e > 0]`."""
        if tile_n is None:
            return [int(c > 0) for c in self.counts]
        return [-(-c // tile_n) for c in self.counts]

    def multi_hot(self) -> np.ndarray:
        """`M[b, e] = 1` iff expert e is among token b's experts."""
        m = np.zeros((self.batch, self.experts), dtype=np.int64)
        np.put_along_axis(m, self.data, 1, axis=1)
        return m

    def one_hot(self) -> np.ndarray:
        """`O[b, k, e] = 1` iff `data[b, k] = e`."""
        o = np.zeros((self.batch, self.top_k, self.experts), dtype=np.int64)
        np.put_along_axis(o, self.data[..., None], 1, axis=2)
        return o


@dataclass(frozen=True)
class KVTrace:
    """A batch of KV-cache lengths `x_i` (attention decode)."""

    lengths: np.ndarray  # int64 [B]
    tile_n: int = 32

    @classmethod
    def load(cls, path: str | Path, tile_n: int = 32) -> KVTrace:
        """Read and check a KV-length trace: an `.npy` of B >= 1 integer
        lengths in [0, 2**40]."""
        what = "KV-length trace"
        raw = read_trace_array(path, what)
        if raw.ndim != 1 or raw.size == 0:
            raise TraceError(f"{path}: KV-length trace must be 1-D with at least one "
                             f"length, got shape {raw.shape}")
        data = _integral(raw, path, "KV length")
        bad = (data < 0) | (data > MAX_TRACE_VALUE)
        if bad.any():
            raise TraceError(_entry_error(path, "KV length", bad, data,
                                          "is out of range [0, 2**40]"))
        return cls(data, tile_n)

    @property
    def batch(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def seq_len(self) -> list[int]:
        """KV tiles per request including room for the new token: `ceil((x+1)/tN)`."""
        return [-(-(int(x) + 1) // self.tile_n) for x in self.lengths]

    @property
    def offset(self) -> list[int]:
        """Row of the last tile where the new key/value row goes: `x mod tN`."""
        return [int(x) % self.tile_n for x in self.lengths]
