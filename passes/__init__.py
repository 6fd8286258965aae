"""xcc.passes: the pass manager, the pass registry and the IR passes."""

from xcc.passes.manager import PassManager, pipeline_for_level, registered_passes

__all__ = ["PassManager", "pipeline_for_level", "registered_passes"]
