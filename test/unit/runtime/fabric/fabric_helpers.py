"""Sources and sinks for hand-built fabric networks in the unit tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.context import Context as XContext
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from steplus.dialects.step import GraphOp
from steplus.dialects.step import ops as so
from steplus.dialects.target.fabric import HardwareConfig, get_preset
from steplus.examples.workloads import graphs as workloads
from steplus.passes.step.specialize import StepSpecializePass
from steplus.runtime.fabric.channel import Element, Tile
from steplus.dialects.target.fabric import STEP_EVAL
from steplus.runtime.fabric.context import DEQ, ENQ, Context
from steplus.runtime.fabric.engine import Simulator


def tile(rows=1, cols=1, nb=4, mu=False, valid=None, value=None):
    return Tile(rows, cols, nb, mu, valid, value)


def num(x: int) -> Tile:
    return Tile(1, 1, 8, value=np.array([[x]]))


class Source(Context):
    """Emits `items` = [(data, level, wait_before)] stamped at its clock."""

    def __init__(self, name, items):
        super().__init__(name)
        self.items = items
        self.out = None

    def body(self):
        for data, level, wait in self.items:
            self.work(wait)
            yield (ENQ, self.out, Element(data, level), self.clock)


class Sink(Context):
    """Records (clock after dequeue, level, data) of everything it receives."""

    def __init__(self, name):
        super().__init__(name)
        self.inp = None
        self.got = []

    def body(self):
        while True:
            el = yield (DEQ, self.inp)
            if el is None:
                return
            self.got.append((self.clock, el.level, el.data))

    @property
    def levels(self):
        return [g[1] for g in self.got]

    @property
    def clocks(self):
        return [g[0] for g in self.got]


def wire(sim, src, dst, src_attr="out", dst_attr="inp", cap=None):
    ch = sim.connect(src, dst, cap)
    for obj, attr in ((src, src_attr), (dst, dst_attr)):
        name, _, idx = attr.partition("[")
        if idx:
            lst = getattr(obj, name)
            i = int(idx[:-1])
            while len(lst) <= i:
                lst.append(None)
            lst[i] = ch
        else:
            setattr(obj, name, ch)
    return ch


def new_sim(cfg=STEP_EVAL):
    return Simulator(cfg)


MIXTRAL_B64_TRACE = (Path(__file__).resolve().parents[4]
                     / "examples/data/step-traces/expert_routing/mixtral_b64/008_010.npz")


def mixtral_b64(tile_n: int | None) -> tuple[ModuleOp, HardwareConfig]:
    """The Mixtral B=64 MoE layer specialized to its shipped trace, and the
    configuration test_fabric_moe pins its cycles with (golden.MOE_CYCLES)."""
    module = workloads.moe(workloads.MODELS["mixtral"], tile_n)
    StepSpecializePass(routing=str(MIXTRAL_B64_TRACE), rewrite=True).apply(XContext(), module)
    graph = next(o for o in module.walk() if isinstance(o, GraphOp))
    cfg = get_preset("step-eval")
    if tile_n is None:
        cfg = cfg.with_(compute_bw=6400)
        for op in graph.body.block.ops:
            if isinstance(op, so.AccumOp) and op.output.name_hint.startswith("acc") \
                    and op.output.name_hint != "acc_out":
                op.attributes["compute_bw"] = IntegerAttr(1024, 64)
    return module, cfg
