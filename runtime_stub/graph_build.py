"""Building CUDA graphs node by node, as cuda-python does it: ``cuGraphCreate``, ``cuGraphAddKernelNode``,
``cuGraphAddMemcpyNode``, ``cuGraphAddMemsetNode``, ``cuGraphAddHostNode``, ``cuGraphAddEmptyNode``,
``cuGraphAddDependencies``; and ``cuGraphExecKernelNodeSetParams``, which gives a kernel node of an
instantiated graph new parameters (checked as when the node was added; the graph itself keeps its own).

A host node calls ``fn(userData)`` on the host when the graph runs, in dependency order: ``fn`` is a
``CUhostFn`` or int (the address of a C ``void (*)(void *)``, called through ctypes), a ctypes function
object, or, beyond cuda-python, a Python callable; ``userData`` is passed as a ``void *`` (an int, a
handle, a ctypes object's address or None) to a C function and as given to a Python one.

A node's parameters are copied and checked when it is added, as by CUDA: a kernel node's arguments
are read then (so a launch-time error such as a bad block size is the ``CUresult`` of
``cuGraphAddKernelNode``), a copy node's host memory is read or written each time the graph runs.
``dependencies`` is a list (or tuple) of ``CUgraphNode`` of the same graph, of which the first
``numDependencies`` count; a shorter list raises ``RuntimeError`` and a non-node ``TypeError``, as
cuda-python's argument conversion does.  Running the graph: :mod:`xcc.runtime.graphs`.

Copies: each side of a ``CUDA_MEMCPY3D`` is ``CU_MEMORYTYPE_HOST`` (``*Host``: an address or a buffer),
``CU_MEMORYTYPE_DEVICE`` or ``CU_MEMORYTYPE_UNIFIED`` (``*Device``: device, managed or mapped host
memory); ``CU_MEMORYTYPE_ARRAY`` (CUDA arrays) is ``CUDA_ERROR_NOT_SUPPORTED``.
"""

from __future__ import annotations

import ctypes

import numpy as np

from xcc.runtime.driver_core import CudaError, api, as_uint, current, lookup, register
from xcc.runtime.driver_functions import function_of, launch_op
from xcc.runtime.driver_structs import (
    CUDA_HOST_NODE_PARAMS,
    CUDA_KERNEL_NODE_PARAMS,
    CUDA_MEMCPY3D,
    CUDA_MEMSET_NODE_PARAMS,
)
from xcc.runtime.driver_types import (
    CUcontext,
    CUgraph,
    CUgraphExec,
    CUgraphNode,
    CUhostFn,
    CUmemorytype,
    CUresult,
)
from xcc.runtime.graphs import Graph, GraphExec, Node, graph_of, node_of
from xcc.runtime.host_args import host_view
from xcc.sim.memory import MemoryFault

R = CUresult
_INVALID = R.CUDA_ERROR_INVALID_VALUE
M = CUmemorytype


@api(1)
def cuGraphCreate(flags) -> CUgraph:
    """An empty graph in the current context; ``flags`` must be 0."""
    if as_uint(flags, "flags") != 0:
        raise CudaError(_INVALID, "cuGraphCreate: flags must be 0")
    return register(CUgraph, Graph(current()))


def _deps(g: Graph, dependencies, numDependencies, what: str = "dependencies", distinct: bool = True) -> list[Node]:
    """The first ``numDependencies`` nodes of the list ``dependencies``, all of graph ``g``
    (and, with ``distinct``, none twice)."""
    n = as_uint(numDependencies, "numDependencies", 64)
    items = [] if dependencies is None else dependencies
    if not isinstance(items, list | tuple):
        raise TypeError(f"Argument '{what}' is not instance of type (expected tuple[CUgraphNode] or "
                        f"list[CUgraphNode], found {type(dependencies).__name__})")
    if not all(isinstance(d, CUgraphNode) for d in items):
        raise TypeError(f"Argument '{what}' is not instance of type (expected tuple[CUgraphNode] or "
                        "list[CUgraphNode])")
    if n > len(items):
        raise RuntimeError(f"List is too small: {len(items)} < {n}")
    nodes = [node_of(d, what) for d in items[:n]]
    if any(d.graph is not g for d in nodes):
        raise CudaError(_INVALID, f"{what}: a node of another graph")
    if distinct and len({id(d) for d in nodes}) != len(nodes):
        raise CudaError(_INVALID, f"{what}: a node is listed twice")
    return nodes


def _graph(hGraph) -> Graph:
    g = graph_of(hGraph)
    g.ctx.check()
    return g


def _ctx_of(g: Graph, ctx) -> None:
    if ctx is not None and int(ctx) != 0 and lookup(ctx, CUcontext, object, "ctx") is not g.ctx:
        raise CudaError(_INVALID, "ctx is not the graph's context")


