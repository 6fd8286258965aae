"""Machine descriptions: per-SM limits and latencies from a TOML file (``xg1`` by default).

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
            "latency": ("alu", "fma", "sfu", "lsu", "branch")}


@dataclass(frozen=True)
class Machine:
    name: str
    data: dict
    hash: str

    @property
    def limits(self) -> dict:
        return self.data["limits"]

    def latency(self, cls: str) -> int:
        return int(self.data["latency"][cls])


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
    return Machine(data.get("name", Path(where).stem), data, hashlib.sha256(raw).hexdigest())
