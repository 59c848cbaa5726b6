"""README's D2A table, last column ("ILA vs torch"), is what `bench/isel_models.py` prints for it:
`--inputs 5 --reference-inputs 0 --no-counts` (seed 0, isel onto all three targets in flexible mode, the
ILA run against the float torch module).  The counts columns are `bench/guide_numbers.py`'s
`isel_table` check; this is the accuracy column's.  The bench run takes minutes (slow); the fast
test checks the README's cells are in the forms the bench's lines map to."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO

README = REPO / "README.md"
BENCH = REPO / "bench" / "isel_models.py"
NAMES = {"efficientnet_b0": "EfficientNet-B0", "lstm_wlm": "LSTM-WLM", "mobilenetv2": "MobileNet-V2",
         "resmlp": "ResMLP", "resnet20": "ResNet-20", "transformer": "Transformer"}


def readme_column() -> dict[str, str]:
    """Application -> its README cell of the "ILA vs torch" column."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("<!-- guide-numbers: isel_table -->") + 1
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    col = head.index("ILA vs torch")
    out = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out[cells[0]] = cells[col]
    return out


def readme_form(text: str) -> str:
    """A bench line's comparison as the README writes it."""
    if m := re.fullmatch(r"top-1 agreement (\d+/\d+)", text):
        return f"top-1 {m[1]}"
    if m := re.search(r", next-token agreement (\d+\.\d)%$", text):
        return f"next token {m[1]} %"
    if m := re.fullmatch(r"argmax-feature agreement (\d+\.\d)%, rel\. error (\d+\.\d\d)%", text):
        return f"argmax {m[1]} %, {m[2]} % rel. error"
    raise ValueError(f"not a comparison the bench prints: {text!r}")


def bench_column(stdout: str) -> dict[str, str]:
    """Application -> the README form of the bench's application-level line."""
    out = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"  (\w+)\s+(.*?)   \(\d+\.\d\d s simulated per input\)", line)
        if m and m[1] in NAMES:
            out[NAMES[m[1]]] = readme_form(m[2])
    return out


def test_readme_cells_are_in_the_benchs_forms():
    column = readme_column()
    assert sorted(column) == sorted(NAMES.values())
    forms = {"top-1 agreement 5/5": "top-1 5/5",
             "perplexity float 274.21 ILA 275.02 (rel. err. 0.30%), next-token agreement 99.4%": "next token 99.4 %",
             "argmax-feature agreement 93.8%, rel. error 3.69%": "argmax 93.8 %, 3.69 % rel. error"}
    for text, cell in forms.items():
        assert readme_form(text) == cell
    for cell in column.values():
        assert re.fullmatch(r"top-1 \d/5|next token \d+\.\d %|argmax \d+\.\d %, \d+\.\d\d % rel\. error", cell), cell
    line = "  resnet20        top-1 agreement 4/5   (0.22 s simulated per input)"
    assert bench_column(line) == {"ResNet-20": "top-1 4/5"}


@pytest.mark.slow  # minutes: isel onto the three targets and five ILA runs for each of the six applications
def test_readme_column_is_the_benchs():
    proc = subprocess.run([sys.executable, str(BENCH), "--inputs", "5", "--reference-inputs", "0", "--no-counts"],
                          cwd=REPO, capture_output=True, text=True, timeout=3600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert bench_column(proc.stdout) == readme_column()
