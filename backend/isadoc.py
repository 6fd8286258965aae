"""Render docs/isa.md from the ISA table, so the document can never disagree with the encoder.

    python -m xcc.backend.isadoc > docs/isa.md
"""

from __future__ import annotations

from xcc.backend import isa
from xcc.backend.isa import WINDOW_BYTES, WINDOWS
from xcc.backend.spill import MIN_REGISTERS

PIPES = {"alu": "integer/logic ALU", "fma": "FP32 and integer multiply-add", "sfu": "special functions",
         "lsu": "load/store, constant, shuffle", "cbu": "convergence and branch unit", "adu": "address/special",
         "fp64": "FP64", "tensor": "tensor cores (HMMA, IMMA, WGMMA)"}

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
- **Constant bank 0** holds the launch: `ntid.x/y/z` at 0x0, `nctaid.x/y/z` at 0xC, `%dynamic_smem_size`
  at 0x18, `%total_smem_size` at 0x1C (static + dynamic shared memory, rounded up to 128 bytes), the addresses
  of the kernel's module-level `.global` variables from 0x20 (8 bytes each, in the order of the
  object file's `globals`; the launch allocates and initialises them; at most 37; see "Initialised
  variables" below for addresses in their initial data), `%gridid` at 0x148 (the process's launch counter),
  `%current_graph_exec` at 0x150 (the executable graph's handle, 0 outside a graph launch), `%envreg2` and
  `%envreg1` at 0x158 and 0x15C (the low and high words of a cooperative launch's grid-sync workspace,
  zero-initialised by the driver; 0 for other launches), the kernel parameters from
  0x160 (as on NVIDIA GPUs). RIC operands may name `c[0x0][offset]` directly.
- **Constant bank 3** holds the module's `.const` (`__constant__`) data the kernel reads, laid out in the
  order of the object file's `constants` (as the IR lays out the const space); each launch fills it
  from the module's copy, which the host writes with `cuModuleGetGlobal` / `Module.get_global`.
  `ld.const` of a variable at a constant offset is `LDC` from `c[0x3][offset]` (SASS's bank for user
  constants); a dynamically indexed `ld.const` is refused.
- **Memory spaces**: global (64-bit addresses, `[Rn:Rn+1 + imm32]`), shared (per CTA, 32-bit
  offsets, `[Rn + imm32]`, 32 banks of 4 bytes: the static `.shared` variables, then the launch's
  dynamic shared memory, where `.extern .shared` arrays start), local (per thread, 32-bit offsets,
  `[Rn + imm32]`: the kernel's `.local` variables, `local_bytes` in the object file, reported as its
  stack frame), and the constant bank. Accesses must be naturally aligned; a misaligned or
  out-of-bounds access faults the kernel with the PTX line.
- **Generic addresses** (`LD`/`ST`/`ATOM`, PTX's generic `ld`/`st`/`atom`): 64-bit addresses in which
  shared, local and const memory (and the kernel parameters) appear through fixed 4 GiB windows, as
  on NVIDIA GPUs:
{windows}
  The shared window shows the executing thread's CTA's shared memory and the local window the
  thread's own local memory; every other generic address is a global address. A window base has
  zero low 32 bits, so `cvta.<space>` adds the base to the high word (`IADD3`) and `cvta.to.<space>`
  subtracts it; `isspacep` compares the high word. An access through a window beyond the space's
  size faults as an out-of-bounds access of that space. The const window shows constant bank 3 (the
  kernel's `.const` variables, the bytes `LDC c[0x3][..]` reads): `ld.const` through a run-time address,
  of an 8/16-bit type or at an offset `LDC` cannot read (not a multiple of 4) is a generic `LD` from
  that window, and so is a generic load from a `cvta.const` address (`cvta.to.const` converts back); `.const`
  is read-only, so a store or atomic through the window faults as through the param window.
- **Kernel parameters as memory** (`.param` state space of a kernel): a kernel parameter's
  param-space address (`mov.u64 %rd, name`) is its byte offset in the launch's parameter buffer, a
  compile-time constant. The param window above shows that buffer (constant bank 0 from
  `c[0x0][0x160]`, the same bytes `LDC` reads), read-only: a store or atomic through it faults.
  `cvta.param` (PTX ISA 8.x, `__grid_constant__`) adds the window base, and `ld.param` through a
  register address (a `.b8` struct parameter indexed at run time, as nvcc and CUTLASS emit) is a
  generic `LD` from the window at the same offset, at any offset and width (naturally aligned, as
  every access; past the parameters it faults as out-of-bounds); a parameter read at a constant
  offset stays `LDC` from bank 0. The parameter buffer is never copied: nvcc itself copies a
  by-value parameter whose address escapes to local memory, other than a `__grid_constant__` one.
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
- **Calls** (`.func`; see "Calls" below): a kernel and every device function it reaches are one
  image, the functions laid out after the kernel; arguments and return values travel in memory on a
  per-thread stack in local memory, every register is caller-saved.

- **Tensor cores** (`HMMA`, `IMMA`) are warp-collective: the 32 lanes of a warp execute one together
  (a lane missing - diverged, exited, guarded off - faults the kernel), as PTX's `mma.sync.aligned`.
  SASS's `HMMA.16816` / `IMMA.16832` read four-register A fragments, which a register allocator of
  32-bit registers and 64-bit pairs cannot hold, so each xg1 MMA instruction computes **half of SASS
  HMMA.16816** (or of HMMA.1688, IMMA.16832): the 8 rows of D that lanes hold in their first (rows
  groupID) or second (rows groupID + 8) C/D registers. With PTX's fragment registers
  (`groupID = lane >> 2`; PTX ISA 9.7.14.5):

  | PTX mma | rows groupID | rows groupID + 8 |
  |---|---|---|
  | m16n8k16 .f16/.bf16 -> .f32 | `HMMA.16816.F32 {{d0,d1}}, {{a0,a2}}, {{b0,b1}}, {{c0,c1}}` | `{{d2,d3}}, {{a1,a3}}, {{b0,b1}}, {{c2,c3}}` |
  | m16n8k16 .f16 -> .f16 | `HMMA.16816.F16 d0, {{a0,a2}}, {{b0,b1}}, c0` | `d1, {{a1,a3}}, {{b0,b1}}, c1` |
  | m16n8k8 .f16/.bf16 -> .f32 | `HMMA.1688.F32 {{d0,d1}}, a0, b0, {{c0,c1}}` | `{{d2,d3}}, a1, b0, {{c2,c3}}` |
  | m16n8k8 .f16 -> .f16 | `HMMA.1688.F16 d0, a0, b0, c0` | `d1, a1, b0, c1` |
  | m16n8k32 .s8/.u8 -> .s32 | `IMMA.16832 {{d0,d1}}, {{a0,a2}}, {{b0,b1}}, {{c0,c1}}` | `{{d2,d3}}, {{a1,a3}}, {{b0,b1}}, {{c2,c3}}` |

  `{{x,y}}` is an even-aligned register pair (the compiler moves separate values into one with `MOV`).
  `wmma.mma` m16n16k16 is two m16n8k16 (B registers b0, b1 for columns 0-7 and b2, b3 for 8-15, the
  accumulator's first and second half), four instructions. The arithmetic is
  `xcc.semantics.matrix.mma` (every element the exact sum rounded once; integers exact, wrapping or
  saturating with `SAT`). Mixed f16/f32 C and D types are refused. A half is variable-latency
  (`tensor` class, scoreboarded).
- **LDSM** loads one 8x8 b16 matrix of `ldmatrix` per instruction (`mat` = which eight lanes supply
  its row addresses); a generic `ldmatrix` address is taken as a shared-window address (its low word;
  PTX leaves any other address undefined). `wmma.load` / `wmma.store` are ordinary loads and stores
  whose lane-dependent addresses (from `SR_LANEID`) the compiler derives from the fragment layout, as
  ptxas does; unlike the IR interpreter they do not check the fragment alignment PTX requires.
- **Asynchronous copies**: `LDGSTS` reads its global source when it executes and queues the write to
  shared memory in the thread's open group; `LDGDEPBAR` closes the group; `DEPBAR n` performs, in issue
  order, the thread's copies of all but its `n` most recently closed groups
  (`xcc.semantics.async_copy`). Until then shared memory holds its old contents. Nothing else (not
  `BAR`) completes a copy; the list scheduler keeps every instruction on its side of `LDGDEPBAR` and
  `DEPBAR`.
- **Warpgroup MMA** (sm_90a `wgmma.mma_async` m64nNk16, f32 accumulators, f16/bf16 A and B from
  shared-memory matrix descriptors) is warpgroup-collective: the 128 threads of a warpgroup (CTA threads
  128g .. 128g+127) execute `WGMMA.F32`, `WARPGROUP.ARRIVE`, `.COMMIT` and `.DEPBAR` together (a thread
  missing faults). SASS's `HGMMA.64xNx16.F32` writes all N/2 accumulator registers of a thread, an
  operand no allocator of 32-bit registers and pairs can hold, so each `WGMMA.F32 d, a, part, c, e, ps`
  computes **one accumulator register** `part` (the immediate b) from its own C register `e`: a PTX
  wgmma is N/2 of them, sharing the descriptor pairs `a` (A) and `c` (B). The layouts, fragments and
  arithmetic (the exact sum rounded once to f32) are `xcc.semantics.wgmma`'s. With A in registers
  (`AREG`), `a` is instead the pair of the thread's A registers that `part`'s half of the rows needs
  (registers (part/2)%2 and +2 of the fragment), gathered over the warpgroup. A WGMMA reads shared
  memory and completes when it executes, so `WARPGROUP.ARRIVE` (`wgmma.fence`), `WARPGROUP.COMMIT`
  (`commit_group`), `WARPGROUP.DEPBAR n` (`wait_group n`) and `FENCE.VIEW.ASYNC` (`fence.proxy.async`)
  change no values; they and every WGMMA are scheduling fences that nothing moves across.
- **mbarrier and bulk copies** (sm_90 `mbarrier`, `cp.async.bulk`): `SYNCS.*` address an 8-byte-aligned
  mbarrier object at `shared[a + b]` whose layout and rules are `xcc.semantics.mbarrier`'s
  (docs/semantics.md, "mbarrier"); several threads acting on one object in one step act in thread order.
  `SYNCS.PHASECHK.TRYWAIT` (`try_wait`) suspends each thread whose phase is incomplete until an arrive or
  complete-tx completes a phase of its object, then writes `pd = 1`; a wait nobody ends is a deadlock
  the launch reports.  `BLKCP` copies when it executes; a PTX bulk copy that signals an mbarrier is
  `BLKCP` followed by `SYNCS.TX.COMPLETE` of the same byte count.  All are scheduling fences.
- **Thread-block clusters** (sm_90): the `SR_CLUSTER_*`, `SR_CLUSTERID.*`, `SR_NCLUSTERID.*` and
  `SR_IS_EXPLICIT_CLUSTER` special registers read the launch's cluster geometry (`xcc.semantics.cluster`).
  Distributed shared memory has no instructions of its own: a shared address whose bits 24-31 hold
  `rank + 1` (1 .. the cluster's CTA count; PTX's `mapa` makes `(rank + 1) << 24 | offset`) names byte
  `offset` of CTA `rank` of the executing CTA's cluster for `LDS`/`STS`/`ATOMS`, the `SYNCS.*` objects and
  `BLKCP` destinations, and through the generic shared window (its base plus that 32-bit value); an
  address with bits 24-31 zero is the executing CTA's own. `UCGABAR.ARV` arrives at the cluster barrier
  and goes on; `UCGABAR.WAIT` waits until every non-exited thread of the cluster's CTAs arrived in its
  phase (a wait without an arrive faults; one nobody ends is a deadlock the launch reports).

## Initialised variables

A `.global` or `.const` variable's initial data may hold addresses of `.global` variables (PTX ISA 9.0
section 5.4.4: `.global .u64 p = generic(lut)+8;`, `.global .u32 tbl[2] = {{lut, lut+4}};`, and the byte
forms `0xFF00(lut)`). The compiler leaves zeros there and records a relocation per element; in the object
file each `globals`/`constants` entry carries `relocs`, a list of `[byte offset, width in bytes,
variable, addend, mask]` (omitted when empty), and a kernel's `reloc_globals` lists, like `globals`, the
variables it reaches only through such addresses (placed by the loader, with no constant-bank slot).
When the loader allocates a variable (at the first launch that uses it, or a host query) it writes each
relocation: the named variable's address (allocating that one too) plus the addend, ANDed with the mask
and shifted down to bit 0 when the mask is non-zero, truncated to the width (a 32-bit element keeps the
address's low word). A global variable's generic address is its global address, so `generic(v)` and `v`
relocate alike. Function addresses in initialisers are resolved at compile time instead (`xcc.ir.funcptr`).

## Calls

PTX passes arguments through `.param` variables (`st.param` before `call`, `ld.param` after); xg1 keeps
exactly that model, with the `.param` frames on a per-thread stack in local memory
(`backend/isel_calls.py`). A `.reg` parameter of a `.func` (`.func (.reg .b32 d) f (.reg .b32 a)`, scalar,
not `.pred`) takes a slot of the callee's frame laid out as a `.param` one of its type: the IR builder
(`xcc.ir.build`) copies the slot into the register at entry and the register into the slot at each
`ret`, and a call passing a register or constant (`call (%r1), f, (%r2, 5);`) stores it into a fresh
call-site `.param` variable before the call and loads return values from one after it.

- **Registers.** `R1` is the stack pointer: the base of the running function's frame (the kernel's
  frame is at local address 0 and addressed from `RZ`). `R2:R3` receive the return address pair
  from `CALL`. R1-R3 are never allocated in an image with calls (its register count is at least 4,
  the maximum over its functions). No register carries arguments or results, and every register and
  predicate is caller-saved: values live across a call are stored to the caller's frame before it and
  reloaded after it (a constant is recomputed instead), exactly as spilled values. The caller's
  predicates are saved by the hardware (below).
- **Frame** of a function, from its base `R1` (multiples of 16 bytes):

  | bytes | holds |
  |---|---|
  | `[0, P)` | its `.param` block: parameters and return parameters at their PTX offsets, then its own call-site `.param` variables |
  | `[P, L)` | its `.local` variables (16-byte aligned start) |
  | `[L, F-O)` | spill slots: values saved around calls, the return-address pair of a non-leaf function, register spills |
  | `[F-O, F)` | the outgoing-argument area: the largest parameter block of its callees (48 bytes for a `SYSCALL`) |

  A kernel's frame is its `.local` variables, its call-site `.param` variables, its spill slots and
  its outgoing area.
- **Call sequence.** The caller copies each argument from its call-site variable into the outgoing
  area (`LDL`/`STL`, words or bytes), sets `R1 = base + F - O` (the callee's frame starts at the
  outgoing area, so the callee finds its parameters at `[R1 + offset]`), computes the end of the
  callee's frame `R1 + F_callee` into a register and executes `CALL R2:R3, target, probe`. The callee
  copies `R2:R3` to a register pair at its entry and ends with `RET` through it. After the return the
  caller restores `R1 -= F - O` and copies the return parameters back to its call-site variables.
- **CALL** `d, target, a`: per thread, `d.lo = pc + 1` (an instruction index of the image) and `d.hi` =
  the thread's saved state: bit k (0-15) its membership of convergence barrier Bk, bit 16+n (0-6) its
  predicate Pn; the thread then leaves every convergence barrier (a callee's BSSY/BSYNC numbers
  start at B0 again and never wait for the caller's regions; a barrier waiting only for threads that
  called is released) and jumps to `target`. If `a`, the end of the callee's frame, exceeds the
  thread's local memory the kernel faults with "call stack overflow" at the call. Threads of a warp
  may call from different sites; the scheduler runs the callee for all threads at the same pc
  together, so callers reconverge inside it.
- **RET** `a`: per thread, `pc = a.lo`; the convergence-barrier membership and predicates saved in
  `a.hi` are restored. Threads return to their own call sites.
- **Control codes.** A call and a return end their basic block: at `CALL`, `RET` and at every
  function's entry, and after each call, every scoreboard is waited and fixed latencies are drained,
  as at any block boundary; the scheduler moves nothing across them.
- **Stack size.** The kernel's `local_bytes` is its frame plus its call stack (`stack_bytes` in the
  object file): the deepest chain of callee frames past the kernel's frame for an acyclic call graph,
  or 8 KiB for a recursive one (CUDA's default `cudaLimitStackSize` is 1 KiB; xg1's frames are larger:
  arguments in memory, every live value saved). `xcc compile -v` reports `local_bytes` as the
  "bytes stack frame".
- **alloca.** `alloca`/`stacksave`/`stackrestore` need no stack-pointer register: `xcc.ir.alloca` gives
  each function using them a 4 KiB `.local` arena in its frame (released when it returns) and a virtual
  register as its dynamic stack pointer; an allocation past the arena's end traps with a located
  "alloca: stack overflow" fault.
- **SYSCALL** `a, b` runs a CUDA-runtime service: `VPRINTF` (`printf`: format string address at
  `local[a]`, argument buffer address at `local[a + 8]`, the number of arguments formatted stored to
  `local[a + 16]`; output collected per thread and printed in thread order after the launch, as
  `LaunchStats.printf_output`), `ASSERTFAIL` (`assert`: message, file, line, function at `local[a]`,
  `[a + 8]`, `[a + 16]` (32-bit), `[a + 24]`; faults the kernel with the assertion message) and `TRAP`
  (PTX `trap`, and calls through a pointer to no function: faults with message `b` of the image's
  `messages`). The argument block is the caller's outgoing area.

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

| mnemonic | operands | modifiers | pipe | latency class | classes | SASS | semantics |
|---|---|---|---|---|---|---|---|
{rows}

## Instruction classes

Each row names its classes; every set of instructions the compiler, the interpreters and the cycle
model treat alike is derived from them (`isa.EFFECTS`, `isa.FENCES`, `isa.CALLS`, `isa.MEMORY_SPACE`,
...). Memory instructions also name the state space they address ({spaces}); tensor-core
instructions their family (`tensor=` {families}).

| class | meaning |
|---|---|
{classes}

Never removed as dead code (effects): {effects}. Nothing is scheduled across (fences): {fences}.

## Latency classes

Fixed (covered by stall counts): {fixed}. Every other class is variable and tracked by
scoreboards. Pipes: {pipes}.
"""


def _mod_values(m: isa.Mod) -> str:
    if len(m.values) <= 16:
        return "/".join(v for v in m.values if v)
    return "8-bit LUT" if m.name == "lut" else f"{m.values[0]}/{m.values[1]}/.../{m.values[-1]}"


def render() -> str:
    fields = "\n".join(f"| `{f}` | [{lo}:{lo + w}) | |" for f, (lo, w) in isa.FIELDS.items())
    rows = []
    for d in sorted(isa.TABLE.values(), key=lambda d: d.opcode):
        ops = ", ".join(f"{o.field}:{o.kind}{'(def)' if o.is_def else ''}" for o in d.operands)
        mods = "; ".join(f"{m.name}: {_mod_values(m)}" for m in d.mods)
        words = sorted(d.classes - {"tensor"}) + [w for w in (d.space,) if w] + \
            ([f"tensor={d.tensor}"] if d.tensor else [])
        rows.append(f"| `{d.mnemonic}` | {ops} | {mods} | {d.pipe} | {d.latency} | {' '.join(words)} | {d.sass} | "
                    f"{d.doc.replace('|', '&#124;')} |")
    windows = "\n".join(f"  - {space}: `[{base:#x}, {base + WINDOW_BYTES:#x})`"
                         for space, base in sorted(WINDOWS.items(), key=lambda kv: kv[1]))
    return MODEL.format(windows=windows, min_regs=MIN_REGISTERS, srs=", ".join(s[3:] for s in isa.SPECIAL_REGS), fields=fields, rows="\n".join(rows),
                        fixed=", ".join(sorted(isa.FIXED_LATENCY_CLASSES)),
                        classes="\n".join(f"| {k} | {v} |" for k, v in isa.CLASSES.items()),
                        spaces=", ".join(isa.SPACES), families=", ".join(isa.TENSOR_FAMILIES),
                        effects=", ".join(sorted(isa.EFFECT_CLASSES)), fences=", ".join(sorted(isa.FENCE_CLASSES)),
                        pipes="; ".join(f"{k} = {v}" for k, v in PIPES.items()))


if __name__ == "__main__":
    print(render(), end="")
