"""PyTorch modules whose linalg-on-tensors form `convert-linalg-to-step` lowers.

The weights are arguments of `forward` (not `nn.Parameter`s) so that the
imported IR has no large constants: every tensor is a function argument that
the lowering places off-chip (see `docs/guide/pytorch-to-step.md`).

- `SwiGLUFFN`: the SwiGLU expert FFN of the reference workloads (spec §8.1),
  `down(silu(x @ w_gate) * (x @ w_up))`, f32.
- `RMSNorm`, `RowSumMax`, `ReshapeMatmul`: the forms of
  `test/filecheck/lowering/convert-linalg-to-step-forms.mlir` (@rms, @red,
  @resh are torch-mlir's output for them; a test regenerates and compares).

Example::

    import torch
    from steplus.examples.workloads.torch_modules import SwiGLUFFN, swiglu_inputs

    y = SwiGLUFFN()(*swiglu_inputs(64, 256, 512))   # [64, 256]

Needs torch (the `[test]` extra); nothing in steplus imports this module.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


class SwiGLUFFN(torch.nn.Module):
    """SwiGLU FFN: `(silu(x @ w_gate) * (x @ w_up)) @ w_down`.

    Shapes: `x [B, D]`, `w_gate [D, F]`, `w_up [D, F]`, `w_down [F, D]` -> `[B, D]`.
    """

    def forward(self, x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor,
                w_down: torch.Tensor) -> torch.Tensor:
        return (F.silu(x @ w_gate) * (x @ w_up)) @ w_down


def swiglu_inputs(batch: int, hidden: int, inter: int, seed: int = 0,
                  dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """Random `(x, w_gate, w_up, w_down)` of the given sizes (scaled like an init)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, hidden, generator=g, dtype=dtype)
    w_gate = torch.randn(hidden, inter, generator=g, dtype=dtype) / hidden ** 0.5
    w_up = torch.randn(hidden, inter, generator=g, dtype=dtype) / hidden ** 0.5
    w_down = torch.randn(inter, hidden, generator=g, dtype=dtype) / inter ** 0.5
    return x, w_gate, w_up, w_down


class RMSNorm(torch.nn.Module):
    """`x * rsqrt(mean(x^2, -1) + eps) * w` (as the decoder layer's): `x [M, N]`, `w [N]`."""

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


class RowSumMax(torch.nn.Module):
    """Row sums and row maxima: `x [M, N]` -> `([M], [M])`."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.sum(-1), x.amax(-1)


class ReshapeMatmul(torch.nn.Module):
    """`(x.reshape(4, 32) @ w).reshape(2, 2, 16)` for `x [2, 2, 32]`, `w [32, 16]`."""

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (x.reshape(4, 32) @ w).reshape(2, 2, 16)


FORMS = {"rms": (RMSNorm, ((8, 16), (16,))), "red": (RowSumMax, ((8, 16),)),
         "resh": (ReshapeMatmul, ((2, 2, 32), (32, 16)))}
"""name -> (module, argument shapes) of the FileCheck forms torch-mlir produced."""
