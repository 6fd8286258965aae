"""Emulated device memory: atomics against a sequential reference, round trips, faults."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcc.diagnostics import XccError
from xcc.sim.memory import GLOBAL_BASE, FlatMemory, GlobalMemory, MemoryFault

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
FLOAT = {4: np.float32, 8: np.float64}
SETTINGS = settings(max_examples=100, deadline=None)


# -- sequential reference model ------------------------------------------------------------


def ref_op(op, kind, width, old, b, cmp):
    """One thread's update on raw unsigned bits (Python ints)."""
    bits = 8 * width
    mask = (1 << bits) - 1

    def signed(x):
        return x - (1 << bits) if x >> (bits - 1) else x

    if kind == "f" and op == "add":
        ft = FLOAT[width]
        a = np.array([old], UINT[width]).view(ft)[0]
        c = np.array([b], UINT[width]).view(ft)[0]
        with np.errstate(all="ignore"):
            return int(np.array([a + c], ft).view(UINT[width])[0])
    if op == "add":
        return (old + b) & mask
    if op in ("min", "max"):
        key = signed if kind == "s" else (lambda x: x)
        pick = min if op == "min" else max
        return pick(old, b, key=key)
    if op == "inc":
        return 0 if old >= b else old + 1
    if op == "dec":
        return b if old == 0 or old > b else old - 1
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return b if old == cmp else old
    raise AssertionError(op)


def ref_atomic(words, op, kind, width, slots, vals, cmps):
    words = list(words)
    olds = []
    for s, v, c in zip(slots, vals, cmps):
        olds.append(words[s])
        words[s] = ref_op(op, kind, width, words[s], v, c)
    return olds, words


COMBOS = (
    [("add", k, w) for k in "us" for w in (4, 8)]
    + [("add", "f", 4), ("add", "f", 8)]
    + [(op, k, w) for op in ("min", "max") for k in "us" for w in (4, 8)]
    + [(op, "u", w) for op in ("exch", "cas", "and", "or", "xor") for w in (4, 8)]
    + [("inc", "u", 4), ("dec", "u", 4), ("inc", "u", 8), ("cas", "u", 2), ("add", "u", 1)]
)


def word_values(width, kind):
    top = (1 << (8 * width)) - 1
    small = st.integers(0, 12)
    edge = st.sampled_from([0, 1, top, top - 1, top >> 1, (top >> 1) + 1])
    ints = st.one_of(small, edge, st.integers(0, top))
    if kind != "f":
        return ints
    ft, ut = FLOAT[width], UINT[width]
    floats = st.floats(width=8 * width, allow_nan=True).map(
        lambda x: int(np.array([x], ft).view(ut)[0]))
    return st.one_of(floats, st.sampled_from([int(np.array([v], ft).view(ut)[0])
                                              for v in (0.0, -0.0, 1.0, 1e30, 1e-40, 3.5)]))


@st.composite
def atomic_cases(draw):
    op, kind, width = draw(st.sampled_from(COMBOS))
    nslots = draw(st.integers(1, 6))
    n = draw(st.integers(1, 48))
    vals_st = word_values(width, kind)
    init = draw(st.lists(vals_st, min_size=nslots, max_size=nslots))
    slots = draw(st.lists(st.integers(0, nslots - 1), min_size=n, max_size=n))
    if op in ("inc", "dec") and draw(st.booleans()):
        vals = [draw(vals_st)] * n  # one bound for all threads (closed form path)
    else:
        vals = draw(st.lists(vals_st, min_size=n, max_size=n))
    pool = init + vals + [0, 1]
    cmps = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return op, kind, width, init, slots, vals, cmps


