"""Writing a tool's outputs to `--output` (`.npz` by name, `.npy` for one): step-run's graph and
function runs share it.  Apart from `graph_io` (which re-exports it), so that a function run on
the ILA simulators does not import the step dialect and the fabric placement to save its results.

    save_outputs("y.npz", {"out0": y})
"""

from __future__ import annotations

import zipfile

import numpy as np

from steplus.tools.cli import InputError, UsageError

__all__ = ["save_outputs"]


def save_outputs(path: str, outputs: dict[str, np.ndarray]) -> None:
    """`.npz`: every output by name; `.npy`: the only one (a usage error otherwise)."""
    if path.endswith(".npy"):
        if len(outputs) != 1:
            names = ", ".join(outputs) or "none"
            raise UsageError(f"--output {path}: there are {len(outputs)} outputs ({names}); "
                             "an .npy file holds one: use an .npz --output")
        arrays = list(outputs.values())
    elif not path.endswith(".npz"):
        raise UsageError(f"--output {path}: expected an .npz (or, for one output, .npy) file")
    try:
        with open(path, "wb") as f:  # a file object: numpy appends no extension
            if path.endswith(".npy"):
                np.save(f, arrays[0], allow_pickle=False)
            else:  # np.savez's layout; any output name (np.savez reserves `allow_pickle`)
                with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
                    for name, arr in outputs.items():
                        with z.open(f"{name}.npy", "w", force_zip64=True) as member:
                            np.lib.format.write_array(member, np.asanyarray(arr),
                                                      allow_pickle=False)
    except OSError as e:
        raise InputError([f"{path}: error: cannot write output: {e.strerror or e}"]) from None
