"""Where the units of a job execute: in this process, on a Dask ``LocalCluster`` (``--workers N``), or on
an existing Dask cluster (``--scheduler ADDRESS``); shared by ``xcc regress`` (a unit is one kernel of the
corpus) and ``xcc tune`` (a unit is one candidate build).

Each unit is one task; results come back in corpus order whatever order they finish in, and a unit's
result depends only on the unit, so the run's results are the same whatever the parallelism.  Workers are
processes with one thread each (the interpreters hold the GIL); they are given this process's JIT cache
directory, which they use when it exists on their file system.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import contextmanager

from xcc.diagnostics import XccError


def cache_dir() -> str:
    """This process's JIT cache directory, as the cache itself finds it (:func:`xcc.cache.default_directory`:
    ``XCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/xcc``, else ``~/.cache/xcc``)."""
    from xcc.cache import default_directory

    return str(default_directory())


@contextmanager
def _client(workers: int, scheduler: str | None):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - a dependency of xcc
        raise XccError(f"--workers/--scheduler need dask.distributed ({e})") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as e:
            raise XccError(f"--scheduler {scheduler}: cannot connect to the Dask scheduler ({e})") from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        yield client


def map_units(fn: Callable, items: Sequence, workers: int = 1, scheduler: str | None = None,
              progress: Callable[[object], None] | None = None) -> list:
    """``[fn(item, cache_dir) for item in items]``, in order, in-process or on Dask; ``progress(result)`` is
    called as each finishes."""
    shared = cache_dir()
    if workers <= 1 and not scheduler:
        out = []
        for item in items:
            out.append(fn(item, shared))
            if progress:
                progress(out[-1])
        return out
    from dask.distributed import as_completed

    with _client(workers, scheduler) as client:
        futures = [client.submit(fn, item, shared, pure=False) for item in items]  # unique keys: pure=False
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(items)
        for fut in as_completed(futures):
            out[index[fut.key]] = fut.result()
            if progress:
                progress(out[index[fut.key]])
        return out
