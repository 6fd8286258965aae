"""A :class:`~xcc.runtime.timeline.Timeline` as Chrome trace-event JSON (Perfetto and chrome://tracing open it).

The format is Google's "Trace Event Format" document (the JSON Object Format: ``{"traceEvents": [...],
"displayTimeUnit": "ns"}``); times are microseconds (``ts``, ``dur``), here of modelled time.  Processes and
threads (``pid``/``tid``, named by ``M`` metadata events ``process_name``/``thread_name``):

* pid 1 "Host (modelled time)", tid 1: the runtime calls as ``X`` complete events (``cat`` ``cuda_api``,
  ``args``: ``correlationId``, ``api``, ``returnValue``, ``wall_us``), the JIT slices nested in them
  (``cat`` ``jit``) and the NVTX ranges (``cat`` ``nvtx``);
* pid 2 + 2d "<device> d": one thread per stream (tid = the stream id, 7 the default stream): kernels
  (``cat`` ``kernel``: grid, block, registers, shared memory, cycles, theoretical and achieved occupancy and
  its limiter, the entry's PTX line and, for ``-lineinfo``/``-G`` PTX, its CUDA ``sourceFile`` and
  ``sourceLine``), copies (``memcpy``) and memsets;
  counter (``C``) tracks per stream: ``warps by state`` (the cycle model's average warps in each Nsight
  warp state over the kernel: warp-cycles per stall reason / cycles) and ``resident CTAs``;
* pid 3 + 2d "<device> d SMs": per-SM CTA residency from the cycle model (one thread per SM and CTA slot:
  ``X`` events "<kernel> CTA (x,y,z)"; of the timed CTAs when the model sampled, ``xcc__sampled_ctas``);
* flow events (``s`` on the call, ``f`` with ``bp`` ``e`` on the work; ``id`` the correlation id) link each
  call to the device work it enqueued.
"""

from __future__ import annotations

import json

HOST_PID, HOST_TID = 1, 1
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def _us(ns: float) -> float:
    return round(ns / 1000, 3)


def _meta(kind: str, pid: int, tid: int, name: str) -> dict:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def _x(name, cat, start, end, pid, tid, args) -> dict:
    return {"name": name, "cat": cat, "ph": "X", "ts": _us(start), "dur": _us(end - start), "pid": pid,
            "tid": tid, "args": args}


def events(tl) -> list[dict]:
    """The trace events of ``tl``, metadata first, then in time order per kind."""
    out = [_meta("process_name", HOST_PID, HOST_TID, "Host (modelled time)"),
           _meta("thread_name", HOST_PID, HOST_TID, "Python thread: runtime calls")]
    calls = {c.corr: c for c in tl.calls if c.corr}
    for text, start, end in tl.ranges:
        out.append(_x(text, "nvtx", start, end, HOST_PID, HOST_TID, {"eventType": "NvtxPushPopRange"}))
    for c in tl.calls:
        args = {"correlationId": c.corr, "returnValue": c.ret, "wall_us": c.wall_ns / 1000}
        if c.api:
            args["api"] = c.api
        out.append(_x(c.name, "cuda_api", c.start, c.end, HOST_PID, HOST_TID, args))
        out += [_x(name, "jit", s, e, HOST_PID, HOST_TID, a) for name, s, e, a in c.slices]
    named: set = set()
    for op in tl.ops:
        s = op.stream
        pid = 2 + 2 * s.device
        if (pid, None) not in named:
            named.add((pid, None))
            out.append(_meta("process_name", pid, 0, f"{tl.machine.name} device {s.device}"))
        if (pid, s.id) not in named:
            named.add((pid, s.id))
            out.append(_meta("thread_name", pid, s.id, f"Stream {s.id}" + (" (default)" if s.kind == "legacy" else "")))
        out.append(_x(op.name, op.kind, op.start, op.end, pid, s.id, _op_args(op)))
        if op.corr in calls:
            c = calls[op.corr]
            flow = {"name": op.kind, "cat": "flow", "id": op.corr}
            out.append({**flow, "ph": "s", "ts": _us(c.start), "pid": HOST_PID, "tid": HOST_TID})
            out.append({**flow, "ph": "f", "bp": "e", "ts": _us(op.start), "pid": pid, "tid": s.id})
        if op.kind == "kernel":
            out += _kernel_tracks(tl, op, pid, named)
    return out