def run_atomic(mem, base, op, kind, width, init, slots, vals, cmps):
    ut = UINT[width]
    addrs = np.uint64(base) + np.array(slots, np.uint64) * np.uint64(width)
    mem.store(np.uint64(base) + np.arange(len(init), dtype=np.uint64) * np.uint64(width),
              np.array(init, ut), width)
    old = mem.atomic(op, addrs, np.array(vals, ut), width, kind,
                     compare=np.array(cmps, ut) if op == "cas" else None)
    final = mem.load(np.uint64(base) + np.arange(len(init), dtype=np.uint64) * np.uint64(width), width)
    return old, final


@SETTINGS
@given(atomic_cases(), st.booleans())
def test_atomics_match_sequential_reference(case, use_global):
    op, kind, width, init, slots, vals, cmps = case
    if use_global:
        mem = GlobalMemory()
        base = mem.alloc(len(init) * width)
    else:
        mem, base = FlatMemory(64 + len(init) * width), 64
    old, final = run_atomic(mem, base, op, kind, width, init, slots, vals, cmps)
    ref_old, ref_final = ref_atomic(init, op, kind, width, slots, vals, cmps)
    assert old.dtype == UINT[width]
    assert [int(x) for x in old] == ref_old
    assert [int(x) for x in final] == ref_final


@pytest.mark.parametrize("spread", [1, 100_000])
@pytest.mark.parametrize("op", ["add", "min", "xor", "cas", "inc", "dec", "exch", "or"])
def test_atomics_many_conflicts_match_reference(op, spread):
    # Above the radix-sort threshold; spread > 2**16 words takes the two-pass radix sort.
    rng = np.random.default_rng(7)
    n, nslots = 6000, 5
    mem = FlatMemory(4 * nslots * spread)
    init = rng.integers(0, 20, nslots).tolist()
    slots = rng.integers(0, nslots, n)
    vals = rng.integers(0, 20, n).tolist()
    cmps = rng.integers(0, 20, n).tolist()
    mem.store(np.arange(nslots, dtype=np.uint64) * np.uint64(4 * spread), np.array(init, np.uint32), 4)
    old = mem.atomic(op, slots.astype(np.uint64) * np.uint64(4 * spread), np.array(vals, np.uint32), 4,
                     "u", compare=np.array(cmps, np.uint32))
    final = mem.load(np.arange(nslots, dtype=np.uint64) * np.uint64(4 * spread), 4)
    ref_old, ref_final = ref_atomic(init, op, "u", 4, slots.tolist(), vals, cmps)
    assert old.tolist() == ref_old
    assert final.tolist() == ref_final


def test_float_add_is_bit_exact_sequential_sum():
    rng = np.random.default_rng(1)
    n = 20000
    vals = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)).astype(np.float32)
    slots = rng.integers(0, 3, n)
    mem = GlobalMemory()
    a = mem.alloc(12)
    old = mem.atomic("add", np.uint64(a) + 4 * slots.astype(np.uint64), vals, 4, "f").view(np.float32)
    acc = np.zeros(3, np.float32)
    ref = np.empty(n, np.float32)
    for i in range(n):
        ref[i] = acc[slots[i]]
        acc[slots[i]] = np.float32(acc[slots[i]] + vals[i])
    assert old.view(np.uint32).tolist() == ref.view(np.uint32).tolist()
    assert mem.read(a, 12).view(np.float32).tolist() == acc.tolist()


def test_atomic_value_conventions():
    mem = FlatMemory(32)
    mem.atomic("add", np.array([0, 0]), 1.5, 4, "f")  # Python float -> f32 value
    assert mem.load(np.array([0]), 4).view(np.float32)[0] == 3.0
    bits = np.array([np.float32(2.0)]).view(np.uint32)
    mem.atomic("add", np.array([0]), bits, 4, "f")  # uint32 bits reinterpret
    assert mem.load(np.array([0]), 4).view(np.float32)[0] == 5.0
    old = mem.atomic("exch", np.array([8]), 2.5, 8, "f")
    assert old.dtype == np.uint64 and mem.load(np.array([8]), 8).view(np.float64)[0] == 2.5
    mem.atomic("add", np.array([16]), -1, 4, "s")
    assert mem.load(np.array([16]), 4)[0] == 0xFFFFFFFF
    assert mem.atomic("min", np.array([16]), -5, 4, "s").view(np.int32)[0] == -1
    assert mem.load(np.array([16]), 4).view(np.int32)[0] == -5
    with pytest.raises(ValueError):
        mem.atomic("min", np.array([0]), 1.0, 4, "f")
    with pytest.raises(ValueError):
        mem.atomic("cas", np.array([0]), 1, 4, "u")


