"""The ILA modelling core: decode/update, invalid commands, z3 rendering."""

import pytest
import z3

from steplus.runtime.ila.core import Ila, IlaError, bytes_word, data_bytes, field_value


def _toy():
    ila = Ila("toy", {"wr": 1, "addr": 32, "data": 128})
    ila.valid = lambda o, i, s: o.ule(i["addr"], 0xFF)
    ila.reg("r", 8)
    ila.instr("SET_R", lambda o, i, s: o.and_(o.eq(i["wr"], 1), o.eq(i["addr"], 0x10)),
              lambda s, i: s.set("r", i["data"]))
    ila.instr("INC_R", lambda o, i, s: o.and_(o.eq(i["wr"], 1), o.ule(0x10, i["addr"]), o.ule(i["addr"], 0x20)),
              lambda s, i: s.set("r", s.get("r") + 1))
    return ila


def test_step_updates_and_truncates():
    ila = _toy()
    ila.instructions.pop()  # only SET_R
    assert ila.step({"wr": 1, "addr": 0x10, "data": 0x1FF}) == "SET_R"
    assert ila.state.regs["r"] == 0xFF and ila.state.sget("r") == -1
    assert ila.step({"wr": 0, "addr": 0x10, "data": 0}) is None
    with pytest.raises(IlaError, match="outside the interface"):
        ila.step({"wr": 1, "addr": 0x100, "data": 0})


def test_z3_finds_overlapping_decodes():
    ila = _toy()
    assert ila.check_decode_exclusive() == [("SET_R", "INC_R")]
    with pytest.raises(IlaError, match="ambiguous"):
        ila.step({"wr": 1, "addr": 0x10, "data": 0})
    dec = ila.z3_decodes()["INC_R"]
    s = z3.Solver()
    s.add(dec, z3.BitVec("addr", 32) == 0x21)
    assert s.check() == z3.unsat


def test_word_helpers():
    assert data_bytes(0x0102)[:3] == [2, 1, 0]
    assert bytes_word([2, 1]) == 0x0102
    assert field_value(0xA0410010000000001, 8, 2) == 10