def _kernel_op(g: Graph, nodeParams):
    """(op, modelled_ms) of a kernel node with ``nodeParams`` in graph ``g``: the launch checked now."""
    p = _struct(nodeParams, CUDA_KERNEL_NODE_PARAMS, "nodeParams")
    if p.func is None:
        raise CudaError(_INVALID, "nodeParams.func is not set")
    fn = function_of(p.func, "nodeParams.func")
    if fn.module.ctx is not g.ctx:
        raise CudaError(_INVALID, "nodeParams.func belongs to another context")
    return launch_op(fn, (p.gridDimX, p.gridDimY, p.gridDimZ), (p.blockDimX, p.blockDimY, p.blockDimZ),
                     p.sharedMemBytes, p.kernelParams, p.extra)


@api(1)
def cuGraphAddKernelNode(hGraph, dependencies, numDependencies, nodeParams) -> CUgraphNode:
    """A node launching ``nodeParams.func`` with the arguments in ``nodeParams.kernelParams``, read now."""
    g = _graph(hGraph)
    deps = _deps(g, dependencies, numDependencies)
    op, ms = _kernel_op(g, nodeParams)
    return g.add("kernel", op, ms, deps).handle


@api()
def cuGraphExecKernelNodeSetParams(hGraphExec, hNode, nodeParams) -> None:
    """Kernel node ``hNode`` of the graph ``hGraphExec`` was instantiated from launches with ``nodeParams``
    in later launches of ``hGraphExec`` (a function of the same context; arguments read now)."""
    ge = lookup(hGraphExec, CUgraphExec, GraphExec, "hGraphExec")
    ge.ctx.check()
    node = node_of(hNode)
    if node.kind != "kernel":
        raise CudaError(_INVALID, f"hNode is a {node.kind} node, not a kernel node")
    ge.update(node, *_kernel_op(ge.graph, nodeParams))


def _host_call(fn, user_data):
    """The host node's operation: ``fn(userData)`` (see the module docstring)."""
    if isinstance(fn, ctypes._CFuncPtr):
        cfn = fn
    elif isinstance(fn, CUhostFn) or isinstance(fn, int) and not isinstance(fn, bool):
        if int(fn) == 0:
            raise CudaError(_INVALID, "nodeParams.fn is NULL")
        cfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(int(fn))
    elif callable(fn):
        return lambda: fn(user_data)
    else:
        raise CudaError(_INVALID, "nodeParams.fn is not set" if fn is None else
                        f"nodeParams.fn must be a CUhostFn, not {type(fn).__name__}")
    if user_data is None or isinstance(user_data, int):
        arg = user_data
    elif isinstance(user_data, ctypes._SimpleCData | ctypes.Array | ctypes.Structure):
        arg = ctypes.addressof(user_data)
    elif hasattr(user_data, "getPtr"):
        arg = int(user_data)
    else:
        raise TypeError(f"nodeParams.userData must be a pointer (an int, a handle or a ctypes object), not "
                        f"{type(user_data).__name__}")
    return lambda: cfn(arg)


@api(1)
def cuGraphAddHostNode(hGraph, dependencies, numDependencies, nodeParams) -> CUgraphNode:
    """A node calling ``nodeParams.fn(nodeParams.userData)`` on the host each time the graph runs."""
    g = _graph(hGraph)
    deps = _deps(g, dependencies, numDependencies)
    p = _struct(nodeParams, CUDA_HOST_NODE_PARAMS, "nodeParams")
    return g.add("host", _host_call(p.fn, p.userData), None, deps).handle


def _struct(v, cls, what: str):
    if not isinstance(v, cls):
        raise TypeError(f"Argument '{what}' is not instance of type (expected {cls.__name__}, found "
                        f"{type(v).__name__})")
    return v.copy()


def _side(ctx, p: CUDA_MEMCPY3D, side: str, rows: list[int], width: int, writable: bool):
    """Read and write functions for one side of a 3D copy: ``get(i)`` the bytes of row ``i`` and
    ``put(i, data)``, rows at byte offsets ``rows`` from the side's origin."""
    kind = getattr(p, f"{side}MemoryType")
    if kind == M.CU_MEMORYTYPE_ARRAY:
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "CUDA arrays (CU_MEMORYTYPE_ARRAY) are not supported")
    if kind in (M.CU_MEMORYTYPE_DEVICE, M.CU_MEMORYTYPE_UNIFIED):
        base = getattr(p, f"{side}Device")
        if base is None:
            raise CudaError(_INVALID, f"{side}Device is not set")
        base = int(base)
        return (lambda i: ctx.memory.read(base + rows[i], width)), (lambda i, d: ctx.memory.write(base + rows[i], d))
    if kind != M.CU_MEMORYTYPE_HOST:
        raise CudaError(_INVALID, f"{side}MemoryType {kind} is not a CUmemorytype")
    span = rows[-1] + width if rows else 0
    view = host_view(getattr(p, f"{side}Host"), span, f"{side}Host", writable=writable)
    return (lambda i: view[rows[i]:rows[i] + width].copy()), (lambda i, d: view.__setitem__(
        slice(rows[i], rows[i] + width), d))


