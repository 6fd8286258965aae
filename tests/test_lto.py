"""Separate compilation and LTO: the IR's serialised form (xcc.ir.serialize), the .xo relocatable object,
`xcc compile -c` / `xcc link` and rt.load_module of .xo files (xcc.lto), on the -rdc example pair.

The -rdc program (examples/rdc_main.cu calls rdc_transform and reads rdc_bias from examples/rdc_lib.cu)
compiled file by file with -c and linked must run bit for bit like the single-module build of both PTX
files, with no CALL left after LTO (the library function is inlined across the files).
"""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import numpy as np
import pytest
from corpus import ALL_PTX, SUPPORTED

from xcc import runtime as rt
from xcc.backend.codegen import disassemble_kernel
from xcc.cli import main
from xcc.diagnostics import LinkError, ObjectFormatError, XccError
from xcc.driver import CompileOptions, Source, compile_ir, compile_module, frontend, read_source
from xcc.ir.printer import print_module
from xcc.ir.serialize import dump_module, load_module_ir
from xcc.lto import XO_MAGIC, RelocatableObject, compile_relocatable, link, link_program

EX = Path(__file__).resolve().parent.parent / "examples"
MAIN, LIB = EX / "rdc_main.sm_80.ptx", EX / "rdc_lib.sm_80.ptx"
OPTS = CompileOptions()


def _modules(paths):
    """(path, module) for each of ``paths`` the frontend builds on its own (not the -rdc halves)."""
    out = []
    for p in paths:
        try:
            out.append((p, frontend([read_source(str(p))])))
        except XccError:  # the -rdc halves alone (an unresolved extern)
            continue
    return out


def _xo(*paths, options=OPTS) -> bytes:
    return compile_relocatable([read_source(str(p)) for p in paths], options).to_bytes()


# --------------------------------------------------------------------------- the IR's serialised form


def _check_round_trip(paths):
    for p, m in _modules(paths):
        data = dump_module(m)
        back = load_module_ir(data, str(p))
        assert print_module(back, with_lines=True) == print_module(m, with_lines=True), p
        assert dump_module(back) == data, p  # deterministic, and nothing lost on the way


def test_round_trip_prints_the_same_ir():
    _check_round_trip([p for p in ALL_PTX if p.name.startswith(("device_functions", "spmv_csr", "fnptr_struct",
                                                                  "globals_misc", "gemm_tensorcore.sm_90"))])


@pytest.mark.slow
def test_round_trip_every_example_prints_the_same_ir():
    _check_round_trip(ALL_PTX)


@pytest.mark.parametrize("name", ["saxpy.sm_80.ptx", "device_functions.sm_80.ptx", "scan_sort.sm_80.debug.ptx",
                                  "fnptr_struct.sm_80.ptx", "gemm_tensorcore.sm_80.ptx"])
def test_round_trip_compiles_to_the_same_binary(name):
    src = read_source(str(EX / name))
    want = compile_module([src]).to_bytes()
    assert compile_ir(load_module_ir(dump_module(frontend([src])), name), source_name=src.name).to_bytes() == want


@pytest.mark.slow
@pytest.mark.parametrize("path", SUPPORTED, ids=lambda p: p.name)
def test_round_trip_compiles_to_the_same_binary_everywhere(path):
    src = read_source(str(path))
    want = compile_module([src]).to_bytes()
    assert compile_ir(load_module_ir(dump_module(frontend([src])), path.name), source_name=src.name).to_bytes() == want


def _doc() -> dict:
    return json.loads(dump_module(frontend([read_source(str(EX / "device_functions.sm_80.ptx"))])))


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(version=99), "unsupported IR version 99"),
    (lambda d: d.update(format="other"), "not an xcc IR document"),
    (lambda d: d["functions"][0].pop("blocks"), r"malformed IR document at functions\[0\]"),
    (lambda d: d["functions"][-1]["blocks"][1]["insts"][0].__setitem__(1, "u33"), r"functions\[5\]\.blocks\[1\]"),
    (lambda d: d["functions"][0]["blocks"][0]["insts"].pop(), "does not verify"),
    (lambda d: d["functions"][0].update(blocks=[]), "function '.*' has no blocks"),
    (lambda d: d["functions"][-1]["blocks"][1]["insts"][0][2].append(10 ** 6), "malformed IR document"),
])
def test_damaged_ir_is_a_located_error(damage, message):
    doc = _doc()
    damage(doc)
    with pytest.raises(ObjectFormatError, match=message):
        load_module_ir(json.dumps(doc).encode(), "f.ir")


def test_bad_json_names_line_and_column():
    with pytest.raises(ObjectFormatError, match="malformed IR document") as e:
        load_module_ir(b'{"format": "xcc-ir",\n "version": 1,, }', "f.ir")
    assert (e.value.loc.file, e.value.loc.line) == ("f.ir", 2)


