# pyright: strict
"""The size limits of the ILA accelerators (FlexASR, HLSCNN, VTA), each written once.

Instruction selection (`passes/isel/terms.py`, `fused.py` and the host remarks
of `passes/isel/__init__.py`) only maps an operation onto an accelerator whose
registers and buffers can hold it, and the drivers that emit the accelerator's
commands (`runtime/ila/*_driver.py`, `lowering/ila_to_commands.py`) refuse the
same shapes; both read these numbers, so they cannot disagree. Each limit is a
register field's width or a buffer's size in the accelerator's ILA model
(`runtime/ila/{flexasr,hlscnn,vta}.py`).

Example:

```python
from steplus.dialects.target.ila import HLSCNN, VTA
HLSCNN.max_stride, HLSCNN.max_output_positions   # (7, 8192)
VTA.max_gemm_blocks                              # 1023
```
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlexasrLimits:
    """FlexASR: vectors of 16 AdaptivFloat values; `num_vector` fields are 8 bits wide."""

    vector: int = 16
    """Values per vector (a hidden or feature size is a multiple of it)."""
    max_vectors: int = 255
    """Vectors per timestep (the 8-bit `num_vector_1/2` fields)."""

    pes: int = 4
    """Processing elements; a layer's output vectors are split evenly over them (`lanes` = 4 x 16)."""
    pe_weight_bytes: int = 1 << 20
    """Each PE's weight buffer (1 MiB, spec §1.3): tiles of 16x16 codes, 256 B each."""
    pe_input_vectors: int = 256
    """Vectors of a PE's input buffer that MMIO reaches (4 KiB of the declared 1 MiB, spec §1.3)."""
    pe_act_vectors: int = 32
    """Each PE's act buffer (512 B): an LSTM keeps one cell-state vector per output vector there."""

    @property
    def max_features(self) -> int:
        """The largest feature size one layer handles (`vector x max_vectors` = 4080)."""
        return self.vector * self.max_vectors

    @property
    def lanes(self) -> int:
        """Outputs a call's width is padded to a multiple of: 4 PEs x 16 lanes = 64."""
        return self.pes * self.vector

    def lstm_failures(self, features: int, hidden: int) -> list[str]:
        """Why the LSTM driver cannot hold a layer of `features` inputs and `hidden` units (padded to
        nvi = ceil(features/16) input vectors and npe = ceil(hidden/64) hidden vectors per PE, 4·npe
        in all), as text; [] when it can.  Every PE holds its npe hidden vectors' rows of the four gates:
        4·npe·(nvi + 4·npe) weight tiles of 256 B in its weight buffer, and in its input buffer the
        input x (nvi vectors), the gate biases, h and the zero biases of the recurrent manager (4·npe
        vectors each); the act buffer holds the npe cell-state vectors.  With features == hidden the
        largest layer is 704 wide (npe = 11: 44·88 tiles = 968 KiB)."""
        nvi = -(-features // self.vector)
        npe = -(-hidden // self.lanes)
        nvo = self.pes * npe
        tiles = nvo * (nvi + nvo)
        checks = [
            (256 * tiles <= self.pe_weight_bytes,
             f"a PE's weights need 4 gates x {npe} x ({nvi} + {nvo}) tiles of 256 B = {256 * tiles >> 10} KiB "
             f"> {self.pe_weight_bytes >> 10} KiB"),
            (nvi + 3 * nvo <= self.pe_input_vectors,
             f"a PE's input buffer needs {nvi} input + 3 x {nvo} bias and state vectors = {nvi + 3 * nvo} "
             f"> {self.pe_input_vectors}"),
            (npe <= self.pe_act_vectors,
             f"a PE's act buffer holds {self.pe_act_vectors} cell-state vectors, the layer needs {npe}"),
        ]
        return [text for ok, text in checks if not ok]


@dataclass(frozen=True)
class HlscnnLimits:
    """HLSCNN: the fields of its configuration registers and its two scratchpads."""

    max_filters: int = 255
    """K (8-bit field)."""
    max_kernel: int = 255
    """KH, KW (8-bit fields)."""
    max_stride: int = 7
    """Vertical and horizontal stride (3-bit fields)."""
    max_height: int = 1023
    """H and W of the input (10-bit fields)."""
    max_channels: int = 4095
    """C of the input (12-bit field)."""
    spad_bytes: int = 128 << 10
    """Each scratchpad (SPAD0 activations, SPAD1 outputs)."""
    out_value_bytes: int = 16
    """Bytes one output position takes in SPAD1."""

    @property
    def max_output_positions(self) -> int:
        """K x H x W must fit SPAD1: 128 KiB / 16 B = 8192."""
        return self.spad_bytes // self.out_value_bytes


@dataclass(frozen=True)
class VtaLimits:
    """VTA: 16x16 GEMM blocks, its micro-op and on-chip buffers (entries of 16 values)."""

    block: int = 16
    uop_entries: int = 1024
    """Micro-op buffer entries; a dense fragment uses one per weight block plus one."""
    inp_rows: int = 2048
    """Input buffer rows (M x K/16 of a fragment)."""
    wgt_blocks: int = 1024
    """Weight buffer blocks of 16x16."""
    acc_rows: int = 2048
    """Accumulator rows (M x N/16 of a fragment)."""

    @property
    def max_gemm_blocks(self) -> int:
        """Weight blocks of one dense fragment: N/16 x K/16 <= uop_entries - 1 (and <= wgt_blocks)."""
        return min(self.uop_entries - 1, self.wgt_blocks)


FLEXASR = FlexasrLimits()
HLSCNN = HlscnnLimits()
VTA = VtaLimits()