def _rows(p: CUDA_MEMCPY3D, side: str) -> list[int]:
    """Byte offsets of the copy's rows on one side: origin (x, y, z) in a layout of ``Pitch``-byte rows
    and ``Height``-row slices (0: packed, the copy's own width and height)."""
    pitch = getattr(p, f"{side}Pitch") or p.WidthInBytes
    height = getattr(p, f"{side}Height") or p.Height
    x, y, z = (getattr(p, f"{side}{f}") for f in ("XInBytes", "Y", "Z"))
    if p.Height > 1 and pitch < p.WidthInBytes or p.Depth > 1 and height < p.Height:
        raise CudaError(_INVALID, f"{side}Pitch/{side}Height are smaller than the copy's rows")
    return [x + (y + r + (z + d) * height) * pitch for d in range(max(p.Depth, 1)) for r in range(max(p.Height, 1))]


@api(1)
def cuGraphAddMemcpyNode(hGraph, dependencies, numDependencies, copyParams, ctx) -> CUgraphNode:
    """A node copying ``copyParams`` (a ``CUDA_MEMCPY3D``) each time the graph runs."""
    g = _graph(hGraph)
    deps = _deps(g, dependencies, numDependencies)
    p = _struct(copyParams, CUDA_MEMCPY3D, "copyParams")
    _ctx_of(g, ctx)
    width = p.WidthInBytes
    if width == 0:
        raise CudaError(_INVALID, "copyParams.WidthInBytes is 0")
    src_rows, dst_rows = _rows(p, "src"), _rows(p, "dst")
    get, _ = _side(g.ctx, p, "src", src_rows, width, False)
    _, put = _side(g.ctx, p, "dst", dst_rows, width, True)

    def run():
        try:
            for i in range(len(src_rows)):
                put(i, get(i))
        except MemoryFault as e:
            raise CudaError(_INVALID, str(e)) from None

    return g.add("memcpy", run, None, deps).handle


@api(1)
def cuGraphAddMemsetNode(hGraph, dependencies, numDependencies, memsetParams, ctx) -> CUgraphNode:
    """A node filling ``memsetParams`` (a ``CUDA_MEMSET_NODE_PARAMS``) each time the graph runs."""
    g = _graph(hGraph)
    deps = _deps(g, dependencies, numDependencies)
    p = _struct(memsetParams, CUDA_MEMSET_NODE_PARAMS, "memsetParams")
    _ctx_of(g, ctx)
    size = p.elementSize
    if size not in (1, 2, 4):
        raise CudaError(_INVALID, f"memsetParams.elementSize is {size}; it must be 1, 2 or 4")
    if p.value >> (8 * size):
        raise CudaError(_INVALID, f"memsetParams.value {p.value:#x} does not fit in {size} bytes")
    if p.dst is None or p.width == 0 or p.height == 0:
        raise CudaError(_INVALID, "memsetParams: dst, width and height must be set")
    dst = int(p.dst)
    if dst % size or p.height > 1 and (p.pitch < p.width * size or p.pitch % size):
        raise CudaError(_INVALID, f"memsetParams: dst {dst:#x} or pitch {p.pitch} is not valid for "
                                  f"{size}-byte elements of rows of {p.width}")
    row = np.full(p.width, p.value, {1: np.uint8, 2: np.uint16, 4: np.uint32}[size])
    mem, rows = g.ctx.memory, [dst + r * p.pitch for r in range(p.height)]

    def run():
        try:
            for addr in rows:
                mem.write(addr, row)
        except MemoryFault as e:
            raise CudaError(_INVALID, str(e)) from None

    return g.add("memset", run, None, deps).handle


@api(1)
def cuGraphAddEmptyNode(hGraph, dependencies, numDependencies) -> CUgraphNode:
    """A node that does nothing: a point other nodes can depend on."""
    g = _graph(hGraph)
    return g.add("empty", None, None, _deps(g, dependencies, numDependencies)).handle


@api()
def cuGraphAddDependencies(hGraph, from_, to, *rest) -> None:
    """Make each ``to[i]`` depend on ``from_[i]``: ``(hGraph, from_, to, edgeData, numDependencies)`` as in
    cuda-python 13 (``edgeData`` must be None: only default edges exist) or ``(hGraph, from_, to,
    numDependencies)`` as in 12.x.  An edge that exists already is ``CUDA_ERROR_INVALID_VALUE``."""
    if len(rest) == 2:
        edge_data, n = rest
        if edge_data:
            raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "edge data (programmatic dependencies) is not supported")
    elif len(rest) == 1:
        n = rest[0]
    else:
        raise TypeError(f"cuGraphAddDependencies takes 5 arguments (or 4 as in cuda-python 12), got {3 + len(rest)}")
    g = _graph(hGraph)
    srcs, dsts = _deps(g, from_, n, "from_", False), _deps(g, to, n, "to", False)
    for a, b in zip(srcs, dsts):
        if a is b or a in b.deps:
            raise CudaError(_INVALID, "the edge exists already, or joins a node to itself")
    for a, b in zip(srcs, dsts):
        b.deps.append(a)


__all__ = ["cuGraphAddDependencies", "cuGraphAddEmptyNode", "cuGraphAddHostNode", "cuGraphAddKernelNode",
           "cuGraphAddMemcpyNode", "cuGraphAddMemsetNode", "cuGraphCreate", "cuGraphExecKernelNodeSetParams"]
