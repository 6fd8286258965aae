"""A :class:`~xcc.runtime.timeline.Timeline` as a SQLite database in Nsight Systems' export schema.

The tables, columns and types of ``nsys export --type sqlite`` (Nsight Systems User Guide, "SQLite Schema
Reference"; the columns of each CUPTI record are CUPTI's ``CUpti_ActivityKernel``/``Memcpy``/``Memset``
fields), so that SQL written for nsys exports - its ``cuda_gpu_kern_sum`` report, a join of
``CUPTI_ACTIVITY_KIND_RUNTIME`` and ``CUPTI_ACTIVITY_KIND_KERNEL`` on ``correlationId`` - runs unchanged:

* ``StringIds(id, value)``: every name (kernels, API calls, NVTX texts are inline as nsys writes them);
* ``TARGET_INFO_GPU``, ``TARGET_INFO_CUDA_STREAM``: the device (from the machine description) and streams;
* ``CUPTI_ACTIVITY_KIND_KERNEL``, ``CUPTI_ACTIVITY_KIND_MEMCPY``, ``CUPTI_ACTIVITY_KIND_MEMSET``: device work;
* ``CUPTI_ACTIVITY_KIND_RUNTIME``: host calls (``eventClass`` 0 for ``cuda*`` runtime API names, 1 for
  driver API names, as ``ENUM_NSYS_EVENT_CLASS``);
* ``NVTX_EVENTS``: ``rt.range`` ranges (``eventType`` 59, NvtxPushPopRange);
* the ``ENUM_*`` tables those columns refer to (``ENUM_CUDA_MEMCPY_OPER``, ``ENUM_CUDA_MEM_KIND``,
  ``ENUM_NSYS_EVENT_TYPE``, ``ENUM_NSYS_EVENT_CLASS``), with CUPTI's values.

Times are modelled nanoseconds.  ``globalPid`` and ``globalTid`` are serialised as nsys does (pid * 2**24 +
tid), for process 1, thread 1 (the output is the same on every run).  Kernel names are the PTX entry names
in all three name columns (xcc has no demangler).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

GLOBAL_PID = 1 << 24
GLOBAL_TID = GLOBAL_PID + 1
COPY_KIND = {"HtoD": 1, "DtoH": 2, "DtoD": 8}  # CUpti_ActivityMemcpyKind
MEM_KIND = {"HtoD": (1, 3), "DtoH": (3, 1), "DtoD": (3, 3)}  # (src, dst) CUpti_ActivityMemoryKind
DEVICE_MEMORY = 3

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
    ctxCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, maxThreadsPerBlock INTEGER,
    threadsPerWarp INTEGER, maxShmemPerBlock INTEGER, maxRegistersPerBlock INTEGER, maxWarpsPerMultiprocessor INTEGER,
    maxShmemPerMultiprocessor INTEGER, maxRegistersPerMultiprocessor INTEGER);
CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL PRIMARY KEY, hwId INTEGER NOT NULL,
    vmId INTEGER NOT NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL,
    flag INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL REFERENCES ENUM_NSYS_EVENT_CLASS(id), globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL REFERENCES StringIds(id), returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),
    shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEMCPY_OPER(id),
    deprecatedSrcId INTEGER, srcKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id),
    dstKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), srcDeviceId INTEGER, srcContextId INTEGER,
    dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER,
    memKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id));
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL
    REFERENCES ENUM_NSYS_EVENT_TYPE(id), rangeId INTEGER, category INTEGER, color INTEGER, text TEXT,
    globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id), domainId INTEGER,
    uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""

ENUMS = {
    "ENUM_CUDA_MEMCPY_OPER": [(0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"), (1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"),
                              (2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"), (3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array"),
                              (4, "CUDA_MEMCPY_OPER_ATOH", "Array-to-Host"), (5, "CUDA_MEMCPY_OPER_ATOA", "Array-to-Array"),
                              (6, "CUDA_MEMCPY_OPER_ATOD", "Array-to-Device"), (7, "CUDA_MEMCPY_OPER_DTOA", "Device-to-Array"),
                              (8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"), (9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host"),
                              (10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer")],
    "ENUM_CUDA_MEM_KIND": [(0, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"),
                           (1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
                           (2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
                           (3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
                           (4, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
                           (5, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
                           (6, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
                           (7, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static")],
    "ENUM_NSYS_EVENT_TYPE": [(33, "NvtxCategory", "NVTX category"), (34, "NvtxMark", "NVTX mark"),
                             (39, "NvtxThread", "NVTX thread"), (59, "NvtxPushPopRange", "NVTX push/pop range"),
                             (60, "NvtxStartEndRange", "NVTX start/end range")],
    "ENUM_NSYS_EVENT_CLASS": [(0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
                              (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver")],
}


class _Strings:
    def __init__(self):
        self.ids: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        return self.ids.setdefault(s, len(self.ids) + 1)


def write(tl, path: Path) -> None:
    """Write ``tl`` to a new SQLite database at ``path``."""
    con = sqlite3.connect(path)
    try:
        con.executescript(SCHEMA)
        for table, rows in ENUMS.items():
            con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)
        sid = _Strings()
        _device(con, tl)
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                        [(c.start, c.end, 0 if c.name.startswith("cuda") else 1, GLOBAL_TID, c.corr, sid(c.name),
                          c.ret) for c in tl.calls])
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid) "
                        "VALUES (?, ?, 59, ?, ?, ?)", [(s, e, t, GLOBAL_TID, GLOBAL_TID) for t, s, e in tl.ranges])
        streams = {}
        for grid_id, op in enumerate(tl.ops, 1):
            s = op.stream
            streams[s.id] = s
            base = (op.start, op.end, s.device, s.context, None, s.id, op.corr, GLOBAL_PID)
            i = op.info
            if op.kind == "kernel":
                name, threads = sid(op.name), i["block"][0] * i["block"][1] * i["block"][2]
                nthreads = threads * i["grid"][0] * i["grid"][1] * i["grid"][2]
                con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + ", ".join("?" * 28) + ")",
                            (*base, name, name, name, 0, 0, i["registers"], *i["grid"], *i["block"],
                             i["static_shared"], i["dynamic_shared"], i["local_bytes"], i["local_bytes"] * nthreads,
                             grid_id, i["static_shared"] + i["dynamic_shared"], None, None))
            elif op.kind == "memset":
                con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                            (*base, i.get("value", 0), i["bytes"], DEVICE_MEMORY))
            else:
                src, dst = MEM_KIND[i["copy"]]
                con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + ", ".join("?" * 20) + ")",
                            (*base, i["bytes"], COPY_KIND[i["copy"]], None, src, dst, s.device, s.context,
                             s.device, s.context, 0, None, None))
        con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, ?, 0, 1, ?, 0, ?)",
                        [(s.id, s.id, s.context, 0 if s.kind == "legacy" else 1) for s in streams.values()])
        con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(v, k) for k, v in sid.ids.items()])
        con.commit()
    finally:
        con.close()


def _device(con, tl) -> None:
    m = tl.machine.data
    sm, lim, mem = m["sm"], m["limits"], m.get("memory", {})
    clock_khz = int(float(sm["clock_mhz"]) * 1000)
    bandwidth = int(float(mem.get("dram_bytes_per_cycle", 0)) * clock_khz * 1000)
    devices = sorted({op.stream.device for op in tl.ops} | {0})
    con.executemany("INSERT INTO TARGET_INFO_GPU VALUES (" + ", ".join("?" * 26) + ")",
                    [(0, d, f"xcc emulated {tl.machine.name}", "emulated", 1, 0, 0, bandwidth, clock_khz,
                      int(sm["count"]), d, None, None, tl.machine.name, d, 1, 1, 9, 0,
                      int(lim["max_threads_per_block"]), int(m.get("warp_size", 32)),
                      int(lim.get("shared_memory_per_block", 0)), int(lim["registers"]), int(lim["max_warps"]),
                      int(lim["shared_memory_bytes"]), int(lim["registers"])) for d in devices])
