"""FlexASR ILA: MMIO interface, global buffer, four PEs, bit-accurate numerics.

Commands are dicts `{"wr": 0|1, "rd": 0|1, "addr": 32-bit, "data": 128-bit}`.
The address map, configuration fields and trigger semantics follow
`spec/accelerator-ilas.md` §1 (base `GB = 0x33000000`, a parameter).  The
triggers (GB_CONTROL_START: linear layers and LSTMs; GB_LAYER_REDUCE_START:
temporal max/mean/add pooling; GB_ZERO_PADDING_START; GB_LAYER_NORM_START;
GB_ATTENTION_START) execute their child ILA to completion.

Example::

    sim = FlexAsr()
    sim.step(write(GB + 0x500000, 0x7A))          # GB_CORE_STORE_LARGE
    sim.step(read(GB + 0x500000)); sim.data_out[0] == 0x7A
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias, cast, overload

import numpy as np
import numpy.typing as npt

from steplus.runtime.ila.core import (Bv, BvOps, Command, Cond, Ila, IlaError, State, StateView, Z3State,
                                      data_bytes, field_value)
from steplus.runtime.ila.flexasr_units import attention, layer_norm, layer_reduce, pe_timestep

if TYPE_CHECKING:
    import z3

GB = 0x33000000
MIB = 1 << 20

# a configuration register field: (name, width in bits, byte offset in the data word, bytes)
Field: TypeAlias = tuple[str, int, int, int]

# config instruction -> (offset from its unit base, [(field, width, byte, nbytes)])
GB_CONFIGS: dict[str, tuple[int, list[Field]]] = {
    "CONFIG_GB_CORE_MEM_MNGR_LARGE": (0x400010, [
        f for i in range(4) for f in ((f"num_vector_{i}", 8, 4 * i, 1), (f"base_large_{i}", 16, 4 * i + 2, 2))
    ]),
    "CONFIG_GB_CORE_MEM_MNGR_SMALL": (0x400020, [(f"base_small_{i}", 16, 2 * i, 2) for i in range(8)]),
    "CONFIG_GB_CONTROL": (0x700010, [
        ("is_valid", 1, 0, 1), ("mode", 3, 1, 1), ("is_rnn", 1, 2, 1), ("mem_idx_1", 3, 4, 1),
        ("mem_idx_2", 3, 5, 1), ("num_vector_1", 8, 6, 1), ("num_vector_2", 8, 7, 1),
        ("num_timestep", 16, 8, 2)]),
    "CONFIG_GB_LAYER_REDUCE": (0x800010, [
        ("is_valid", 1, 0, 1), ("mode", 3, 1, 1), ("mem_idx", 3, 4, 1), ("num_vector", 8, 6, 1),
        ("num_timestep", 16, 8, 2)]),
    "CONFIG_GB_LAYER_NORM": (0x900010, [
        ("is_valid", 1, 0, 1), ("mode", 3, 1, 1), ("mem_idx", 3, 4, 1), ("num_vector", 8, 6, 1),
        ("num_timestep", 16, 8, 2), ("adpbias_1", 3, 12, 1), ("adpbias_3", 3, 14, 1),
        ("adpbias_4", 3, 15, 1)]),
    "CONFIG_GB_ZERO_PADDING": (0xA00010, [
        ("is_valid", 1, 0, 1), ("mem_idx", 3, 4, 1), ("num_vector", 8, 6, 1),
        ("num_ts_1", 16, 8, 2), ("num_ts_2", 16, 10, 2)]),
    "CONFIG_GB_ATTENTION": (0xB00010, [
        ("is_valid", 1, 0, 1), ("mem_idx_1", 3, 4, 1), ("mem_idx_2", 3, 5, 1), ("num_vector", 8, 6, 1),
        ("num_timestep", 16, 8, 2)] + [(f"adpbias_{k}", 3, 11 + k, 1) for k in range(1, 5)]),
}
_MNGR: list[Field] = [("zero_active", 1, 0, 1), ("adpbias_w", 3, 1, 1), ("adpbias_b", 3, 2, 1),
         ("adpbias_i", 3, 3, 1), ("num_input", 8, 4, 2), ("base_weight", 16, 6, 2),
         ("base_bias", 16, 8, 2), ("base_input", 16, 10, 2)]
PE_CONFIGS: dict[str, tuple[int, list[Field]]] = {
    "CONFIG_RNN_LAYER_SIZING": (0x400010, [
        ("is_valid", 1, 0, 1), ("is_zero_first", 1, 1, 1), ("is_cluster", 1, 2, 1),
        ("is_bias", 1, 3, 1), ("num_manager", 4, 4, 1), ("num_output", 8, 5, 1)]),
    "CONFIG_MEM_MNGR_FIRST": (0x400020, [(f"m0_{n}", w, b, k) for n, w, b, k in _MNGR]),
    "CONFIG_MEM_MNGR_SECOND": (0x400040, [(f"m1_{n}", w, b, k) for n, w, b, k in _MNGR]),
    "CONFIG_ACT_MNGR": (0x800010, [
        ("act_is_valid", 1, 0, 1), ("act_is_zero_first", 1, 1, 1), ("act_adpbias", 3, 2, 1),
        ("act_num_inst", 6, 3, 1), ("act_num_output", 8, 4, 2), ("act_buffer_addr_base", 16, 6, 2),
        ("act_output_addr_base", 8, 8, 1)]),
}
GB_UNIT: dict[str, str] = {"CONFIG_GB_CONTROL": "ctrl", "CONFIG_GB_LAYER_REDUCE": "lr", "CONFIG_GB_LAYER_NORM": "ln",
           "CONFIG_GB_ZERO_PADDING": "zp", "CONFIG_GB_ATTENTION": "att",
           "CONFIG_GB_CORE_MEM_MNGR_LARGE": "gb", "CONFIG_GB_CORE_MEM_MNGR_SMALL": "gb"}
STARTS: dict[int, tuple[str, str]] = {1: ("GB_CONTROL_START", "ctrl"), 2: ("GB_LAYER_REDUCE_START", "lr"),
          3: ("GB_LAYER_NORM_START", "ln"), 4: ("GB_ZERO_PADDING_START", "zp"),
          5: ("GB_ATTENTION_START", "att")}
# memory windows: name -> (offset from unit base, length in bytes, memory)
GB_WINDOWS: dict[str, tuple[int, int, str]] = {"LARGE": (0x500000, 0x100000, "gb_large"), "SMALL": (0x600000, 0x4000, "gb_small")}
PE_WINDOWS: dict[str, tuple[int, int, str]] = {"WEIGHT": (0x500000, 0x100000, "wgt"), "INPUT": (0x600000, 0x1000, "inp"),
              "ACT": (0x900000, 0x200, "act")}


def write(addr: int, data: int = 0) -> dict[str, int]:
    """An MMIO write command."""
    return {"wr": 1, "rd": 0, "addr": addr, "data": data}


def read(addr: int) -> dict[str, int]:
    """An MMIO read command."""
    return {"wr": 0, "rd": 1, "addr": addr, "data": 0}


@overload
def gb_addr(t: int, v: int, nv: int, base: int = 0) -> int: ...
@overload
def gb_addr(t: int | npt.NDArray[np.integer], v: int | npt.NDArray[np.integer], nv: int,
            base: int = 0) -> npt.NDArray[np.int64]: ...
def gb_addr(t: int | npt.NDArray[np.integer], v: int | npt.NDArray[np.integer], nv: int,
            base: int = 0) -> int | npt.NDArray[np.int64]:
    """Byte offset of vector v of timestep t in a GB-large region (§1.4.3): an int (numpy
    integer) for int t and v, an array when either is one."""
    t = np.asarray(t)
    return base + (t // 16) * (nv * 256) + (t % 16) * 16 + np.asarray(v) * 256


def region_end(t_last: int, nv: int, base: int = 0) -> int:
    """One past the last byte of timesteps 0 to `t_last` of an `nv`-vector GB-large region at byte
    `base` (gb_addr grows with t and v: the last vector ends it). The one home of the bound that
    `FlexAsr._fits` refuses past and `flexasr_vec` models within."""
    return int(gb_addr(t_last, nv - 1, nv, base)) + 16


def pe_base(p: int, gb: int = GB) -> int:
    """Base address of PE p's unit (the GB is unit 0)."""
    return gb + (p + 1) * 0x01000000


