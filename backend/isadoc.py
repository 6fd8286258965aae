"""Render docs/isa.md from the ISA table, so the document can never disagree with the encoder.

    python -m xcc.backend.isadoc > docs/isa.md
"""

from __future__ import annotations

from xcc.backend import isa
from xcc.backend.memory import WINDOW_BYTES, WINDOWS
from xcc.backend.spill import MIN_REGISTERS

PIPES = {"alu": "integer/logic ALU", "fma": "FP32 and integer multiply-add", "sfu": "special functions",
         "lsu": "load/store, constant, shuffle", "cbu": "convergence and branch unit", "adu": "address/special",
         "fp64": "FP64"}

MODEL = """\
# The xg1 instruction set

This file is generated from `backend/isa.py` by `python -m xcc.backend.isadoc`; a test checks
that it is current. Edit the table, not this file.

## Machine model

- A **warp** is 32 threads. Threads have independent program counters (independent thread
  scheduling, as NVIDIA GPUs since Volta); the compiler makes reconvergence explicit with
  convergence barriers: `BSSY Bk, target` records the warp's active threads in barrier k before a
  divergent branch, and `BSYNC Bk` at the immediate post-dominator waits until all of them (those
  not exited) arrive. 16 convergence barriers B0-B15.
- **Registers** per thread: R0-R254 (32 bits) and RZ (reads 0, writes discarded). A 64-bit value
  lives in an even-aligned pair `Rn:Rn+1` (low word in Rn). Sub-word values (8/16-bit) live
  zero-extended in a 32-bit register.
- **Predicates**: P0-P6 and PT (always true). Any instruction may be guarded by `@Pn` or `@!Pn`.
- **Special registers** (S2R): {srs}.
- **Constant bank 0** holds the launch: `ntid.x/y/z` at 0x0, `nctaid.x/y/z` at 0xC, the addresses
  of the kernel's module-level `.global` variables from 0x20 (8 bytes each, in the order of the
  object file's `globals`; the launch allocates and initialises them), the kernel parameters from
  0x160 (as on NVIDIA GPUs). RIC operands may name `c[0x0][offset]` directly.
- **Memory spaces**: global (64-bit addresses, `[Rn:Rn+1 + imm32]`), shared (per CTA, 32-bit
  offsets, `[Rn + imm32]`, 32 banks of 4 bytes: the static `.shared` variables, then the launch's
  dynamic shared memory, where `.extern .shared` arrays start), local (per thread, 32-bit offsets,
  `[Rn + imm32]`: the kernel's `.local` variables, `local_bytes` in the object file, reported as its
  stack frame), and the constant bank. Accesses must be naturally aligned; a misaligned or
  out-of-bounds access faults the kernel with the PTX line.
- **Generic addresses** (`LD`/`ST`/`ATOM`, PTX's generic `ld`/`st`/`atom`): 64-bit addresses in which
  shared, local and const memory appear through fixed 4 GiB windows, as on NVIDIA GPUs:
{windows}
  The shared window shows the executing thread's CTA's shared memory and the local window the
  thread's own local memory; every other generic address is a global address. A window base has
  zero low 32 bits, so `cvta.<space>` adds the base to the high word (`IADD3`) and `cvta.to.<space>`
  subtracts it; `isspacep` compares the high word. An access through a window beyond the space's
  size faults as an out-of-bounds access of that space (the xg1 backend maps no const memory:
  its window faults).
- **Hazards are the compiler's job** (as on NVIDIA GPUs since Maxwell): each instruction carries a
  control code with a stall count (cycles before the next instruction may issue), a yield hint,
  a write scoreboard (set when a variable-latency result is written), a read scoreboard, and a
  mask of scoreboards to wait on before issue. Fixed-latency classes are covered by stalls; the
  others by scoreboards. Latencies per class live in the machine description
  (`backend/machines/xg1.toml`).
- **Register spilling**: a kernel gets at most `--maxrregcount` / `.maxnreg` / `max_registers`
  registers (R0 upward; a limit below {min_regs} is raised to {min_regs}, as ptxas raises one below
  its ABI minimum, 24 on sm_80). When the linear-scan allocator finds no free register it evicts the
  value read furthest ahead (a value defined by a constant `MOV`, `LDC` or launch-constant `S2R` is
  preferred and simply recomputed before each read). An evicted value gets one slot in the thread's
  local memory after the kernel's own `.local` variables (8-byte aligned): `STL`/`STL.64 [RZ+slot]`
  after every definition (one half of a pair is stored alone), `LDL`/`LDL.64` into a short-lived
  register before every read, and a reload before a guarded definition, so the slot is right on
  every path through loops and divergent branches. Reloads are variable-latency and scoreboarded
  like any load. The slots count in `local_bytes` (the stack frame); the object file reports
  `spill_bytes` (the slots), `spill_stores` and `spill_loads` (bytes the spill code stores and
  loads, counted statically, as ptxas's `-v` does). The allocation checker follows every value
  through registers, predicate spill registers and spill slots to each read.
- **Calls** (`.func`): not yet implemented; the planned convention passes arguments in R4 upward
  with a stack in local memory.

## Instruction word (128 bits, little-endian)

| field | bits | meaning |
|---|---|---|
{fields}

Operand B (`b`) is a register, a 32-bit immediate, or a constant-bank reference
`c[bank][offset]` (bank in bits 48-52, offset in 32-47), as the `bkind` field says.

## Operand kinds

| kind | meaning |
|---|---|
| R | 32-bit register |
| W | 64-bit register pair (even register) |
| P | predicate |
| RIC / WIC | register, immediate or constant-bank word (32 / 64 bits) |
| C | constant-bank word only |
| I | immediate only |
| L | branch target, signed offset in instructions from the next instruction |
| SR | special-register number |
| B | convergence-barrier number |

## Instructions

| mnemonic | operands | modifiers | pipe | latency class | SASS | semantics |
|---|---|---|---|---|---|---|
{rows}

## Latency classes

Fixed (covered by stall counts): {fixed}. Every other class is variable and tracked by
scoreboards. Pipes: {pipes}.
"""


def render() -> str:
    fields = "\n".join(f"| `{f}` | [{lo}:{lo + w}) | |" for f, (lo, w) in isa.FIELDS.items())
    rows = []
    for d in sorted(isa.TABLE.values(), key=lambda d: d.opcode):
        ops = ", ".join(f"{o.field}:{o.kind}{'(def)' if o.is_def else ''}" for o in d.operands)
        mods = "; ".join(f"{m.name}: {'/'.join(v for v in m.values if v) if len(m.values) <= 16 else '8-bit LUT'}"
                         for m in d.mods)
        rows.append(f"| `{d.mnemonic}` | {ops} | {mods} | {d.pipe} | {d.latency} | {d.sass} | "
                    f"{d.doc.replace('|', '&#124;')} |")
    windows = "\n".join(f"  - {space}: `[{base:#x}, {base + WINDOW_BYTES:#x})`"
                         for space, base in sorted(WINDOWS.items(), key=lambda kv: kv[1]))
    return MODEL.format(windows=windows, min_regs=MIN_REGISTERS, srs=", ".join(s[3:] for s in isa.SPECIAL_REGS), fields=fields, rows="\n".join(rows),
                        fixed=", ".join(sorted(isa.FIXED_LATENCY_CLASSES)),
                        pipes="; ".join(f"{k} = {v}" for k, v in PIPES.items()))


if __name__ == "__main__":
    print(render(), end="")
