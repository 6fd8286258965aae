"""Machine descriptions: per-SM limits and latencies from a TOML file (``xg1`` by default).

Tables: ``[sm]`` (count, sub-partitions, scheduler, clock), ``[limits]`` (per SM), ``[shared_memory]``
(banks), ``[latency]`` (cycles per latency class), ``[memory]`` (sector size, per-SM L1 sector rate,
L1/shared capacity and carveouts, device-wide L2 and DRAM bytes per cycle), ``[issue]`` (instructions per cycle per sub-partition and
pipe), ``[tensor]`` (dense tensor-core ops per clock per SM, per input type) and ``[host]`` (the host
link and the modelled cost of runtime calls, read by the timeline: :mod:`xcc.runtime.timeline`);
``xg1.toml`` cites a source for each number.

The compiler reads it for stall counts and occupancy, the ISA interpreter for
its model, and its hash enters every cache key and object file.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xcc.diagnostics import XccError

MACHINES_DIR = Path(__file__).with_name("machines")
REQUIRED = {"sm": ("count", "subpartitions"), "limits": ("registers", "shared_memory_bytes", "max_warps",
                                                          "max_ctas", "max_threads_per_block"),
            "latency": ("alu", "fma", "sfu", "lsu", "branch"),
            "host": ("link", "link_bandwidth_gbs", "link_latency_us", "launch_api_us", "launch_latency_us",
                     "copy_api_us", "alloc_us", "free_us", "sync_us", "api_call_us", "module_load_us",
                     "jit_compile_us", "jit_cache_hit_us")}


SCHEDULERS = ("gto", "lrr")  # greedy-then-oldest, loose round-robin (compiler/sim/perf/timing.py)
# tables whose every entry is a count (a positive integer) or a rate (a positive number); latencies may be 0
_COUNTS = ("sm", "limits", "shared_memory")
_RATES = ("issue", "tensor", "memory", "host")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check_values(data: dict, where: str) -> None:
    """Every figure the models read is a number of the right sign: a typo in a hand-edited description is
    an error naming the key, not a silently different machine."""
    sched = data["sm"].get("scheduler", "gto")
    if not isinstance(sched, str) or sched.lower() not in SCHEDULERS:
        raise XccError(f"{where}: [sm] scheduler = {sched!r}: expected "
                       + " or ".join(f"'{s}'" for s in SCHEDULERS))
    for table in (*_COUNTS, "latency", *_RATES):
        section = data.get(table, {})
        if not isinstance(section, dict):
            raise XccError(f"{where}: [{table}] must be a table")
        for key, v in section.items():
            if (table, key) in (("sm", "scheduler"), ("host", "link")):
                if table == "host" and not (isinstance(v, str) and v):
                    raise XccError(f"{where}: [host] link = {v!r}: expected the link's name, a non-empty string")
                continue
            if isinstance(v, list):  # a list of sizes ([memory] shared_carveouts_kb)
                ok, want = bool(v) and all(_is_int(x) and x >= 0 for x in v), "a non-empty list of non-negative integers"
            elif table in _COUNTS and key != "clock_mhz":
                ok, want = _is_int(v) and v > 0, "a positive integer"
            elif table == "latency":
                ok, want = _is_int(v) and v >= 0, "a non-negative integer"
            else:
                ok, want = _is_number(v) and v > 0, "a positive number"
            if not ok:
                raise XccError(f"{where}: [{table}] {key} = {v!r}: expected {want}")


@dataclass(frozen=True)
class Machine:
    name: str
    data: dict
    hash: str

    @property
    def limits(self) -> dict:
        return self.data["limits"]

    def latency(self, cls: str) -> int:
        """Cycles of latency class ``cls``: ``[latency] <cls>``; a description without it is an error naming
        the key (latencies live only in machine descriptions: no figure in code stands in for one)."""
        lat = self.data["latency"]
        if cls not in lat:
            raise XccError(f"machine description '{self.name}' lacks [latency] {cls}")
        return int(lat[cls])

    def tensor_rate(self, dtype: str) -> float | None:
        """Dense tensor-core ops (a multiply-add is 2) per clock per SM for input type ``dtype``
        (``f16``, ``bf16``, ``i8``): ``[tensor] <dtype>``, or None where the description has none."""
        rate = self.data.get("tensor", {}).get(dtype)
        return None if rate is None else float(rate)

    def tensor_latency(self, dtype: str) -> int:
        """Cycles from a tensor instruction of input type ``dtype`` to its result:
        ``[latency] tensor_<dtype>``, else ``[latency] tensor``."""
        key = f"tensor_{dtype}"
        return self.latency(key if key in self.data["latency"] else "tensor")

    def bandwidth(self, level: str) -> float:
        """Device-wide bytes per cycle of ``level`` (``l2`` or ``dram``): ``[memory] <level>_bytes_per_cycle``,
        or infinity (no limit) where the description has none."""
        v = self.data.get("memory", {}).get(f"{level}_bytes_per_cycle")
        return float("inf") if v is None else float(v)


def load_machine(spec: str | Path = "xg1") -> Machine:
    """The machine named ``spec`` (a shipped description) or read from the TOML file ``spec``."""
    path = Path(spec)
    if not path.suffix and not path.exists():
        path = MACHINES_DIR / f"{spec}.toml"
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise XccError(f"cannot read machine description '{spec}': {e.strerror}") from None
    return _parse(raw, str(path))


@cache
def _parse(raw: bytes, where: str) -> Machine:
    try:
        data = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise XccError(f"{where}: invalid machine description: {e}") from None
    for table, keys in REQUIRED.items():
        for k in keys:
            if k not in data.get(table, {}):
                raise XccError(f"{where}: machine description lacks [{table}] {k}")
    _check_values(data, where)
    return Machine(data.get("name", Path(where).stem), data, hashlib.sha256(raw).hexdigest())
