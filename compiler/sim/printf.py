"""Device ``printf`` (CUDA's ``vprintf(const char *fmt, void *args)``): the format with C semantics over
the argument buffer, as both interpreters run it (CUDA C Programming Guide, "Formatted Output": arguments
are aligned to their size in the buffer; ``%s`` reads a NUL-terminated string from device memory)."""

from __future__ import annotations

import re
import struct

_CONV = re.compile(rb"%([-+ #0]*)(\d+)?(?:\.(\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcsp%])")


def c_printf(fmt: bytes, read, args: int) -> tuple[str, int]:
    """``fmt`` formatted as C's printf does, with CUDA's vprintf argument buffer at ``args`` (each argument
    aligned to its size: int 4, long/pointer/double 8; floats arrive as doubles); ``read(address, n)`` reads
    device bytes.  Returns (text, number of arguments)."""
    out, pos, off, count = [], 0, 0, 0

    def arg(size: int) -> int:
        nonlocal off
        off = (off + size - 1) // size * size
        v = int.from_bytes(read(args + off, size), "little")
        off += size
        return v

    for m in _CONV.finditer(fmt):
        out.append(fmt[pos:m.start()].decode(errors="replace"))
        pos = m.end()
        flags, width, prec, length, conv = (g.decode() if g else "" for g in m.groups())
        if conv == "%":
            out.append("%")
            continue
        count += 1
        spec = "%" + flags + width + ("." + prec if prec else "")
        wide = length in ("l", "ll", "z", "j", "t")
        if conv in "di":
            v = arg(8 if wide else 4)
            bits = 64 if wide else 32
            out.append((spec + "d") % (v - (1 << bits) if v >> (bits - 1) else v))
        elif conv in "ouxX":
            out.append((spec + conv.replace("u", "d")) % arg(8 if wide else 4))
        elif conv in "eEfFgGaA":
            v = struct.unpack("<d", arg(8).to_bytes(8, "little"))[0]
            out.append(float.hex(v) if conv in "aA" else (spec + conv) % v)
        elif conv == "c":
            out.append((spec + "c") % (arg(4) & 0xFF))
        elif conv == "s":
            a, chars = arg(8), bytearray()
            while not (prec and len(chars) >= int(prec)):
                b = read(a + len(chars), 1)[0]
                if not b:
                    break
                chars.append(b)
            out.append((spec + "s") % chars.decode(errors="replace"))
        else:  # p
            out.append((spec.replace(".", "") + "s") % f"0x{arg(8):x}")
    out.append(fmt[pos:].decode(errors="replace"))
    return "".join(out), count