def test_atomics_are_deterministic():
    rng = np.random.default_rng(3)
    addrs = rng.integers(0, 64, 5000).astype(np.uint64) * np.uint64(4)
    vals = rng.standard_normal(5000).astype(np.float32)
    runs = []
    for _ in range(2):
        mem = FlatMemory(256)
        old = mem.atomic("add", addrs, vals, 4, "f")
        runs.append((old.tobytes(), mem.buf.tobytes()))
    assert runs[0] == runs[1]


# -- loads and stores ----------------------------------------------------------------------


@SETTINGS
@given(st.data(), st.sampled_from([1, 2, 4, 8, 16]), st.booleans())
def test_store_load_round_trip(data, width, use_global):
    nslots = data.draw(st.integers(1, 16))
    slots = data.draw(st.lists(st.integers(0, nslots - 1), min_size=1, max_size=40))
    words = data.draw(st.lists(st.binary(min_size=width, max_size=width), min_size=len(slots),
                               max_size=len(slots)))
    model = bytearray(nslots * width)
    for s, w in zip(slots, words):  # the highest thread wins
        model[s * width:(s + 1) * width] = w
    if use_global:
        mem = GlobalMemory()
        base = mem.alloc(nslots * width)
    else:
        mem, base = FlatMemory(nslots * width + 8), 0
    raw = np.frombuffer(b"".join(words), np.uint8)
    values = raw.view(np.uint64).reshape(-1, 2) if width == 16 else raw.view(UINT[width])
    offs = np.uint64(base) + np.array(slots, np.uint64) * np.uint64(width)
    mem.store(offs, values, width)
    every = np.uint64(base) + np.arange(nslots, dtype=np.uint64) * np.uint64(width)
    got = mem.load(every, width)
    if width == 16:
        assert got.shape == (nslots, 2) and got.dtype == np.uint64
    else:
        assert got.dtype == UINT[width]
    assert got.tobytes() == bytes(model)
    if use_global:
        assert mem.read(base, nslots * width).tobytes() == bytes(model)


def test_store_value_conversions_and_int64_offsets():
    mem = FlatMemory(30)
    assert mem.size == 32
    mem.store(np.array([0, 4], np.int64), np.array([1.0, -2.0], np.float32), 4)
    assert mem.load(np.array([0, 4]), 4).view(np.float32).tolist() == [1.0, -2.0]
    mem.store(np.array([8]), -1, 2)  # integers wrap
    assert mem.load(np.array([8]), 2)[0] == 0xFFFF
    mem.store(np.array([16, 24]), np.uint64(7), 8)  # scalar broadcast
    assert mem.load(np.array([16, 24]), 8).tolist() == [7, 7]
    assert struct.unpack_from("<I", mem.read(0, 4).tobytes())[0] == 0x3F800000


# -- faults ---------------------------------------------------------------------------------


def test_flat_memory_faults():
    mem = FlatMemory(64)
    with pytest.raises(MemoryFault) as e:
        mem.load(np.array([0, 4, 64, 68], np.uint64), 4)
    assert e.value.kind == "out-of-bounds" and e.value.thread == 2 and e.value.address == 64
    assert e.value.addresses.tolist() == [64, 68]
    assert "0x40" in str(e.value) and "4-byte" in str(e.value)
    assert not isinstance(e.value, XccError)
    with pytest.raises(MemoryFault) as e:
        mem.store(np.array([0, 6]), 0, 4)
    assert e.value.kind == "misaligned" and e.value.thread == 1
    with pytest.raises(MemoryFault) as e:
        mem.atomic("add", np.array([-4], np.int64), 1, 4, "u")
    assert e.value.kind == "out-of-bounds"
    with pytest.raises(MemoryFault):
        mem.load(np.array([56]), 16)  # [56, 72) straddles the end
    with pytest.raises(MemoryFault):
        mem.load(np.array([8]), 16)  # misaligned 16-byte access
    assert mem.load(np.array([48]), 16).shape == (1, 2)
    assert mem.load(np.zeros(0, np.uint64), 4).size == 0


