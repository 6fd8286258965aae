"""ptxas as the reference for code size: registers and SASS instructions per kernel.

``ptxas -v -O3 -arch=sm_80 FILE -o OUT.cubin`` (``-c`` for relocatable PTX, nvcc's ``-rdc=true`` output)
prints one ``Used N registers`` line per function after its ``Compiling entry function 'NAME'`` line;
the instruction count comes from the cubin itself, as the CUDA toolkit here has no disassembler
(cuobjdump, nvdisasm): each kernel's code is the ELF section ``.text.<name>``, and every sm_80/sm_90
instruction is one 128-bit word (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
Microbenchmarking", 2018, section 2.1; unchanged through Ampere and Hopper). The count leaves out the
``NOP`` padding that aligns a section (opcode 0x918 in bits 0-11 of the word) and the ``BRA`` to itself
that ends every kernel (word ``0xfffffff000007947``: ``BRA`` with offset -16, predicate PT), neither of
which is executed.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

NOP_OPCODE = 0x918
SELF_LOOP = 0xFFFFFFF000007947


@dataclass(frozen=True)
class PtxasKernel:
    registers: int
    instructions: int


def available() -> bool:
    return shutil.which("ptxas") is not None


def elf_sections(data: bytes) -> dict[str, bytes]:
    """Name -> contents of every section of a little-endian ELF64 file (the cubin format)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off, names_size = headers[shstrndx][4], headers[shstrndx][5]
    names = data[names_off:names_off + names_size]
    out = {}
    for name_idx, kind, _flags, _addr, off, size, *_ in headers:
        name = names[name_idx:names.index(b"\0", name_idx)].decode()
        out[name] = b"" if kind == 8 else data[off:off + size]  # SHT_NOBITS has no file contents
    return out


def count_sass(code: bytes) -> int:
    """Instructions of one kernel's ``.text`` section, without NOP padding and the closing self-branch."""
    words = [struct.unpack_from("<Q", code, i)[0] for i in range(0, len(code) - len(code) % 16, 16)]
    return sum(1 for w in words if (w & 0xFFF) != NOP_OPCODE and w != SELF_LOOP)


def ptxas_kernels(path: Path, arch: str = "sm_80", relocatable: bool = False) -> dict[str, PtxasKernel]:
    """Registers and instructions of every function ptxas -O3 compiles from ``path`` (entries and, with
    ``relocatable``, the .func bodies), by name. Raises ``subprocess.CalledProcessError`` when ptxas refuses
    the file (ptxas 13 reads PTX ISA versions up to 9.0)."""
    with tempfile.TemporaryDirectory(prefix="xcc-ptxas-") as tmp:
        cubin = os.path.join(tmp, "out.cubin")
        cmd = ["ptxas", "-v", "-O3", f"-arch={arch}", *(["-c"] if relocatable else []), str(path), "-o", cubin]
        log = subprocess.run(cmd, check=True, capture_output=True, text=True)
        sections = elf_sections(Path(cubin).read_bytes())
    regs: dict[str, int] = {}
    current = None
    for line in (log.stdout + log.stderr).splitlines():
        m = re.search(r"Compiling entry function '([^']+)'|Function properties for (\S+)", line)
        if m:
            current = m.group(1) or m.group(2)
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            regs[current] = int(m.group(1))
    return {name: PtxasKernel(n, count_sass(sections.get(f".text.{name}", b"")))
            for name, n in regs.items()}