class FlexAsr(Ila):
    """The FlexASR ILA (global buffer + 4 PEs); `base` rebases the address map."""

    def __init__(self, base: int = GB) -> None:
        super().__init__("flexasr", {"wr": 1, "rd": 1, "addr": 32, "data": 128})
        self.base = base
        self.data_out: list[int] = [0] * 16
        self.vir_output: dict[int, int] = {}
        self.valid = lambda o, i, s: o.and_(
            o.or_(o.eq(i["wr"], 1), o.eq(i["rd"], 1)),
            o.ule(base, i["addr"]), o.ule(i["addr"], base + 0x04FFFFFF))
        self.mem("gb_large", MIB)
        self.mem("gb_small", 0x4000)
        for p in range(4):
            self.mem(f"pe{p}_wgt", MIB)
            self.mem(f"pe{p}_inp", MIB)
            self.mem(f"pe{p}_act", 0x200)
        self.reg("top_interrupt_request", 1)
        self._build()

    # -- decode helpers ---------------------------------------------------
    @staticmethod
    def _w(o: BvOps, i: Mapping[str, Bv]) -> Cond:
        return o.and_(o.eq(i["wr"], 1), o.eq(i["rd"], 0))

    @staticmethod
    def _r(o: BvOps, i: Mapping[str, Bv]) -> Cond:
        return o.and_(o.eq(i["rd"], 1), o.eq(i["wr"], 0))

    def _config(self, name: str, addr: int, fields: list[Field], prefix: str) -> None:
        for f, w, _, _ in fields:
            self.reg(prefix + f, w)

        def upd(s: State, i: Command) -> None:
            for f, _, b, k in fields:
                s.set(prefix + f, field_value(i["data"], b, k))

        def z3_upd(st: Z3State, i: Mapping[str, z3.BitVecRef]) -> Z3State:
            import z3

            return {prefix + f: z3.Extract(8 * b + w - 1, 8 * b, i["data"]) for f, w, b, _ in fields}

        self.instr(name, lambda o, i, s: o.and_(self._w(o, i), o.eq(i["addr"], addr)), upd, z3_upd)

    def _window(self, name: str, lo: int, n: int, mem: str, rd: bool) -> None:
        def upd_w(s: State, i: Command) -> None:
            off = i["addr"] - lo
            s.mems[mem][off:off + 16] = data_bytes(i["data"])

        def upd_r(s: State, i: Command) -> None:
            off = i["addr"] - lo
            self.data_out = [int(x) for x in s.mems[mem][off:off + 16]]
            for k, x in enumerate(self.data_out):
                self.vir_output[i["addr"] + k] = x

        def z3_w(st: Z3State, i: Mapping[str, z3.BitVecRef]) -> Z3State:
            import z3

            arr = cast(z3.ArrayRef, st[mem])
            bits = cast(z3.BitVecSortRef, arr.domain()).size()
            off = z3.Extract(bits - 1, 0, i["addr"] - lo)
            for k in range(16):
                arr = z3.Store(arr, off + k, z3.Extract(8 * k + 7, 8 * k, i["data"]))
            return {mem: arr}

        def z3_r(st: Z3State, i: Mapping[str, z3.BitVecRef]) -> Z3State:
            import z3

            arr = cast(z3.ArrayRef, st[mem])
            bits = cast(z3.BitVecSortRef, arr.domain()).size()
            off = z3.Extract(bits - 1, 0, i["addr"] - lo)
            return {"data_out": z3.Concat(*[arr[off + k] for k in reversed(range(16))])}

        mode = self._r if rd else self._w
        self.instr(name, lambda o, i, s: o.and_(mode(o, i), o.ule(lo, i["addr"]),
                                                o.ule(i["addr"], lo + n - 16)),
                   upd_r if rd else upd_w, z3_r if rd else z3_w)

    def _build(self) -> None:
        b = self.base
        for name, (off, fields) in GB_CONFIGS.items():
            self._config(name, b + off, fields, GB_UNIT[name] + ".")
        for op, (name, unit) in STARTS.items():
            trig: Callable[[State], None] = getattr(self, "_start_" + unit)

            def dec(o: BvOps, i: Mapping[str, Bv], s: StateView, a: int = b + 0x10 * op, unit: str = unit) -> Cond:
                return o.and_(self._w(o, i), o.eq(i["addr"], a), o.eq(s.get(unit + ".is_valid"), 1))

            def upd(s: State, i: Command, trig: Callable[[State], None] = trig) -> None:
                trig(s)
                s.set("top_interrupt_request", 1)

            self.instr(name, dec, upd)
        for kind, (off, n, mem) in GB_WINDOWS.items():
            self._window(f"GB_CORE_STORE_{kind}", b + off, n, mem, False)
            self._window(f"GB_CORE_LOAD_{kind}", b + off, n, mem, True)
        for p in range(4):
            pb = pe_base(p, b)
            for name, (off, fields) in PE_CONFIGS.items():
                self._config(f"PE{p}_{name}", pb + off, fields, f"pe{p}.")
            self.reg(f"pe{p}.cluster_0", 128)
            self.reg(f"pe{p}.cluster_1", 128)
            self.reg(f"pe{p}.act_vector", 256)
            for k, off in ((0, 0x400030), (1, 0x400050)):
                self.instr(f"PE{p}_CONFIG_CLUSTER_TABLE_{k}",
                           lambda o, i, s, a=pb + off: o.and_(self._w(o, i), o.eq(i["addr"], a)),
                           lambda s, i, p=p, k=k: s.set(f"pe{p}.cluster_{k}", i["data"]))
            for k, off in ((0, 0x800020), (1, 0x800030)):
                def upd_prog(s: State, i: Command, p: int = p, k: int = k) -> None:
                    cur = s.get(f"pe{p}.act_vector")
                    mask = ((1 << 128) - 1) << (128 * k)
                    s.set(f"pe{p}.act_vector", (cur & ~mask) | (i["data"] << (128 * k)))

                self.instr(f"PE{p}_CONFIG_ACT_VECTOR_{16 * k}_{16 * k + 15}",
                           lambda o, i, s, a=pb + off: o.and_(self._w(o, i), o.eq(i["addr"], a)),
                           upd_prog)
            for kind, (off, n, mem) in PE_WINDOWS.items():
                self._window(f"PE{p}_STORE_{kind}", pb + off, n, f"pe{p}_{mem}", False)
            off, n, mem = PE_WINDOWS["ACT"]
            self._window(f"PE{p}_LOAD_ACT", pb + off, n, f"pe{p}_act", True)

    # -- read-back --------------------------------------------------------
    # -- triggers ---------------------------------------------------------
    def _large(self, s: State, idx: int) -> tuple[int, int]:
        """(byte base, vectors per timestep) of GB-large region idx."""
        if not 0 <= idx < 4:  # a 3-bit mem_idx field: 4 to 7 name no region
            raise IlaError(f"flexasr: memory index {idx} names no GB-large region (0 to 3)")
        return 16 * s.get(f"gb.base_large_{idx}"), s.get(f"gb.num_vector_{idx}")

    @staticmethod
    def _fits(s: State, name: str, what: str, t_last: int, nv: int, base: int, mem: str = "gb_large",
              end: int | None = None) -> None:
        """IlaError naming instruction `name` unless a region (timesteps up to `t_last` of `nv`
        vectors at byte `base` of GB-large, or ending at byte `end` of `mem`) fits its buffer:
        numpy slicing would clip a write and shorten a read silently."""
        if nv <= 0 or t_last < 0:
            return
        if end is None:
            end = region_end(t_last, nv, base)
        size = len(s.mems[mem])
        if end > size:
            raise IlaError(f"flexasr: {name}: {what} ends at byte {end}, past the {size}-byte "
                           f"{mem}")

    def _start_ctrl(self, s: State) -> None:
        def g(f: str) -> int:
            return s.get("ctrl." + f)

        T, mode = g("num_timestep"), g("mode")
        pes = [p for p in range(4) if s.get(f"pe{p}.is_valid")]
        if len(pes) != 4:
            raise IlaError("flexasr: GB_CONTROL_START needs all four PEs configured valid")
        base_in, _ = self._large(s, g("mem_idx_1"))
        base_out, _ = self._large(s, g("mem_idx_2"))
        nvi, nvo = g("num_vector_1"), g("num_vector_2")
        gbl = s.mems["gb_large"]
        name = "GB_CONTROL_START"
        if mode > 3:
            raise IlaError(f"flexasr: {name}: mode {mode} names no timestep order (0 to 3)")
        if mode == 3:
            self._fits(s, name, f"the input of {nvi} vectors at gb_small vector "
                       f"{s.get('gb.base_small_0')}", 0, nvi, 0, "gb_small",
                       16 * (s.get("gb.base_small_0") + nvi))
            self._fits(s, name, f"the output of {nvo} vectors at gb_small vector "
                       f"{s.get('gb.base_small_1')}", 0, nvo, 0, "gb_small",
                       16 * (s.get("gb.base_small_1") + nvo))
        elif T > 0:  # the timestep order is linear in c: its largest is at c = 0 or T - 1
            t_last = max({0: c, 1: 2 * c, 2: 2 * (T - c) + 1}[mode] for c in (0, T - 1))
            self._fits(s, name, f"the input region (timestep {t_last} of {nvi} vectors at byte "
                       f"{base_in})", t_last, nvi, base_in)
            self._fits(s, name, f"the output region (timestep {t_last} of {nvo} vectors at byte "
                       f"{base_out})", t_last, nvo, base_out)
        for c in range(T):
            ti = {0: c, 1: 2 * c, 2: 2 * (T - c) + 1, 3: 0}[mode]
            if mode == 3:
                src = s.mems["gb_small"]
                xin = [src[16 * (s.get("gb.base_small_0") + v):][:16] for v in range(nvi)]
            else:
                xin = [gbl[a:a + 16] for a in gb_addr(ti, np.arange(nvi), nvi, base_in)]
            for p in pes:
                bi = s.get(f"pe{p}.m0_base_input")
                buf = s.mems[f"pe{p}_inp"]
                for v in range(nvi):
                    buf[(bi + v) * 16:(bi + v) * 16 + 16] = xin[v]
            outs = []
            for p in pes:
                outs += pe_timestep(s, p)
            for a, vec in outs:
                if mode == 3:
                    o = 16 * (s.get("gb.base_small_1") + a)
                    s.mems["gb_small"][o:o + 16] = vec
                else:
                    o = int(gb_addr(ti, a, nvo, base_out))
                    gbl[o:o + 16] = vec
            if g("is_rnn"):
                for p in pes:
                    bi = s.get(f"pe{p}.m1_base_input")
                    buf = s.mems[f"pe{p}_inp"]
                    for v in range(nvo):
                        o = int(gb_addr(ti, v, nvo, base_out))
                        buf[(bi + v) * 16:(bi + v) * 16 + 16] = gbl[o:o + 16]

    def _start_lr(self, s: State) -> None:
        base, _ = self._large(s, s.get("lr.mem_idx"))
        layer_reduce(s.mems["gb_large"], base, s.get("lr.num_vector"), s.get("lr.num_timestep"),
                     s.get("lr.mode"))

    def _start_zp(self, s: State) -> None:
        base, _ = self._large(s, s.get("zp.mem_idx"))
        nv = s.get("zp.num_vector")
        t1, t2 = s.get("zp.num_ts_1"), s.get("zp.num_ts_2")
        self._fits(s, "GB_ZERO_PADDING_START", f"zero padding of timesteps {t1} to {t2 - 1} of "
                   f"{nv} vectors at byte {base}", t2 - 1 if t2 > t1 else -1, nv, base)
        for t in range(s.get("zp.num_ts_1"), s.get("zp.num_ts_2")):
            for a in gb_addr(t, np.arange(nv), nv, base):
                s.mems["gb_large"][a:a + 16] = 0

    def _start_ln(self, s: State) -> None:
        base, _ = self._large(s, s.get("ln.mem_idx"))
        layer_norm(s, base)

    def _start_att(self, s: State) -> None:
        attention(s, self._large(s, s.get("att.mem_idx_1"))[0], self._large(s, s.get("att.mem_idx_2"))[0])