def test_random_structural_damage_is_an_error_or_still_verifies():
    doc = json.loads(dump_module(frontend([read_source(str(EX / "device_functions.sm_80.ptx"))])))
    leaves = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + [k])
        elif isinstance(x, list) and x:
            for k, v in enumerate(x):
                walk(v, path + [k])
        else:
            leaves.append(path)

    walk(doc, [])
    rng = random.Random(11)
    for _ in range(200):
        d = json.loads(json.dumps(doc))
        path = rng.choice(leaves)
        target = d
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = rng.choice([0, -1, 3, 10 ** 9, "x", "b32", None, [], {}, True, [0], {"list": 1}])
        try:
            load_module_ir(json.dumps(d).encode(), "fuzz.ir")
        except ObjectFormatError:
            pass


def test_deep_nesting_is_an_error():
    with pytest.raises(ObjectFormatError, match="nested too deeply"):
        load_module_ir(b"[" * 100000 + b"]" * 100000, "deep.ir")


def test_random_damage_never_escapes_as_another_exception():
    data = dump_module(frontend([read_source(str(EX / "saxpy.sm_80.ptx"))]))
    rng = random.Random(7)
    for _ in range(300):
        b = bytearray(data)
        k = rng.randrange(len(b))
        if rng.random() < 0.3:
            b = b[:k]
        else:
            b[k] = rng.choice(b'0123456789[]{},":ab-')
        try:
            load_module_ir(bytes(b), "fuzz.ir")
        except ObjectFormatError:
            pass


# --------------------------------------------------------------------------- the .xo container


def test_xo_round_trip_and_header():
    xo = _xo(MAIN, LIB)
    assert xo[:4] == XO_MAGIC
    obj = RelocatableObject.from_bytes(xo, "both.xo")
    assert obj.inputs == [str(MAIN), str(LIB)] and obj.options["opt_level"] == 3 and obj.options["arch"] == "xg1"
    assert obj.to_bytes() == RelocatableObject.from_bytes(obj.to_bytes(), "again.xo").to_bytes()
    assert _xo(MAIN) == _xo(MAIN)  # deterministic


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:20], "truncated relocatable object"),
    (lambda b: b"XBIZ" + b[4:], "not an xcc relocatable object"),
    (lambda b: b[:4] + (7).to_bytes(2, "little") + b[6:], "unsupported relocatable object version 7.0"),
    (lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], "checksum mismatch"),
])
def test_damaged_xo_is_an_error(damage, message):
    with pytest.raises(ObjectFormatError, match=message):
        RelocatableObject.from_bytes(damage(_xo(MAIN)), "main.xo")


def test_xo_with_bad_payload_is_an_error():
    import hashlib
    import struct

    xo = _xo(MAIN)
    magic, major, minor, hlen, plen = struct.unpack_from("<4sHHQQ", xo)
    header = xo[24:24 + hlen]
    for payload, message in ((b"not zlib", "malformed relocatable object header"),
                             (zlib.compress(b'{"format": "xcc-ir", "version": 2}'), "unsupported IR version 2")):
        body = struct.pack("<4sHHQQ", magic, major, minor, hlen, len(payload)) + header + payload
        with pytest.raises(ObjectFormatError, match=message):
            RelocatableObject.from_bytes(body + hashlib.sha256(body).digest(), "x.xo")


# --------------------------------------------------------------------------- -c and link


def _run_rdc(image_or_module) -> list[np.ndarray]:
    """rdc_set_bias(1.25), then rdc_apply and the library's kernel, on one device; their outputs."""
    mod = image_or_module
    rng = np.random.default_rng(3)
    n = 300
    x, w = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    dev = mod.device
    mod.get_function("rdc_set_bias").launch((1, 1, 1), (1, 1, 1), [np.float32(1.25)])
    dx, dw, dy, dz = (rt.to_device(a, dev) for a in (x, w, np.zeros(n, np.float32), np.zeros(n, np.float32)))
    mod.get_function("rdc_apply").launch((3, 1, 1), (128, 1, 1), [np.int32(n), dx, dw, dy])
    mod.get_function("_Z14rdc_lib_kerneliPKfPf").launch((3, 1, 1), (128, 1, 1), [np.int32(n), dx, dz])
    return [dy.copy_to_host(), dz.copy_to_host()]


def _single_module_outputs():
    return _run_rdc(rt.load_module([str(MAIN), str(LIB)], device=rt.Device()))


