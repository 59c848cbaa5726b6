"""Sources and sinks for hand-built fabric networks in the unit tests."""

from __future__ import annotations

import numpy as np

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
