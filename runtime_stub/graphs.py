"""CUDA graphs for :mod:`xcc.runtime.driver`: stream capture and replay (``cuStreamBeginCapture``,
``cuStreamEndCapture``, ``cuGraphInstantiate``, ``cuGraphLaunch``, ...), as cuda-python shapes them.

While a stream captures, the work enqueued on it (kernel launches, copies, memsets, event records)
is recorded, not run: each call returns success at once, and a kernel's arguments are taken at
capture time while a copy reads its source when the graph runs (CUDA's rules).  A stream that
waits on an event recorded in a capture joins that capture (fork/join across streams); the graph
keeps the order in which work was captured, one valid order of its dependences.  Launching the
instantiated graph on a stream replays every node, in that order, as if enqueued there.

CUDA's capture errors: capturing the legacy default stream, synchronising a capturing stream, or
making the legacy stream wait for a capturing blocking stream is refused (the last invalidates the
capture, and ``cuStreamEndCapture`` then reports ``CUDA_ERROR_STREAM_CAPTURE_INVALIDATED``); a
stream that joined a capture and was not joined back into its origin is
``CUDA_ERROR_STREAM_CAPTURE_UNJOINED``.  Not modelled: graph editing (nodes are listed by
``cuGraphGetNodes`` but cannot be added or changed), conditional nodes, memory nodes.
"""

from __future__ import annotations

from xcc.runtime.driver_core import CudaError, Stream, api, as_int, lookup, register, unregister
from xcc.runtime.driver_types import (
    CUgraph,
    CUgraphExec,
    CUgraphNode,
    CUgraphNodeType,
    CUresult,
    CUstreamCaptureMode,
    CUstreamCaptureStatus,
)
from xcc.runtime.streams import _stream

R = CUresult
_KINDS = {"kernel": CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL, "memcpy": CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY,
          "memset": CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET,
          "event": CUgraphNodeType.CU_GRAPH_NODE_TYPE_EVENT_RECORD}


class Graph:
    """Captured stream work: ``nodes`` are ``(kind, op, modelled_ms)`` in capture order."""

    def __init__(self, ctx, origin: Stream):
        self.ctx, self.origin = ctx, origin
        self.nodes: list[tuple[str, object, object]] = []
        self.invalidated = False
        self.joined: list[Stream] = []  # other streams that joined the capture through an event
        self.rejoined: set[int] = set()  # ids of joined streams the origin has waited for since

    @property
    def unjoined(self) -> bool:
        return any(id(t) not in self.rejoined for t in self.joined)

    def add(self, kind: str, op, modelled_ms=None) -> None:
        self.nodes.append((kind, op, modelled_ms))


class GraphExec:
    def __init__(self, graph: Graph):
        self.ctx, self.nodes = graph.ctx, list(graph.nodes)


@api()
def cuStreamBeginCapture(hStream, mode=CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL) -> None:
    s = _stream(hStream)
    CUstreamCaptureMode(as_int(mode, "mode"))
    if s.kind == "legacy":
        raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy default stream cannot be captured")
    if s.capture is not None:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "the stream is already capturing")
    s.capture = Graph(s.ctx, s)


@api(1)
def cuStreamIsCapturing(hStream) -> CUstreamCaptureStatus:
    s = _stream(hStream)
    if s.capture is None:
        return CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
    if s.capture.invalidated:
        return CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_INVALIDATED
    return CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE


@api(1)
def cuStreamEndCapture(hStream) -> CUgraph:
    """The graph of the work captured on ``hStream`` since ``cuStreamBeginCapture``."""
    s = _stream(hStream)
    g = s.capture
    if g is None or g.origin is not s:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "the stream is not the origin of a capture")
    for t in [s, *g.joined]:
        t.capture = None
    if g.invalidated:
        raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the capture was invalidated by an earlier error")
    if g.unjoined:
        raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "a stream that joined the capture was not joined "
                        "back into the origin stream (record an event on it and wait on it from the origin)")
    return register(CUgraph, g)


@api(1)
def cuGraphInstantiate(hGraph, flags=0) -> CUgraphExec:
    g = lookup(hGraph, CUgraph, Graph, "hGraph")
    g.ctx.check()
    return register(CUgraphExec, GraphExec(g))


@api()
def cuGraphLaunch(hGraphExec, hStream) -> None:
    """Run every node of the instantiated graph on ``hStream``, in capture order."""
    ge = lookup(hGraphExec, CUgraphExec, GraphExec, "hGraphExec")
    s = _stream(hStream)
    if s.ctx is not ge.ctx:
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "hGraphExec and hStream belong to different contexts")
    if s.capture is not None:
        s.capture.nodes.extend(ge.nodes)  # a graph launched into a capture becomes part of it
        return
    for kind, op, ms in ge.nodes:
        if kind == "event":
            op(s)
        else:
            s.ctx.run(s, op, ms, kind)


@api(2)
def cuGraphGetNodes(hGraph, numNodes=0) -> tuple[list[CUgraphNode], int]:
    """(the graph's nodes, their number); with ``numNodes`` 0 only the count is meaningful, as in CUDA."""
    g = lookup(hGraph, CUgraph, Graph, "hGraph")
    n = as_int(numNodes, "numNodes")
    return [CUgraphNode(i + 1) for i in range(min(n, len(g.nodes)))], len(g.nodes)


@api(1)
def cuGraphNodeGetType(hGraph, index) -> CUgraphNodeType:
    """The type of node ``index`` (0-based) of ``hGraph`` (xcc's nodes are positions, not handles)."""
    g = lookup(hGraph, CUgraph, Graph, "hGraph")
    i = as_int(index, "index")
    if not 0 <= i < len(g.nodes):
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"node {i} of a graph of {len(g.nodes)}")
    return _KINDS[g.nodes[i][0]]


@api()
def cuGraphDestroy(hGraph) -> None:
    unregister(lookup(hGraph, CUgraph, Graph, "hGraph"))


@api()
def cuGraphExecDestroy(hGraphExec) -> None:
    unregister(lookup(hGraphExec, CUgraphExec, GraphExec, "hGraphExec"))


__all__ = ["cuGraphDestroy", "cuGraphExecDestroy", "cuGraphGetNodes", "cuGraphInstantiate", "cuGraphLaunch",
           "cuGraphNodeGetType", "cuStreamBeginCapture", "cuStreamEndCapture", "cuStreamIsCapturing"]