def test_global_addresses_alignment_and_gaps():
    mem = GlobalMemory()
    a, b, c = mem.alloc(100), mem.alloc(1), mem.alloc(4096)
    assert a == GLOBAL_BASE and a > 1 << 32
    for x in (a, b, c):
        assert x % 256 == 0
    assert b >= a + 100 + 256 and c >= b + 1 + 256
    assert mem.allocations == [(a, 100), (b, 1), (c, 4096)]
    assert mem.used_bytes == 4197
    assert mem.read(c, 4096).sum() == 0


def test_global_faults():
    mem = GlobalMemory()
    a, b = mem.alloc(64), mem.alloc(64)
    ok = np.uint64(a) + np.arange(16, dtype=np.uint64) * np.uint64(4)
    mem.store(ok, np.arange(16, dtype=np.uint32), 4)
    for bad, kind in [(a + 64, "out-of-bounds"), (a - 4, "out-of-bounds"), (b + 300, "out-of-bounds"),
                      (a + 2, "misaligned"), (a & 0xFFFFFFFF, "out-of-bounds")]:
        addrs = np.array([a, bad, a + 4], np.uint64)
        with pytest.raises(MemoryFault) as e:
            mem.load(addrs, 4)
        assert (e.value.kind, e.value.thread, e.value.address) == (kind, 1, bad)
        assert f"{bad:#x}" in str(e.value)
    c = mem.alloc(60)
    with pytest.raises(MemoryFault) as e:
        mem.load(np.array([c + 56], np.uint64), 8)  # straddles the end
    assert e.value.kind == "out-of-bounds" and "allocation" in str(e.value)
    mem.free(b)
    with pytest.raises(MemoryFault) as e:
        mem.atomic("add", np.array([a, b + 8], np.uint64), 1, 4, "u")
    assert e.value.kind == "freed" and e.value.thread == 1
    assert mem.load(np.array([a + 4], np.uint64), 4)[0] == 1  # nothing applied by the faulting atomic
    with pytest.raises(MemoryFault) as e:
        mem.free(b)
    assert e.value.kind == "double-free"
    with pytest.raises(MemoryFault) as e:
        mem.free(a + 4)
    assert e.value.kind == "invalid-free"


def test_global_host_copies_are_bounds_checked():
    mem = GlobalMemory()
    a = mem.alloc(16)
    mem.write(a, b"\x01" * 16)
    mem.write(a + 8, np.array([2, 3], np.uint32))
    assert mem.read(a, 16).tolist() == [1] * 8 + [2, 0, 0, 0, 3, 0, 0, 0]
    mem.memset(a, 0xAB, 4)
    assert mem.read(a, 4).tolist() == [0xAB] * 4
    for call in (lambda: mem.write(a + 8, b"x" * 9), lambda: mem.read(a, 17),
                 lambda: mem.memset(a - 1, 0, 1), lambda: mem.read(a + 4096, 1)):
        with pytest.raises(MemoryFault):
            call()


def test_global_memory_reuses_freed_space_zeroed():
    mem = GlobalMemory()
    big = 3 << 20
    a = mem.alloc(big)
    mem.memset(a, 0xFF, big)
    mem.free(a)
    b = mem.alloc(big)  # would need growth: reuses a's range, zeroed
    assert b == a and mem.read(b, big).max() == 0
    c = mem.alloc(16)
    assert c >= b + big + 256
