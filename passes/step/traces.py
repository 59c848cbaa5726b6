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

from dataclasses import dataclass
from pathlib import Path

import numpy as np


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


@dataclass(frozen=True)
class RoutingTrace:
    """An MoE expert-routing trace: `data[b, k]` = the k-th expert of token b."""

    data: np.ndarray  # int64 [B, K]
    experts: int

    @classmethod
    def load(cls, path: str | Path, experts: int) -> RoutingTrace:
        try:
            with np.load(path, allow_pickle=False) as f:
                if "data" not in f:
                    raise TraceError(f"{path}: no array 'data' in the routing trace")
                data = np.asarray(f["data"], dtype=np.int64)
        except OSError as e:
            raise TraceError(f"{path}: cannot read routing trace: {e.strerror or e}") from None
        except ValueError:
            raise TraceError(f"{path}: not a routing trace (expected a NumPy .npz file "
                             "with an int array 'data' of shape [B, K])") from None
        if data.ndim != 2:
            raise TraceError(f"{path}: routing trace must be [B, K], got shape {data.shape}")
        if data.size and (data.min() < 0 or data.max() >= experts):
            raise TraceError(f"{path}: expert ids must be in [0, {experts}), "
                             f"found {data.min()}..{data.max()}")
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
        try:
            data = np.load(path, allow_pickle=False)
        except OSError as e:
            raise TraceError(f"{path}: cannot read KV-length trace: {e.strerror or e}") from None
        except ValueError:
            raise TraceError(f"{path}: not a KV-length trace (expected a NumPy .npy file "
                             "with a 1-D array of lengths)") from None
        data = np.asarray(data).astype(np.int64)
        if data.ndim != 1:
            raise TraceError(f"{path}: KV-length trace must be 1-D, got shape {data.shape}")
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
