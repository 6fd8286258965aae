"""xcc.passes: the pass manager, the pass registry and the IR passes."""

from xcc.passes.manager import (
    FunctionPass,
    ModulePass,
    PassManager,
    available_passes,
    parse_pipeline,
    pipeline_for_level,
    registered_passes,
)

__all__ = ["FunctionPass", "ModulePass", "PassManager", "available_passes", "parse_pipeline", "pipeline_for_level",
           "registered_passes"]
