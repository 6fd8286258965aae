"""The Dask fan-out of ``xcc regress``: :mod:`xcc.parallel`, shared with ``xcc tune``."""

from xcc.parallel import cache_dir, map_units

__all__ = ["cache_dir", "map_units"]
