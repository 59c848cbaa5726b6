"""nn.LSTM / nn.GRU over a static sequence (issue 26 item 3): the recurrence unrolled in one
graph (`rnn.py`), a cell per (layer, step), the state streaming on chip from step to
step; on the fabric's functional mode the output sequence and the final states equal
torch's (rtol 1e-5, f32), and the part simulates. A bidirectional recurrence is a remark
and runs in torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
# torch.export's own note on nn.LSTM/GRU's cached flat weights (they are the parameters)
pytestmark = pytest.mark.filterwarnings("ignore:The tensor attributes:UserWarning")

from steplus.dialects.step import ops as so  # noqa: E402
from steplus.lowering.linalg_to_step.aten import lower_exported  # noqa: E402
from steplus.tools.step_run_linalg import part_cycles, run_exported  # noqa: E402


class LSTMTagger(nn.Module):
    """The PyTorch tutorial's sequence model: a 2-layer LSTM (seq first) and a linear head;
    the final states returned as well."""

    def __init__(self, dim=8, hidden=16, tags=4):
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, num_layers=2)
        self.hidden2tag = nn.Linear(hidden, tags)

    def forward(self, x, state):
        out, (h, c) = self.lstm(x, state)
        return torch.sigmoid(self.hidden2tag(out)), h, c


class GRUEncoder(nn.Module):
    """A batch-first GRU from a zero state (h0 omitted)."""

    def __init__(self, dim=8, hidden=16):
        super().__init__()
        self.gru = nn.GRU(dim, hidden, batch_first=True)

    def forward(self, x):
        out, h = self.gru(x)
        return out, h


def _functions(part) -> list[str]:
    return [a.fn.data for a in part.module.walk() if isinstance(a, so.ApplyOp)]


def test_lstm_unrolled_on_the_fabric_equals_torch():
    torch.manual_seed(0)
    m = LSTMTagger().eval()
    T, B = 5, 2
    x = torch.randn(T, B, 8)
    state = (torch.randn(2, B, 16), torch.randn(2, B, 16))
    ep = torch.export.export(m, (x, state))
    low = lower_exported(ep, dense="tile=2x16")
    out, ran, torch_ops = run_exported(ep, low, (x, state))
    for got, want in zip(out, m(x, state)):
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["rnn", "projection"] and torch_ops == []
    rnn = low.graphs[0]
    fns = _functions(rnn)
    assert fns.count("matmul") == 2 * T * 8  # per layer and step: 4 gates x (x, h)
    assert fns.count("sigmoid") == 2 * T * 3 and fns.count("tanh") == 2 * T * 2
    # outputs: the sequence (T stores), h_n and c_n (2 layers each)
    stores = [o for o in rnn.module.walk() if isinstance(o, so.LinearOffChipStoreOp)]
    assert len(stores) == T + 2 + 2
    assert part_cycles(rnn) > 0


def test_gru_batch_first_from_a_zero_state_equals_torch():
    torch.manual_seed(1)
    m = GRUEncoder().eval()
    x = torch.randn(2, 6, 8)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x16")
    (out, h), ran, torch_ops = run_exported(ep, low, (x,))
    want_out, want_h = m(x)
    np.testing.assert_allclose(out.numpy(), want_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), want_h.detach().numpy(), rtol=1e-5, atol=1e-6)
    # the zero h0 is no tensor: the first step reads no h matmul, torch computes nothing
    assert ran == ["rnn"] and torch_ops == []
    fns = _functions(low.graphs[0])
    assert fns.count("matmul") == 6 * 3 + 5 * 3  # x: every step; h: steps 1..5 (3 gates)
    assert part_cycles(low.graphs[0]) > 0


class ConstantStateRNN(nn.Module):
    """Initial states written with creation ops in `forward`: an LSTM from zeros (both
    states omitted) and a GRU from `torch.full(..., 0.5)`."""

    def __init__(self, dim=8, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, num_layers=2)
        self.gru = nn.GRU(hidden, hidden)

    def forward(self, x):
        out, _ = self.lstm(x)
        h0 = torch.full((1, x.shape[1], 16), 0.5)
        out2, h = self.gru(out, h0)
        return out2, h


def test_constant_initial_states_are_folded_into_the_first_step():
    """torch's zeros (LSTM h0, c0) and full(0.5) (GRU h0) are no off-chip tensors and
    nothing torch computes: the first step's h W_h^T is the row c * W_h.sum(1) added to
    its biases, its c update reads the scalar; the fabric equals torch."""
    torch.manual_seed(3)
    m = ConstantStateRNN().eval()
    T, B = 4, 2
    x = torch.randn(T, B, 8)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=2x16")
    (out, h), ran, torch_ops = run_exported(ep, low, (x,))
    want_out, want_h = m(x)
    np.testing.assert_allclose(out.numpy(), want_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), want_h.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ran == ["rnn", "rnn"] and torch_ops == []
    lstm, gru = low.graphs
    assert _functions(lstm).count("matmul") == 2 * (T * 4 + (T - 1) * 4)
    assert _functions(gru).count("matmul") == T * 3 + (T - 1) * 3
    assert not any("h0_" in n or "c0_" in n for n in lstm.inputs.values())
    assert {n.split(":")[0] for n in lstm.inputs.values()} == {"lstm"}  # node:what
    assert {n.split(":")[0] for n in gru.inputs.values()} == {"gru"}


def test_a_bidirectional_lstm_is_a_remark_and_runs_in_torch():
    m = nn.LSTM(4, 8, bidirectional=True).eval()
    x = torch.randn(3, 1, 4)
    ep = torch.export.export(m, (x,))
    low = lower_exported(ep, dense="tile=1x8")
    assert any(r.message == "aten.lstm.input not lowered: a bidirectional recurrence is not "
               "lowered" for r in low.remarks)
    outs, ran, torch_ops = run_exported(ep, low, (x,))  # output, h_n, c_n
    np.testing.assert_allclose(outs[0].numpy(), m(x)[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    assert "aten.lstm.input" in torch_ops and ran == []
