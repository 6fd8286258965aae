"""Register spilling to local memory (backend/spill.py): every corpus kernel compiled under a low
register limit still matches numpy bit for bit on the ISA interpreter, the checker follows values
through spill slots, spills are reported as ptxas reports them, and nothing changes below the limit.

For comparison, ptxas 13.0 (sm_80) raises ``--maxrregcount 16`` (or 8) to its ABI floor of 24
("adjusting per thread register count of 8 to lower bound of 24"); at 24 it does not need to spill
examples/gemm_simt.sm_80.ptx's gemm_tiled_f32 (24 registers) but does spill conv2d_nchw
(40 bytes stack frame, 44 bytes spill stores, 48 bytes spill loads) and attention_row (24, 48, 52),
and at 32 it spills every tile_gemm of bench/data/large_unrolled.sm_80.ptx (tile_gemm<4,4,8>:
1088 bytes stack frame, 1652 bytes spill stores, 2820 bytes spill loads).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.codegen import BackendOptions, compile_function, eliminate_dead_code
from xcc.backend.convergence import insert_convergence_barriers
from xcc.backend.isa import NUM_SCOREBOARDS, PT, RZ, SR_INDEX
from xcc.backend.isel import InstructionSelector, MBlock
from xcc.backend.machine import load_machine
from xcc.backend.minst import Imm, mi, new_vreg
from xcc.backend.objfile import ObjectFile
from xcc.backend.pred_spill import spill_predicates
from xcc.backend.regalloc import check_allocation, check_values
from xcc.backend.spill import MIN_REGISTERS, allocate_with_spilling
from xcc.cli import main
from xcc.diagnostics import XccError
from xcc.driver import CompileOptions, Source, compile_module, frontend, optimise, read_source

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES, CASES_BY_NAME, case_params, ptx_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LARGE = ROOT / "bench" / "data" / "large_unrolled.sm_80.ptx"
TILE_8X8 = "_Z9tile_gemmILi8ELi8ELi8EEvPKfS1_Pfiii"
LOW = MIN_REGISTERS
ISA_CASES = [c for c in CASES if "isa" in c.engines]
# gemm (shared memory, barriers), conv2d (nested loops), dnorm_i64 (64-bit pairs), softmax (loops, SFU)
FAST = ("gemm_tiled_f32", "conv2d_nchw", "dnorm_i64", "softmax_rows")


@pytest.fixture(autouse=True)
def _strict_hazards(monkeypatch):
    """Launches check every register read against the control codes (reloads are variable-latency)."""
    monkeypatch.setenv("XCC_STRICT_HAZARDS", "1")


def _run_case(case, arch: str, opt_level: int, max_registers: int, seed: int = 0):
    device = rt.Device()
    launch = case.make(np.random.default_rng(seed))
    mod = rt.load_module(ptx_path(case, arch), opt_level=opt_level, device=device, max_registers=max_registers)
    fn = mod.get_function(case.entry)
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    fn.launch(launch.grid, launch.block, args, case.shared_mem)
    for i, want in launch.expected.items():
        got = args[i].copy_to_host()
        if case.rtol or case.atol:
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=f"{case.name} arg {i}")
        else:
            np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8),
                                          err_msg=f"{case.name} arg {i} differs bit for bit")


def _image(path, entry: str, max_registers: int = 255, opt_level: int = 3):
    obj = compile_module([read_source(path)], CompileOptions(opt_level=opt_level, max_registers=max_registers),
                         [entry])
    return obj.kernels[entry], obj


@pytest.mark.parametrize("case", case_params([c for c in ISA_CASES if c.name in FAST], "default"))
def test_spilled_kernel_matches_numpy(case):
    k, _ = _image(ptx_path(case, case.default_arch), case.entry, LOW)
    assert k.registers <= LOW
    assert k.spill_stores > 0 and k.spill_loads > 0 and k.spill_bytes > 0, "the fast subset must really spill"
    assert k.local_bytes >= k.spill_bytes
    _run_case(case, case.default_arch, 3, LOW)


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", case_params(ISA_CASES, "default"))
def test_every_corpus_kernel_at_the_lowest_limit(case, opt_level):
    _run_case(case, case.default_arch, opt_level, LOW)


@pytest.fixture(scope="module")
def tile_images():
    spilled, obj = _image(LARGE, TILE_8X8, LOW)
    plain, _ = _image(LARGE, TILE_8X8)
    return spilled, plain, obj


def _tile_gemm(kernel, a, b, m, n, k):
    device = rt.Device()
    mod = rt.load_module(ObjectFile({kernel.name: kernel}).to_bytes(), device=device)
    d_a, d_b = rt.to_device(a, device), rt.to_device(b, device)
    d_c = rt.to_device(np.full(m * n, -1.0, np.float32), device)
    mod.get_function(kernel.name).launch((n // 32, m // 32, 1), (4, 4, 1),
                                         (d_a, d_b, d_c, np.int32(m), np.int32(n), np.int32(k)))
    return d_c.copy_to_host()


def test_register_heavy_kernel_spills_and_runs(tile_images):
    """tile_gemm<8,8,8> keeps a 64-float accumulator tile live through its loop: at the lowest limit
    most of it lives in local memory, and the result is bit for bit the unspilled kernel's."""
    spilled, plain, _ = tile_images
    assert plain.registers > 64 and plain.spill_stores == plain.spill_loads == plain.spill_bytes == 0
    assert spilled.registers <= LOW
    assert spilled.spill_bytes >= 4 * 48 and spilled.spill_stores > 0 and spilled.spill_loads > 0
    assert spilled.local_bytes == spilled.spill_bytes  # no .local variables of its own
    m = n = 32
    k = 16
    rng = np.random.default_rng(3)
    a = rng.standard_normal(m * k).astype(np.float32)
    b = rng.standard_normal(k * n).astype(np.float32)
    got = _tile_gemm(spilled, a, b, m, n, k)
    np.testing.assert_array_equal(got.view(np.uint32), _tile_gemm(plain, a, b, m, n, k).view(np.uint32))
    np.testing.assert_allclose(got, (a.reshape(m, k) @ b.reshape(k, n)).ravel(), rtol=1e-5, atol=1e-5)


