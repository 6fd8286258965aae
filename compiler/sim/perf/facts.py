"""What the cycle model knows about each instruction and machine, read from the ISA table and the description.

Every instruction class comes from the ISA table (:mod:`xcc.backend.isa`), never from a list of mnemonics
here: the state space a memory instruction addresses (``isa.MEMORY_SPACE``; generic addresses count as
global, constant-bank loads are not memory accesses of the model), the CTA barriers that always wait
(``isa.BARRIER_WAITS``), the tensor-core family of a tensor instruction (``isa.TENSOR_FAMILY``, Nsight's op
kind of the tensor pipe) and its ops (``isa.tensor_ops`` of ``isa.MMA_SHAPE``), the cp.async roles (class
``async_copy``; of the ``async_wait`` rows, the one without a count closes the warp's open group, the one
with a count ``b`` waits for all but the ``b`` newest closed groups), and the reads that may use the L1 (the
rows with a ``BYPASS`` modifier).  Every figure comes from the machine description (``[latency]``,
``[issue]``, ``[tensor]``, ``[memory]``, ``warp_size``) through :class:`xcc.backend.machine.Machine`; a
figure the model needs and the description lacks is an error naming it, never a number written here.

Nsight Compute names memory instructions other than plain loads and stores by their SASS opcode (``op_ldsm``
for ldmatrix, ``op_ldgsts`` for cp.async): here the warp-collective and async-copy memory instructions.
"""

from __future__ import annotations

from xcc.backend import isa
from xcc.backend.isa import NUM_SCOREBOARDS, tensor_ops
from xcc.backend.machine import Machine
from xcc.diagnostics import XccError

__all__ = ["InstFacts", "mem_space", "tensor_op", "machine_value", "TENSOR_KINDS", "SHARED_OPS", "GLOBAL_OPS"]

# the model's memory spaces by the ISA table's state spaces: "g" global (and generic), "s" shared, "l" local
_SPACE_CODE = {"global": "g", "generic": "g", "shared": "s", "local": "l"}
_MEM_SPACE = {mn: _SPACE_CODE[s] for mn, s in isa.MEMORY_SPACE.items() if s in _SPACE_CODE}
TENSOR_KINDS = isa.TENSOR_FAMILIES
"""Nsight's op kinds of the tensor pipe (``sm__inst_executed_pipe_tensor_op_<kind>``)."""


def mem_space(mnemonic: str) -> str | None:
    """The model's memory space of ``mnemonic`` (``g``, ``s`` or ``l``), or None for other instructions."""
    return _MEM_SPACE.get(mnemonic)


def tensor_op(inst) -> tuple[str, str, int]:
    """(Nsight op kind, input type, ops) of the tensor-core instruction ``inst``: the input type is IMMA's i8
    or the ``atype`` modifier (f16, bf16, e4m3, e5m2; a row without one, HMMA.*.F16, takes f16; the .TF32 rows
    tf32)."""
    kind = isa.TENSOR_FAMILY[inst.mnemonic]
    dtype = "i8" if kind == "imma" else str(inst.mods.get("atype", "F16")).lower()
    if inst.mnemonic.endswith(".TF32"):
        dtype = "tf32"
    if dtype in ("s8", "u8", "b1"):  # IGMMA: [tensor] i8 (no b1 figure)
        dtype = "i8"
    return kind, dtype, tensor_ops(inst.mnemonic)


def _own_op(d: isa.InstrDef) -> str | None:
    """Nsight's op of a memory instruction counted apart from plain loads and stores (its SASS opcode)."""
    own = d.mnemonic in _MEM_SPACE and d.classes & {"collective", "async_copy"}
    return d.mnemonic.split(".")[0].lower() if own else None


def _ops(space: str) -> tuple[str, ...]:
    own = sorted({op for mn, d in isa.TABLE.items() if _MEM_SPACE.get(mn) == space and (op := _own_op(d))})
    return ("ld", "st", *own)


SHARED_OPS = _ops("s")
"""Nsight's ops of shared-memory instructions (``..._mem_shared_op_<op>``): ld, st, ldsm."""
GLOBAL_OPS = _ops("g")
"""Nsight's ops of global-memory instructions (``..._mem_global_op_<op>``): ld, st, ldgsts."""


def machine_value(machine: Machine, table: str | None, key: str) -> int | float:
    """``[table] key`` of the description (``table`` None: a top-level key such as ``warp_size``); a
    description without it is an error naming the key."""
    section = machine.data if table is None else machine.data.get(table, {})
    if key not in section:
        raise XccError(f"machine description '{machine.name}' lacks " + (f"[{table}] " if table else "") + key)
    return section[key]


class InstFacts:
    """Per-pc issue facts read from the control codes, the ISA table and the machine description."""

    __slots__ = ("stall", "wait", "wsb", "rsb", "pipe", "interval", "bar", "space", "lat", "long", "store", "op",
                 "cp", "tensor", "l1")

    def __init__(self, inst, machine: Machine):
        d, c = inst.d, inst.ctrl
        self.stall = max(1, c.stall)
        self.wait = tuple(k for k in range(NUM_SCOREBOARDS) if c.wait >> k & 1)
        self.wsb = c.wsb if c.wsb < NUM_SCOREBOARDS else -1
        self.rsb = c.rsb if c.rsb < NUM_SCOREBOARDS else -1
        self.pipe = d.pipe
        # a pipe the description gives no [issue] rate accepts one instruction per cycle
        self.interval = 1.0 / float(machine.data.get("issue", {}).get(d.pipe, 1.0))
        self.bar = inst.mnemonic in isa.BARRIER_WAITS
        self.space = mem_space(inst.mnemonic)
        self.lat = machine.latency(d.latency)
        self.tensor = isa.TENSOR_FAMILY.get(inst.mnemonic)  # Nsight's op kind of a tensor-core instruction
        if self.tensor is not None:
            _, dtype, ops = tensor_op(inst)
            rate = machine.tensor_rate(dtype)
            if rate is not None:  # else 1 / [issue] tensor
                self.interval = ops / (rate / int(machine_value(machine, "sm", "subpartitions")))
            self.lat = machine.tensor_latency(dtype)
        self.long = self.space in ("g", "l")
        # a row of class load without a destination (BLKCP, cp.async.bulk global -> shared) still reads
        self.store = self.space is not None and not any(o.is_def for o in d.operands) and not d.is_load
        self.op = _own_op(d) or ("st" if self.store else "ld")
        # the L1's part in a global access: 1 a cacheable read (looked up, allocated on a miss), 0 a read that
        # bypasses it (BYPASS: .cg/.cv/.volatile/strong), -1 a store or atomic (write-through: invalidates)
        cacheable = any(m.name == "BYPASS" for m in d.mods)  # the ISA table's L1-cacheable global reads
        self.l1 = (0 if inst.mods.get("BYPASS") else 1) if cacheable else -1
        # cp.async: 1 joins the open group (async_copy), 2 closes it (async_wait without a count), 3 + b waits
        # for all but the b most recently closed groups (async_wait b); 0 otherwise
        self.cp = 0
        if "async_copy" in d.classes:
            self.cp = 1
        elif "async_wait" in d.classes:
            self.cp = 3 + int(inst.ops["b"]) if any(o.field == "b" for o in d.operands) else 2