def test_separately_compiled_rdc_runs_like_the_single_module_build():
    want = _single_module_outputs()
    obj = link([_xo(MAIN), _xo(LIB)], OPTS)
    for name, k in obj.kernels.items():
        assert "CALL" not in disassemble_kernel(k), name  # rdc_transform inlined across the files
    got = _run_rdc(rt.load_module(obj.to_bytes(), device=rt.Device()))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32))
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32)
    assert np.allclose(got[1], 2 * x + 1.25)


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_load_module_links_xo_and_ptx_mixed(engine, tmp_path):
    want = _single_module_outputs()
    main_xo = tmp_path / "main.xo"
    main_xo.write_bytes(_xo(MAIN))
    for items in ([str(main_xo), str(LIB)], [_xo(LIB), main_xo]):
        got = _run_rdc(rt.load_module(items, device=rt.Device(), engine=engine))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32))


def test_link_time_optimisation_removes_the_library_function():
    module = link_program([_xo(MAIN), _xo(LIB)], OPTS)
    assert sorted(f.name for f in module.functions) == ["_Z14rdc_lib_kerneliPKfPf", "rdc_apply", "rdc_set_bias"]
    assert [v.name for v in module.variables] == ["rdc_bias"]
    assert not any(i.op == "call" for f in module.functions for i in f.instructions())
    # without LTO's inliner (-O0) the call stays, and links all the same
    o0 = link_program([_xo(MAIN), _xo(LIB)], CompileOptions(opt_level=0))
    assert any(i.op == "call" for i in o0.function("rdc_apply").instructions())


def test_relocatable_keeps_the_visible_library_function():
    obj = RelocatableObject.from_bytes(_xo(LIB), "lib.xo")
    assert "_Z13rdc_transformff" in {f.name for f in obj.module.functions}
    main = RelocatableObject.from_bytes(_xo(MAIN), "main.xo")
    assert "_Z13rdc_transformff" in main.module.declarations  # unresolved until the link
    assert any(v.name == "rdc_bias" and v.extern for v in main.module.variables)


def test_link_errors_name_the_symbol_and_the_object(tmp_path):
    (tmp_path / "main.xo").write_bytes(_xo(MAIN))
    with pytest.raises(LinkError, match=r"unresolved extern function '_Z13rdc_transformff': used in .*main\.xo") as e:
        link_program([tmp_path / "main.xo"], OPTS)
    assert e.value.loc is not None and e.value.loc.file.endswith("rdc_main.sm_80.ptx")
    image = compile_module([read_source(str(EX / "saxpy.sm_80.ptx"))]).to_bytes()
    with pytest.raises(LinkError, match="an .xbin image holds machine code"):
        link_program([_xo(MAIN), image], OPTS)
    other = RelocatableObject.from_bytes(_xo(LIB), "lib.xo")
    other.options["arch"] = "xg2"
    with pytest.raises(LinkError, match="compiled for 'xg2'"):
        link_program([_xo(MAIN), other], OPTS)
    with pytest.raises(LinkError, match="duplicate"):
        link_program([_xo(MAIN), _xo(LIB), Source(LIB.read_text(), "lib_again.ptx")], OPTS)


def test_cli_compile_c_and_link(tmp_path, capsys):
    main_xo, lib_xo, out = tmp_path / "main.xo", tmp_path / "lib.xo", tmp_path / "prog.xbin"
    assert main(["compile", "-c", str(MAIN), "-o", str(main_xo)]) == 0
    assert main(["compile", "-c", "-O2", str(LIB), "-o", str(lib_xo)]) == 0
    assert main(["link", str(main_xo), str(lib_xo), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["disasm", str(out)]) == 0
    text = capsys.readouterr().out
    assert "CALL" not in text and "// kernel rdc_apply" in text
    assert main(["link", str(main_xo), "-o", str(tmp_path / "x.xbin")]) == 1
    assert "unresolved extern function '_Z13rdc_transformff'" in capsys.readouterr().err
    (tmp_path / "bad.xo").write_bytes(main_xo.read_bytes()[:-5])
    assert main(["link", str(tmp_path / "bad.xo"), str(lib_xo), "-o", str(tmp_path / "y.xbin")]) == 1
    assert "bad.xo: checksum mismatch" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["apply_fnptr", "lut_device_global", "dyn_smem_reverse", "poly_constant"])
def test_one_file_through_c_and_link_runs_like_its_ptx(name):
    # function pointers (addresses given at the link), module .global tables, .const, dynamic shared memory
    from kernel_cases import CASES_BY_NAME, ptx_path

    case = CASES_BY_NAME[name]
    path = ptx_path(case, case.default_arch)
    outs = []
    for src in ([str(path)], [_xo(path)]):
        launch = case.make(np.random.default_rng(0))
        dev = rt.Device()
        args = [rt.to_device(a, dev) if isinstance(a, np.ndarray) else a for a in launch.args]
        rt.load_module(src, device=dev).get_function(case.entry).launch(launch.grid, launch.block, args,
                                                                         case.shared_mem)
        outs.append([args[i].copy_to_host() for i in launch.outputs])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