def test_spill_metadata_survives_the_object_file(tile_images):
    spilled, _, obj = tile_images
    again = ObjectFile.from_bytes(obj.to_bytes()).kernels[TILE_8X8]
    assert (again.spill_bytes, again.spill_stores, again.spill_loads, again.local_bytes) == \
        (spilled.spill_bytes, spilled.spill_stores, spilled.spill_loads, spilled.local_bytes)


def test_images_without_spills_carry_no_spill_keys():
    obj = compile_module([read_source(ROOT / "examples" / "saxpy.sm_80.ptx")])
    data = obj.to_bytes()
    assert b"spill_stores" not in data and b"spill_loads" not in data
    assert ObjectFile.from_bytes(data).kernels["saxpy"].spill_stores == 0


def test_verbose_reports_spills_like_ptxas(capsys, tmp_path, tile_images):
    spilled, _, _ = tile_images
    rc = main(["compile", "-v", f"--maxrregcount={LOW}", "-o", str(tmp_path / "o.xbin"), str(LARGE)])
    _, err = capsys.readouterr()
    assert rc == 0
    lines = err.splitlines()
    at = lines.index(f"xcc info    : Function properties for {TILE_8X8}")
    frame = re.fullmatch(r"    (\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                         lines[at + 1])
    assert frame, lines[at + 1]
    assert tuple(map(int, frame.groups())) == (spilled.local_bytes, spilled.spill_stores, spilled.spill_loads)
    used = next(line for line in lines[at:] if line.startswith("xcc info    : Used "))
    assert int(used.split()[4]) <= LOW
    obj = ObjectFile.from_bytes((tmp_path / "o.xbin").read_bytes())
    assert all(k.registers <= LOW for k in obj.kernels.values())


def test_low_limits_are_raised_to_the_floor(capsys, tmp_path):
    assert CompileOptions(max_registers=8).max_registers == LOW
    with pytest.raises(XccError, match="between 1 and 255"):
        CompileOptions(max_registers=0)
    rc = main(["compile", "--maxrregcount=8", "-o", str(tmp_path / "o.xbin"),
               str(ROOT / "examples" / "saxpy.sm_80.ptx")])
    assert rc == 0
    assert f"adjusting per thread register count of 8 to lower bound of {LOW}" in capsys.readouterr().err


def test_maxnreg_directive_spills_and_is_floored():
    text = (ROOT / "examples" / "gemm_simt.sm_80.ptx").read_text()
    entry = "_Z14gemm_tiled_f32iiiPKfS0_Pf"
    text = re.sub(rf"(\.entry {entry}\([^)]*\))", r"\1 .maxnreg 4", text, count=1)
    assert ".maxnreg 4" in text
    k = compile_module([Source(text, "gemm_maxnreg.ptx")], kernels=[entry]).kernels[entry]
    assert k.registers <= LOW and k.spill_stores > 0
    case = next(c for c in ISA_CASES if c.name == "gemm_tiled_f32")
    launch = case.make(np.random.default_rng(0))
    mod = rt.load_module(text)
    args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
    mod.get_function(entry).launch(launch.grid, launch.block, args)
    for i, want in launch.expected.items():
        np.testing.assert_array_equal(args[i].copy_to_host(), want)


@pytest.mark.parametrize("path,entry", [
    ("examples/gemm_simt.sm_80.ptx", "_Z14gemm_tiled_f32iiiPKfS0_Pf"),
    ("examples/collatz_steps.sm_80.ptx", "_Z13collatz_stepsiPKjPj"),
    ("examples/math_f64.sm_80.ptx", "_Z9dnorm_i64xPKdPd"),
    ("examples/transformer_ops.sm_80.ptx", "_Z13attention_rowiifPKfS0_S0_Pf"),
])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_no_change_below_the_limit(path, entry, opt_level):
    """With exactly the registers a kernel needs, the image is byte for byte the unlimited one."""
    k, obj = _image(ROOT / path, entry, 255, opt_level)
    tight, tight_obj = _image(ROOT / path, entry, max(k.registers, LOW), opt_level)
    assert tight_obj.to_bytes() == obj.to_bytes()
    assert k.spill_bytes == k.spill_stores == k.spill_loads == 0


def test_reloads_are_scoreboarded(tile_images):
    """Each reload sets a scoreboard, and the first instruction of its block that reads the reloaded
    register waits on it (the strict hazard mode checks the same at run time)."""
    spilled, _, _ = tile_images
    insts = spilled.instructions
    loads = 0
    for i, m in enumerate(insts):
        if not m.mnemonic.startswith("LDL"):
            continue
        loads += 1
        assert m.ctrl.wsb < NUM_SCOREBOARDS
        regs = {m.ops["d"], m.ops["d"] + 1} if m.mnemonic == "LDL.64" else {m.ops["d"]}
        for r in insts[i + 1:]:
            if r.mnemonic in ("BRA", "EXIT", "BSYNC"):
                break
            if regs & {v for k2, v in r.ops.items() if k2 in ("a", "b", "c", "e") and isinstance(v, int)}:
                assert r.ctrl.wait >> m.ctrl.wsb & 1 or any(
                    x.ctrl.wait >> m.ctrl.wsb & 1 for x in insts[i + 1:insts.index(r)]), r
                break
    assert loads > 0


# ------------------------------------------------------------------------------- the checker
def _allocated(max_registers: int = LOW):
    module = frontend([read_source(ROOT / "examples" / "gemm_simt.sm_80.ptx")])
    module.functions = [f for f in module.functions if f.name == "_Z14gemm_tiled_f32iiiPKfS0_Pf"]
    optimise(module, CompileOptions(opt_level=3))
    fn = module.functions[0]
    sel = InstructionSelector(fn).select()
    blocks = sel.blocks
    insert_convergence_barriers(blocks)
    eliminate_dead_code(blocks)
    preds = spill_predicates(blocks, fn.name)
    assign, used, spills = allocate_with_spilling(blocks, max_registers, fn.name, 0, preds.origin)
    return blocks, assign, used, spills


def test_checker_accepts_the_spill_code():
    blocks, assign, used, spills = _allocated()
    assert used <= LOW and spills.slots and spills.accesses
    check_allocation(blocks, assign, spills.origin, spills.accesses)


def _entry_slots(blocks, spills) -> dict[int, object]:
    """Offset -> value of the 32-bit slots stored in the entry block (written on every path)."""
    return {spills.accesses[m]: m.ops["c"] for m in blocks[0].insts
            if m in spills.accesses and m.mnemonic == "STL" and m.ops["c"].width == 1}


def test_checker_rejects_a_reload_from_the_wrong_slot():
    blocks, assign, _, spills = _allocated()
    entry = _entry_slots(blocks, spills)
    assert entry
    caught = 0
    for b in blocks[1:]:
        for i, m in enumerate(b.insts):
            if m not in spills.accesses or m.mnemonic != "LDL" or b.insts[i + 1] in spills.accesses:
                continue  # a reload read by a real instruction
            own = spills.accesses[m]
            for off in (o for o in entry if o != own):
                m.ops["b"] = spills.accesses[m] = off
                with pytest.raises(AssertionError, match="reads"):
                    check_values(blocks, assign, spills.origin, spills.accesses)
                caught += 1
            m.ops["b"] = spills.accesses[m] = own
    assert caught > 0
    check_values(blocks, assign, spills.origin, spills.accesses)


def test_checker_rejects_a_store_that_clobbers_another_slot():
    """A spill store into the slot of a value that is reloaded later (two values sharing a slot
    while both live) is caught at the reload's use."""
    blocks, assign, _, spills = _allocated()
    stores = [m for b in blocks for m in b.insts if m in spills.accesses and m.mnemonic == "STL"]
    bad = None
    for st in stores:
        for v, off in spills.slots.items():
            if v.width == 1 and off != spills.accesses[st]:
                saved = (st.ops["b"], spills.accesses[st])
                st.ops["b"] = spills.accesses[st] = off
                try:
                    check_values(blocks, assign, spills.origin, spills.accesses)
                except AssertionError as e:
                    bad = e
                st.ops["b"], spills.accesses[st] = saved
            if bad:
                break
        if bad:
            break
    assert bad is not None and "reads" in str(bad)


def test_checker_rejects_a_reload_into_a_register_of_a_live_value():
    blocks, assign, _, spills = _allocated()
    reload = next(m for b in blocks for m in b.insts if m in spills.accesses and m.mnemonic == "LDL")
    t = reload.ops["d"]
    live = next(v for v in assign if v.width == 1 and v not in spills.origin and assign[v] != assign[t])
    with pytest.raises(AssertionError):
        check_allocation(blocks, {**assign, t: assign[live]}, spills.origin, spills.accesses)


def test_compile_function_reports_spills():
    module = frontend([read_source(LARGE)])
    module.functions = [f for f in module.functions if f.name == TILE_8X8]
    optimise(module, CompileOptions(opt_level=3))
    report: dict = {}
    k = compile_function(module.functions[0], load_machine("xg1"), BackendOptions(max_registers=LOW), report=report)
    spills = report["spills"]
    assert spills.count > 0 and spills.rounds >= 1
    assert (k.spill_bytes, k.spill_stores, k.spill_loads) == (spills.frame_bytes, spills.store_bytes,
                                                              spills.load_bytes)


# ------------------------------------------------------- predicates and registers spilled together
NPRED, NVAL, ITERS = 12, 20, 4


def _pressure_ptx() -> str:
    """Twelve predicates (bits of x) and twenty values (x*k + k) live across a loop whose body reads
    them all, under a guard, a select and a branch: predicates spill to registers (P2R/ISETP), and
    registers, those included, to local memory."""
    setps = "\n".join(f"  and.b32 %r{10 + k}, %r6, {1 << k};\n  setp.ne.u32 %p{k}, %r{10 + k}, 0;"
                      for k in range(NPRED))
    vals = "\n".join(f"  mad.lo.u32 %r{100 + k}, %r6, {k + 3}, {k};" for k in range(NVAL))
    body = "\n".join(f"  selp.b32 %r40, %r{100 + k}, {k}, %p{k};\n  mad.lo.u32 %r30, %r30, 3, %r40;"
                     for k in range(NPRED))
    tail = "\n".join(f"  xor.b32 %r30, %r30, %r{100 + k};" for k in range(NPRED, NVAL))
    return f"""
.version 8.0
.target sm_80
.address_size 64

.visible .entry pressure(.param .u64 pin, .param .u64 pout, .param .u32 iters)
{{
  .reg .pred %p<16>;
  .reg .b32 %r<128>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r1, [iters];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mad.lo.s32 %r5, %r3, %r4, %r2;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r6, [%rd4];
{setps}
{vals}
  mov.u32 %r30, 0;
  mov.u32 %r31, 0;
LOOP:
{body}
  xor.pred %p5, %p5, %p0;
  @%p2 add.u32 %r30, %r30, %r{100 + NVAL - 1};
  @!%p11 bra SKIP;
  add.u32 %r30, %r30, %r{100 + NPRED};
SKIP:
  add.u32 %r31, %r31, 1;
  setp.lt.u32 %p13, %r31, %r1;
  @%p13 bra LOOP;
{tail}
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r30;
  ret;
}}
"""


def _pressure_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    m = 0xFFFFFFFF
    for j, v in enumerate(x.tolist()):
        p = [(v >> k) & 1 == 1 for k in range(NPRED)]
        r = [(v * (k + 3) + k) & m for k in range(NVAL)]
        acc = 0
        for _ in range(ITERS):
            for k in range(NPRED):
                acc = (acc * 3 + (r[k] if p[k] else k)) & m
            p[5] ^= p[0]
            if p[2]:
                acc = (acc + r[NVAL - 1]) & m
            if p[11]:
                acc = (acc + r[NPRED]) & m
        for k in range(NPRED, NVAL):
            acc ^= r[k]
        out[j] = acc
    return out


@pytest.mark.parametrize("opt_level", [0, 3])
def test_predicates_and_registers_spilled_together(opt_level):
    src = _pressure_ptx()
    module = frontend([Source(src, "pressure.ptx")])
    optimise(module, CompileOptions(opt_level=opt_level))
    report: dict = {}
    k = compile_function(module.functions[0], load_machine("xg1"), BackendOptions(max_registers=LOW),
                         report=report)
    preds, spills = report["pred_spills"], report["spills"]
    assert preds.count > 0 and k.registers <= LOW and k.spill_stores > 0
    assert set(preds.slots.values()) & set(spills.slots), "a predicate's spill register went to memory"
    x = np.random.default_rng(7).integers(0, 1 << 32, 256, dtype=np.uint32)
    x[:4] = [0, 0xFFF, 0x555, 0xAAA]
    d_in, d_out = rt.to_device(x), rt.to_device(np.zeros_like(x))
    mod = rt.load_module(src, opt_level=opt_level, max_registers=LOW)
    mod.get_function("pressure").launch((2, 1, 1), (128, 1, 1), (d_in, d_out, np.uint32(ITERS)))
    np.testing.assert_array_equal(d_out.copy_to_host(), _pressure_reference(x))


def test_guarded_definitions_reload_first():
    """The backend emits no guarded definition of a general register today, but the spiller must
    handle one: where the guard is false the old value survives, so the slot is reloaded into the
    temporary before the guarded instruction writes it, and stored after."""
    tid, p = new_vreg(1), new_vreg(0)
    vals = [new_vreg(1) for _ in range(24)]
    pair = new_vreg(2)
    insts = [mi("S2R", d=tid, b=SR_INDEX["SR_TID.X"]),
             mi("ISETP", pd=p, a=tid, b=Imm(3), ps=(PT, False), mods={"cmp": "LT"})]
    insts += [mi("IADD3", d=v, a=tid, b=Imm(k), c=RZ) for k, v in enumerate(vals)]
    insts += [mi("IMAD.WIDE", d=pair, a=tid, b=Imm(4), c=RZ)]
    insts += [mi("IADD3", guard=(p, False), d=v, a=v, b=Imm(1), c=RZ) for v in vals]
    acc = vals[0]
    for v in vals[1:]:
        nxt = new_vreg(1)
        insts.append(mi("IADD3", d=nxt, a=acc, b=v, c=RZ))
        acc = nxt
    insts += [mi("STG", a=pair, b=0, c=acc), mi("EXIT")]
    blocks = [MBlock("entry", insts, [])]
    assign, used, spills = allocate_with_spilling(blocks, LOW, "guarded", 0)
    assert used <= LOW and spills.slots
    check_allocation(blocks, assign, spills.origin, spills.accesses)
    code = blocks[0].insts
    guarded = [i for i, m in enumerate(code) if m.guard is not None and m.mnemonic == "IADD3"
               and m.ops["d"] in spills.temps]
    assert guarded, "some guarded definition was spilled"
    for i in guarded:
        t = code[i].ops["d"]
        assert code[i + 1].mnemonic == "STL" and code[i + 1].ops["c"] is t
        reload = [m for m in code[:i] if m.mnemonic == "LDL" and m.ops["d"] is t]
        assert reload and spills.accesses[reload[0]] == spills.accesses[code[i + 1]]


def test_launch_bounds_cap_registers_so_the_blocks_fit(tmp_path):
    """__launch_bounds__(256, N) (.maxntid 256 / .minnctapersm N) caps the registers so that N CTAs of 256
    threads would fit in one SM's registers, as ptxas does; the kernel spills to get there and stays
    bit-exact."""
    from xcc.backend.machine import load_machine
    from xcc.backend.occupancy import launch_bounds_register_limit, occupancy

    machine = load_machine("xg1")
    assert launch_bounds_register_limit(256, 2, machine) == 128
    assert launch_bounds_register_limit(256, 8, machine) == 32
    assert launch_bounds_register_limit(1024, 2, machine) == 32
    case = CASES_BY_NAME["gemm_tiled_alpha_beta"]
    text = ptx_path(case, "sm_80").read_text()
    assert ".minnctapersm 2" in text
    loose = compile_module([Source(text, "ab.ptx")], CompileOptions()).kernels[case.entry]
    assert launch_bounds_register_limit(256, 16, machine) == 16
    tight_text = text.replace(".minnctapersm 2", ".minnctapersm 16")
    tight = compile_module([Source(tight_text, "ab16.ptx")], CompileOptions()).kernels[case.entry]
    assert loose.registers > 16 >= tight.registers and tight.spill_stores > 0
    assert occupancy(loose, machine, 256).limiter == "warps"  # 16 blocks of 256 cannot fit: 8 are the warp limit
    assert occupancy(tight, machine, 256).ctas_per_sm == 8
    device = rt.Device()
    launch = case.make(np.random.default_rng(0))
    fn = rt.load_module(tight_text, device=device).get_function(case.entry)
    assert fn.num_regs == tight.registers
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    fn.launch(launch.grid, launch.block, args, case.shared_mem)
    for i, want in launch.expected.items():
        np.testing.assert_array_equal(args[i].copy_to_host().view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