def _op_args(op) -> dict:
    i = op.info
    args = {"correlationId": op.corr, "streamId": op.stream.id, "wall_us": i.get("wall_ns", 0) / 1000}
    if op.kind == "kernel":
        args.update(grid=list(i["grid"]), block=list(i["block"]), registersPerThread=i["registers"],
                    staticSharedMemory=i["static_shared"], dynamicSharedMemory=i["dynamic_shared"],
                    cycles=i["cycles"], modelled=i["modelled"])
        m = i["metrics"]
        if m:  # occupancy as Nsight Compute names it: theoretical, achieved, the limiter
            args.update(theoreticalOccupancy=m.get("sm__maximum_warps_per_active_cycle_pct"),
                        achievedOccupancy=m.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
                        occupancyLimiter=m.get("launch__occupancy_limit"))
        if i.get("ptx_line"):
            args["ptxLine"] = i["ptx_line"]
        if i.get("source_file"):  # -lineinfo/-G PTX: the kernel's CUDA source file and line
            args.update(sourceFile=i["source_file"], sourceLine=i["source_line"])
    else:
        args.update(bytes=i["bytes"], copyKind=i["copy"])
    return args


def _kernel_tracks(tl, op, pid: int, named: set) -> list[dict]:
    """The counter tracks and the per-SM CTA residency of one kernel."""
    m, i = op.info["metrics"], op.info
    cycles = i["cycles"]
    if not cycles or not m:
        return []
    ns_per_cycle = 1000 / i["clock_mhz"]
    sampled, total = m.get("xcc__sampled_ctas") or 0, m.get("xcc__total_ctas") or 0
    scale = total / sampled if sampled else 1.0
    track = f"stream {op.stream.id}"
    states = {k[len(STALL_PREFIX):]: round(v * scale / cycles, 3) for k, v in sorted(m.items())
              if k.startswith(STALL_PREFIX)}
    out = [{"name": f"warps by state ({track})", "ph": "C", "ts": _us(op.start), "pid": pid, "tid": 0,
            "args": states},
           {"name": f"warps by state ({track})", "ph": "C", "ts": _us(op.end), "pid": pid, "tid": 0,
            "args": dict.fromkeys(states, 0)}]
    rows = m.get("xcc__cta_residency") or []
    changes: dict[int, int] = {}
    sm_pid = 3 + 2 * op.stream.device
    grid = i["grid"]
    for cta, sm, slot, start, end in rows:
        changes[start] = changes.get(start, 0) + 1
        changes[end] = changes.get(end, 0) - 1
        tid = op.stream.id * 100000 + sm * 100 + slot
        if (sm_pid, None) not in named:
            named.add((sm_pid, None))
            out.append(_meta("process_name", sm_pid, 0, f"{tl.machine.name} device {op.stream.device} SMs"))
        if (sm_pid, tid) not in named:
            named.add((sm_pid, tid))
            out.append(_meta("thread_name", sm_pid, tid, f"SM {sm} slot {slot} (stream {op.stream.id})"))
        xyz = (cta % grid[0], cta // grid[0] % grid[1], cta // (grid[0] * grid[1]))
        a, b = op.start + start * ns_per_cycle, op.start + end * ns_per_cycle
        out.append(_x(f"{op.name} CTA ({xyz[0]},{xyz[1]},{xyz[2]})", "cta", a, min(b, op.end), sm_pid, tid,
                      {"correlationId": op.corr, "sm": sm, "cycles": [start, end]}))
    level = 0
    for t in sorted(changes):
        level += changes[t]
        out.append({"name": f"resident CTAs ({track})", "ph": "C", "ts": _us(op.start + t * ns_per_cycle),
                    "pid": pid, "tid": 0, "args": {"CTAs": level}})
    return out


def dumps(tl) -> str:
    """The JSON text of ``tl``'s trace."""
    doc = {"traceEvents": events(tl), "displayTimeUnit": "ns",
           "otherData": {"generator": "xcc.runtime.timeline", "time": "modelled", "machine": tl.machine.name,
                         "host_link": str(tl.machine.data["host"]["link"])}}
    return json.dumps(doc, indent=None, separators=(",", ":")) + "\n"
