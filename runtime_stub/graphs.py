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
``CUDA_ERROR_STREAM_CAPTURE_UNJOINED``.

A graph is also built node by node (:mod:`xcc.runtime.graph_build`); captured work forms a chain in
capture order.  ``cuGraphInstantiate`` fixes an order that respects every dependency (insertion order
where free) and ``cuGraphLaunch`` runs the nodes in it; ``cuGraphClone`` copies nodes and edges.
Host nodes call a host function when the graph runs; an executable graph's kernel node takes new
parameters with ``cuGraphExecKernelNodeSetParams`` (:mod:`xcc.runtime.graph_build`).  Not modelled:
editing or removing a graph's nodes, child-graph, conditional and memory nodes.
"""

from __future__ import annotations

from xcc.runtime.driver_core import CudaError, Stream, api, as_int, as_uint, lookup, register, unregister
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
from xcc.sim.launch import CURRENT_GRAPH_EXEC

R = CUresult
_KINDS = {"kernel": CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL, "memcpy": CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY,
          "memset": CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET,
          "event": CUgraphNodeType.CU_GRAPH_NODE_TYPE_EVENT_RECORD, "empty": CUgraphNodeType.CU_GRAPH_NODE_TYPE_EMPTY,
          "host": CUgraphNodeType.CU_GRAPH_NODE_TYPE_HOST}


class Node:
    """One node: ``kind`` ('kernel', 'memcpy', 'memset', 'host', 'event' or 'empty'), the operation it runs
    (``op``, with ``modelled_ms`` for its time on the timeline) and the nodes it depends on."""

    def __init__(self, graph: Graph, kind: str, op, modelled_ms=None, deps=()):
        self.graph, self.kind, self.op, self.modelled_ms = graph, kind, op, modelled_ms
        self.deps: list[Node] = list(deps)
        register(CUgraphNode, self)


class Graph:
    """A graph of nodes.  Captured work is a chain in capture order; explicitly built graphs
    (:mod:`xcc.runtime.graph_build`) have the dependencies given to them."""

    def __init__(self, ctx, origin: Stream | None = None):
        self.ctx, self.origin = ctx, origin
        self.nodes: list[Node] = []
        self.invalidated = False
        self.joined: list[Stream] = []  # other streams that joined the capture through an event
        self.rejoined: set[int] = set()  # ids of joined streams the origin has waited for since

    @property
    def unjoined(self) -> bool:
        return any(id(t) not in self.rejoined for t in self.joined)

    def add(self, kind: str, op, modelled_ms=None, deps=None) -> Node:
        """A new node after ``deps`` (None: after the last node added, as capture orders work)."""
        if deps is None:
            deps = self.nodes[-1:]
        node = Node(self, kind, op, modelled_ms, deps)
        self.nodes.append(node)
        return node

    def order(self) -> list[Node]:
        """The nodes in an order that respects every dependency (insertion order where free);
        a cycle is ``CUDA_ERROR_INVALID_VALUE``."""
        done: set[int] = set()
        out: list[Node] = []
        pending = list(self.nodes)
        while pending:
            ready = [n for n in pending if all(id(d) in done for d in n.deps)]
            if not ready:
                raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "the graph's dependencies form a cycle")
            for n in ready:
                done.add(id(n))
                out.append(n)
            pending = [n for n in pending if id(n) not in done]
        return out

    def clone(self) -> Graph:
        """A copy with new nodes of the same operations and dependencies."""
        g = Graph(self.ctx)
        new: dict[int, Node] = {}
        for n in self.nodes:
            new[id(n)] = Node(g, n.kind, n.op, n.modelled_ms)
            g.nodes.append(new[id(n)])
        for n in self.nodes:
            new[id(n)].deps = [new[id(d)] for d in n.deps]
        return g

    def destroy(self) -> None:
        for n in self.nodes:
            unregister(n)
        unregister(self)


class GraphExec:
    """An instantiated graph: its nodes' operations in dependency order, fixed at instantiation."""

    def __init__(self, graph: Graph):
        self.ctx, self.graph = graph.ctx, graph
        self.nodes = graph.order()  # the graph's nodes, in the order of ``steps``
        self.steps = [(n.kind, n.op, n.modelled_ms) for n in self.nodes]

    def update(self, node: Node, op, modelled_ms) -> None:
        """Node ``node`` runs ``op`` from now on in this executable graph (the graph itself is unchanged)."""
        i = next((i for i, n in enumerate(self.nodes) if n is node), None)
        if i is None:
            raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "hNode is not a node of the graph hGraphExec was "
                                                        "instantiated from")
        self.steps[i] = (node.kind, op, modelled_ms)


def graph_of(h) -> Graph:
    return lookup(h, CUgraph, Graph, "hGraph")


def node_of(h, what: str = "hNode") -> Node:
    return lookup(h, CUgraphNode, Node, what)


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
    """An executable snapshot of the graph (later changes to the graph do not affect it)."""
    g = graph_of(hGraph)
    g.ctx.check()
    as_uint(flags, "flags", 64)
    return register(CUgraphExec, GraphExec(g))


@api()
def cuGraphLaunch(hGraphExec, hStream) -> None:
    """Run every node of the instantiated graph on ``hStream``, in the order fixed at instantiation."""
    ge = lookup(hGraphExec, CUgraphExec, GraphExec, "hGraphExec")
    s = _stream(hStream)
    if s.ctx is not ge.ctx:
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "hGraphExec and hStream belong to different contexts")
    if s.capture is not None:
        for kind, op, ms in ge.steps:  # a graph launched into a capture becomes part of it
            s.capture.add(kind, op, ms)
        return
    token = CURRENT_GRAPH_EXEC.set(int(ge.handle))  # a kernel node reads it as %current_graph_exec
    try:
        for kind, op, ms in ge.steps:
            if kind == "event":
                op(s)
            elif kind != "empty":
                s.ctx.run(s, op, ms, kind)
    finally:
        CURRENT_GRAPH_EXEC.reset(token)


@api(2)
def cuGraphGetNodes(hGraph, numNodes=0) -> tuple[list[CUgraphNode], int]:
    """(up to ``numNodes`` of the graph's nodes, their total number): with ``numNodes`` 0 only the
    count, as in cuda-python.  An event recorded during a capture is not a node, as in CUDA (it
    orders the capture's streams; xcc keeps it internally so the event is taken when the graph runs)."""
    g = graph_of(hGraph)
    n = as_uint(numNodes, "numNodes", 64)
    nodes = [node for node in g.nodes if node.kind != "event"]
    return [node.handle for node in nodes[:n]], len(nodes)


@api(1)
def cuGraphNodeGetType(hNode) -> CUgraphNodeType:
    return _KINDS[node_of(hNode).kind]


@api(1)
def cuGraphClone(originalGraph) -> CUgraph:
    g = graph_of(originalGraph)
    g.ctx.check()
    clone = g.clone()
    return register(CUgraph, clone)


@api()
def cuGraphDestroy(hGraph) -> None:
    graph_of(hGraph).destroy()


@api()
def cuGraphExecDestroy(hGraphExec) -> None:
    unregister(lookup(hGraphExec, CUgraphExec, GraphExec, "hGraphExec"))


__all__ = ["Graph", "GraphExec", "Node", "cuGraphClone", "cuGraphDestroy", "cuGraphExecDestroy", "cuGraphGetNodes", "cuGraphInstantiate", "cuGraphLaunch",
           "cuGraphNodeGetType", "cuStreamBeginCapture", "cuStreamEndCapture", "cuStreamIsCapturing"]
