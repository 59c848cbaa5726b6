"""What step-opt and step-run know about: dialects and passes, as lazy factories.

The dialects come from `steplus.dialects.program_dialects` (every layer may
build a context); the passes are listed here.

Every pass of steplus is listed here by its command-line name. The factory
imports the pass module only when the pass is used, so the tools start fast.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass

from steplus.dialects import get_all_dialects as get_steplus_dialects
from steplus.dialects.program_dialects import MIXED_IN_XDSL_DIALECTS, get_all_dialects

__all__ = ["MIXED_IN_XDSL_DIALECTS", "STEPLUS_UNIVERSE", "get_all_dialects", "get_all_passes",
           "get_default_checks"]


def _lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def factory() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(module), cls)

    return factory


# name -> (module, class). Add a line here when you add a pass.
_PASSES: dict[str, tuple[str, str]] = {
    "lus-clock-analysis": ("steplus.passes.lus.clocks", "LusClockAnalysisPass"),
    "lus-causality": ("steplus.passes.lus.causality", "LusCausalityPass"),
    "lus-initialization": ("steplus.passes.lus.initialization", "LusInitializationPass"),
    "lus-inline-instances": ("steplus.passes.lus.inline", "LusInlineInstancesPass"),
    "lus-normalize": ("steplus.passes.lus.normalize", "LusNormalizePass"),
    "convert-lus-to-sync": ("steplus.lowering.lus_to_sync", "ConvertLusToSyncPass"),
    "convert-sync-to-std": ("steplus.lowering.sync_to_std", "ConvertSyncToStdPass"),
    "step-infer-shapes": ("steplus.passes.step.infer_shapes", "StepInferShapesPass"),
    "step-metrics": ("steplus.passes.step.metrics", "StepMetricsPass"),
    "step-specialize": ("steplus.passes.step.specialize", "StepSpecializePass"),
    "step-dynamic-parallelize": ("steplus.passes.step.dynamic_parallelize",
                                 "StepDynamicParallelizePass"),
    "step-dynamic-tiling": ("steplus.passes.step.dynamic_tiling", "StepDynamicTilingPass"),
    "step-hierarchical-tiling": ("steplus.passes.step.hierarchical_tiling",
                                 "StepHierarchicalTilingPass"),
    "step-print-dot": ("steplus.passes.step.print_dot", "StepPrintDotPass"),
    "step-time-multiplex": ("steplus.passes.step.time_multiplex", "StepTimeMultiplexPass"),
    "step-kernelize": ("steplus.passes.sn40l.kernelize", "StepKernelizePass"),
    "step-allocate-units": ("steplus.passes.sn40l.allocate_units", "StepAllocateUnitsPass"),
    "step-allocate-memory": ("steplus.passes.sn40l.allocate_memory", "StepAllocateMemoryPass"),
    "convert-step-to-runtime": ("steplus.lowering.step_to_runtime", "ConvertStepToRuntimePass"),
    "convert-linalg-to-step": ("steplus.lowering.linalg_to_step", "ConvertLinalgToStepPass"),
    "isel": ("steplus.passes.isel", "IselPass"),
    "isel-verify": ("steplus.passes.isel.equivalence", "IselVerifyPass"),
    "convert-ila-to-commands": ("steplus.lowering.ila_to_commands", "ConvertIlaToCommandsPass"),
    "ila-cancel-store-load": ("steplus.passes.ila_cancel", "IlaCancelStoreLoadPass"),
    "pim-orchestrate": ("steplus.passes.allspark.ir", "PimOrchestratePass"),
    "pim-verify-schedule": ("steplus.passes.allspark.ir", "PimVerifySchedulePass"),
    "pim-lower-phases": ("steplus.passes.allspark.lower", "PimLowerPhasesPass"),
    "convert-torch-to-pim": ("steplus.lowering.torch_to_pim", "ConvertTorchToPimPass"),
}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Name -> factory for every steplus pass."""
    return {name: _lazy(module, cls) for name, (module, cls) in _PASSES.items()}


# Analyses step-opt runs on every input that contains ops of a dialect, before
# the pipeline (disabled with --no-lus-checks).  dialect -> pass names.
_DEFAULT_CHECKS: dict[str, tuple[str, ...]] = {
    "lus": ("lus-clock-analysis", "lus-causality", "lus-initialization"),
}


def get_default_checks() -> dict[str, tuple[str, ...]]:
    """Dialect name -> the check passes step-opt runs on inputs using it."""
    return dict(_DEFAULT_CHECKS)


def _steplus_universe():
    from xdsl.universe import Universe

    return Universe(all_dialects=dict(get_steplus_dialects()), all_passes=get_all_passes())


STEPLUS_UNIVERSE = _steplus_universe()
"""The `xdsl.universe` entry point (pyproject.toml): plain `xdsl-opt` and other
xDSL tools load the steplus dialects and passes from it. Only steplus' own
dialects: the extended `tosa`/`linalg`/`builtin` of `get_all_dialects` would
clash with xDSL's, so in `xdsl-opt` those ops are the upstream ones."""
