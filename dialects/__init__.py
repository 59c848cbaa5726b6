"""The steplus dialects: `step`, `lus`, `sync` (and helper dialects such as `ila`, `target`).

`get_all_dialects()` returns lazy factories, the way xDSL's own registry does, so
that tools import a dialect module only when it is used.
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Name -> factory for every dialect steplus defines."""

    def get_step() -> Dialect:
        from steplus.dialects.step import Step

        return Step

    def get_lus() -> Dialect:
        from steplus.dialects.lus import Lus

        return Lus

    def get_sync() -> Dialect:
        from steplus.dialects.sync import Sync

        return Sync

    def get_ila() -> Dialect:
        from steplus.dialects.ila import Ila

        return Ila

    def get_target() -> Dialect:
        from steplus.dialects.target.attrs import Target

        return Target

    def get_pim() -> Dialect:
        from steplus.dialects.pim import Pim

        return Pim

    return {"step": get_step, "lus": get_lus, "sync": get_sync, "ila": get_ila,
            "target": get_target, "pim": get_pim}
