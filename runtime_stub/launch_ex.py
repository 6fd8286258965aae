"""``cuLaunchKernelEx`` (CUDA 12 driver API) and cuda-python's launch-configuration structs: ``CUlaunchConfig``,
``CUlaunchAttribute``, ``CUlaunchAttributeValue`` (with ``clusterDim.x/y/z``) and the ``CUlaunchAttributeID``
enum, shaped as ``cuda.bindings.driver``'s.

A configuration carries the grid, block, dynamic shared memory, stream and ``numAttrs`` attributes
(``attrs``).  The attributes xcc honours: ``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`` (a thread-block cluster
launch, :mod:`xcc.semantics.cluster`: a grid that is not a multiple of the cluster, more than 8 CTAs, or 16
with ``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``, or a shape contradicting the kernel's
``.reqnctapercluster`` is ``CUDA_ERROR_INVALID_CLUSTER_SIZE``), ``CU_LAUNCH_ATTRIBUTE_COOPERATIVE`` (as
``cuLaunchCooperativeKernel``), ``CU_LAUNCH_ATTRIBUTE_PRIORITY`` (accepted; one device runs one launch at a
time) and ``CU_LAUNCH_ATTRIBUTE_IGNORE``; any other is ``CUDA_ERROR_NOT_SUPPORTED``.
"""

from __future__ import annotations

from enum import IntEnum

from xcc.diagnostics import LaunchError
from xcc.runtime.driver_core import CudaError, api, as_uint
from xcc.runtime.driver_enums import CUresult as R
from xcc.runtime.driver_functions import function_of, launch_op
from xcc.runtime.driver_structs import _Struct
from xcc.semantics.cluster import resolve_cluster


class CUlaunchAttributeID(IntEnum):
    CU_LAUNCH_ATTRIBUTE_IGNORE = 0
    CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2
    CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7
    CU_LAUNCH_ATTRIBUTE_PRIORITY = 8


class _ClusterDim(_Struct):
    _uint = {"x": 32, "y": 32, "z": 32}


class CUlaunchAttributeValue(_Struct):
    """The value of a launch attribute: ``clusterDim`` (``.x``, ``.y``, ``.z``), ``cooperative``, ``priority``."""

    _uint = {"cooperative": 32, "priority": 32}
    _any = ("clusterDim",)

    def __init__(self, _ptr=0):
        super().__init__()
        object.__setattr__(self, "clusterDim", _ClusterDim())


class CUlaunchAttribute(_Struct):
    """``id`` (a :class:`CUlaunchAttributeID`) and its ``value`` (a :class:`CUlaunchAttributeValue`)."""

    _uint = {"id": 32}
    _any = ("value",)

    def __init__(self, _ptr=0):
        super().__init__()
        object.__setattr__(self, "value", CUlaunchAttributeValue())


class CUlaunchConfig(_Struct):
    """A launch: grid and block dimensions, ``sharedMemBytes``, ``hStream`` and ``numAttrs`` of ``attrs``."""

    _uint = {"gridDimX": 32, "gridDimY": 32, "gridDimZ": 32, "blockDimX": 32, "blockDimY": 32, "blockDimZ": 32,
             "sharedMemBytes": 32, "numAttrs": 32}
    _any = ("hStream", "attrs")


_A = CUlaunchAttributeID


def _attributes(config: CUlaunchConfig) -> tuple[tuple[int, int, int] | None, bool]:
    """(cluster shape or None, cooperative) of the configuration's attributes."""
    attrs = list(config.attrs or [])
    if config.numAttrs > len(attrs):
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"numAttrs is {config.numAttrs} but attrs has {len(attrs)}")
    cluster, cooperative = None, False
    for a in attrs[:config.numAttrs]:
        if not isinstance(a, CUlaunchAttribute):
            raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"attrs must hold CUlaunchAttribute, not {type(a).__name__}")
        if a.id == _A.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            d = a.value.clusterDim
            cluster = (d.x, d.y, d.z)
        elif a.id == _A.CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            cooperative = bool(a.value.cooperative)
        elif a.id not in (_A.CU_LAUNCH_ATTRIBUTE_IGNORE, _A.CU_LAUNCH_ATTRIBUTE_PRIORITY):
            name = _A(a.id).name if a.id in _A._value2member_map_ else str(a.id)
            raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, f"launch attribute {name} is not supported")
    return cluster, cooperative


@api()
def cuLaunchKernelEx(config, f, kernelParams, extra) -> None:
    """Launch ``f`` as ``config`` says (the module docstring); it runs to completion before this returns."""
    if not isinstance(config, CUlaunchConfig):
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"config must be a CUlaunchConfig, not {type(config).__name__}")
    fn = function_of(f, "f")
    cluster, cooperative = _attributes(config)
    grid = tuple(as_uint(v, "gridDim") for v in (config.gridDimX, config.gridDimY, config.gridDimZ))
    k = fn.kernel
    if cluster is not None or getattr(k, "reqnctapercluster", None):
        try:
            cluster = resolve_cluster(k.name, grid, cluster, k.reqnctapercluster, k.maxclusterrank,
                                      nonportable=bool(getattr(fn, "nonportable_cluster", False)))
        except LaunchError as e:
            raise CudaError(R.CUDA_ERROR_INVALID_CLUSTER_SIZE, e.message) from None
    op, ms = launch_op(fn, grid, (config.blockDimX, config.blockDimY, config.blockDimZ), config.sharedMemBytes,
                       kernelParams, extra, cooperative=cooperative, cluster=cluster)
    ctx = fn.module.ctx
    ctx.run(ctx.stream(config.hStream), op, ms)


__all__ = ["CUlaunchAttribute", "CUlaunchAttributeID", "CUlaunchAttributeValue", "CUlaunchConfig", "cuLaunchKernelEx"]
