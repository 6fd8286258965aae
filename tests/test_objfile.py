"""The .xbin container: round trips, determinism, and rejection of every kind of damage
with an :class:`ObjectFormatError` that says what is wrong (never another exception)."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcc.backend.encoding import WORD_BYTES
from xcc.backend.objfile import FORMAT_VERSION, MAGIC, KernelImage, ObjectFile, ParamInfo, is_xbin
from xcc.diagnostics import ObjectFormatError
from xcc.driver import CompileOptions, Source, compile_module

ROOT = Path(__file__).resolve().parent.parent
SAXPY = ROOT / "examples" / "saxpy.sm_80.ptx"
BLOCK_REDUCE = ROOT / "examples" / "block_reduce.sm_80.ptx"
PREFIX = struct.Struct("<4sHHQ")


def compile_file(path: Path, opt_level: int = 3) -> ObjectFile:
    return compile_module([Source(path.read_text(), str(path))], CompileOptions(opt_level=opt_level))


@pytest.fixture(scope="module")
def saxpy_bytes() -> bytes:
    return compile_file(SAXPY).to_bytes()


def split(data: bytes) -> tuple[int, int, dict, bytes]:
    """(major, minor, header, code) of a well-formed image."""
    magic, major, minor, hlen = PREFIX.unpack_from(data)
    assert magic == MAGIC
    body = data[:-32]
    return major, minor, json.loads(body[PREFIX.size:PREFIX.size + hlen]), body[PREFIX.size + hlen:]


def assemble(header: bytes | dict | list, code: bytes, major: int = FORMAT_VERSION[0], minor: int = 0) -> bytes:
    """An image with a correct checksum around the given header bytes (or JSON value) and code."""
    if not isinstance(header, bytes):
        header = json.dumps(header).encode()
    body = PREFIX.pack(MAGIC, major, minor, len(header)) + header + code
    return body + hashlib.sha256(body).digest()


def load_error(data: bytes) -> str:
    """The message of the ObjectFormatError loading ``data`` raises (any other outcome fails)."""
    with pytest.raises(ObjectFormatError) as info:
        ObjectFile.from_bytes(data, "img.xbin")
    msg = info.value.message
    assert msg.startswith("img.xbin: ")
    return msg


# --------------------------------------------------------------------------- round trip, determinism


def test_round_trip(saxpy_bytes):
    obj = compile_file(SAXPY)
    data = obj.to_bytes()
    assert data == saxpy_bytes
    assert is_xbin(data) and data[:4] == b"XBIN"
    back = ObjectFile.from_bytes(data)
    assert back == obj
    assert back.to_bytes() == data
    k = back.kernels["saxpy"]
    assert k.params == [ParamInfo("saxpy_param_0", "u32", 0, 4), ParamInfo("saxpy_param_1", "f32", 4, 4),
                        ParamInfo("saxpy_param_2", "u64", 8, 8), ParamInfo("saxpy_param_3", "u64", 16, 8)]
    assert k.param_bytes == 24
    assert k.instruction_count == len(k.code) // WORD_BYTES == len(k.lines) == len(k.instructions)
    assert k.registers >= 1 and back.arch == "xg1" and back.source_name == str(SAXPY)


def test_round_trip_of_a_multi_kernel_module():
    obj = compile_file(BLOCK_REDUCE, opt_level=0)
    assert len(obj.kernels) == 2
    data = obj.to_bytes()
    back = ObjectFile.from_bytes(data)
    assert back == obj and back.to_bytes() == data
    # kernels are stored in name order, their code concatenated without gaps
    _, _, header, code = split(data)
    metas = header["kernels"]
    assert [m["name"] for m in metas] == sorted(obj.kernels)
    assert metas[0]["code_offset"] == 0
    assert metas[1]["code_offset"] == metas[0]["code_size"]
    assert sum(m["code_size"] for m in metas) == len(code)


def test_handmade_image_round_trip():
    code = compile_file(SAXPY).kernels["saxpy"].code[:2 * WORD_BYTES]
    k = KernelImage("k", code, [ParamInfo("p", "u64", 0, 8)], registers=3, shared_bytes=64,
                    lines=[5, 0], debug_lines=[[1, 2, 3], None], reqntid=[32, 1, 1])
    obj = ObjectFile({"k": k}, source_name="x.ptx", source_files={1: "x.cu"})
    back = ObjectFile.from_bytes(obj.to_bytes())
    assert back == obj
    assert back.source_files == {1: "x.cu"}


@pytest.mark.parametrize("path", [SAXPY, BLOCK_REDUCE], ids=lambda p: p.name)
@pytest.mark.parametrize("opt_level", [0, 3])
def test_compiles_are_byte_identical(path, opt_level):
    first = compile_file(path, opt_level).to_bytes()
    compile_file(ROOT / "examples" / "collatz_steps.sm_80.ptx")  # unrelated work in between
    assert compile_file(path, opt_level).to_bytes() == first


# --------------------------------------------------------------------------- damage


def test_every_truncation_is_rejected(saxpy_bytes):
    minimum = PREFIX.size + 32
    for cut in range(len(saxpy_bytes)):
        msg = load_error(saxpy_bytes[:cut])
        if cut < minimum:
            assert msg == f"img.xbin: truncated object file ({cut} bytes)"
        else:
            assert msg == "img.xbin: checksum mismatch: the file is truncated or corrupt"


def test_every_flipped_byte_is_rejected(saxpy_bytes):
    for pos in range(len(saxpy_bytes)):
        damaged = bytearray(saxpy_bytes)
        damaged[pos] ^= 0xA5
        msg = load_error(bytes(damaged))
        if pos < 4:
            assert msg.startswith("img.xbin: not an xcc object file (bad magic b'")
        elif pos < 6:
            assert msg.startswith("img.xbin: unsupported object format version ")
        else:
            assert msg == "img.xbin: checksum mismatch: the file is truncated or corrupt", pos


def test_appended_bytes_are_rejected(saxpy_bytes):
    assert "checksum mismatch" in load_error(saxpy_bytes + b"\0")


@pytest.mark.parametrize("magic", [b"XBIM", b"\0\0\0\0", b"\x7fELF", b"xbin"])
def test_bad_magic(saxpy_bytes, magic):
    msg = load_error(magic + saxpy_bytes[4:])
    assert msg == f"img.xbin: not an xcc object file (bad magic {magic!r})"
    assert not is_xbin(magic + saxpy_bytes[4:])


@pytest.mark.parametrize("major", [0, 1, FORMAT_VERSION[0] + 1, 0xFFFF])
def test_unknown_major_version(saxpy_bytes, major):
    _, minor, header, code = split(saxpy_bytes)
    msg = load_error(assemble(header, code, major=major, minor=3))
    assert msg == f"img.xbin: unsupported object format version {major}.3 (this xcc reads {FORMAT_VERSION[0]}.x)"


def test_newer_minor_version_is_read(saxpy_bytes):
    _, _, header, code = split(saxpy_bytes)
    obj = ObjectFile.from_bytes(assemble(header, code, major=FORMAT_VERSION[0], minor=FORMAT_VERSION[1] + 5))
    assert obj == ObjectFile.from_bytes(saxpy_bytes)


@pytest.mark.parametrize("header", [b"", b"{", b"{\"arch\": }", b"\xff\xfe\x00", b"not json", b"[1, 2",
                                    b"null", b"[]", b"\"kernels\"", b"1e999", b"{}", b"{\"arch\": \"xg1\"}"],
                         ids=lambda h: repr(h)[:20])
def test_malformed_header_json(saxpy_bytes, header):
    _, _, _, code = split(saxpy_bytes)
    assert load_error(assemble(header, code)).startswith("img.xbin: malformed object header (")


def _kernel_meta(saxpy_bytes) -> tuple[dict, bytes]:
    _, _, header, code = split(saxpy_bytes)
    return header, code


@pytest.mark.parametrize(("change", "expected"), [
    ({"code_offset": -16}, "kernel saxpy code out of range"),
    ({"code_offset": 16}, "kernel saxpy code out of range"),
    ({"code_size": 10_000}, "kernel saxpy code out of range"),
    ({"code_size": 24}, "kernel saxpy code out of range"),
    ({"code_offset": "0"}, "malformed object header ("),
    ({"params": "x"}, "malformed object header ("),
    ({"params": [{"name": "p"}]}, "malformed object header ("),
    ({"params": None}, "malformed object header ("),
    ({"bogus_field": 1}, "malformed object header ("),
    ({"name": [1]}, "malformed object header ("),
    ({"registers": None, "name": None, "code_size": None}, "malformed object header ("),
])
def test_bad_kernel_metadata(saxpy_bytes, change, expected):
    header, code = _kernel_meta(saxpy_bytes)
    header["kernels"][0].update(change)
    assert load_error(assemble(header, code)).startswith(f"img.xbin: {expected}")


@pytest.mark.parametrize("missing", ["code_offset", "code_size", "name", "params", "registers"])
def test_missing_kernel_field(saxpy_bytes, missing):
    header, code = _kernel_meta(saxpy_bytes)
    del header["kernels"][0][missing]
    assert load_error(assemble(header, code)).startswith("img.xbin: malformed object header (")


@pytest.mark.parametrize("change", [{"kernels": None}, {"kernels": 5}, {"files": {"one": "x.cu"}}])
def test_bad_top_level_fields(saxpy_bytes, change):
    header, code = _kernel_meta(saxpy_bytes)
    header.update(change)
    assert load_error(assemble(header, code)).startswith("img.xbin: malformed object header (")


def test_missing_arch(saxpy_bytes):
    header, code = _kernel_meta(saxpy_bytes)
    del header["arch"]
    assert load_error(assemble(header, code)) == "img.xbin: malformed object header ('arch')"


def _bad_opcode_image(saxpy_bytes) -> bytes:
    header, code = _kernel_meta(saxpy_bytes)
    bad = bytearray(code)
    bad[3 * WORD_BYTES] = 0  # opcode field of the fourth instruction: opcode 0 is never valid
    bad[3 * WORD_BYTES + 1] &= 0xFC
    return assemble(header, bytes(bad))


def test_invalid_instruction_word_in_code(saxpy_bytes):
    with pytest.raises(ObjectFormatError, match=r"invalid opcode 0x0 in instruction 3$"):
        ObjectFile.from_bytes(_bad_opcode_image(saxpy_bytes), "img.xbin")


def test_invalid_instruction_word_message_names_file_and_kernel(saxpy_bytes):
    msg = load_error(_bad_opcode_image(saxpy_bytes))
    assert "saxpy" in msg


@pytest.mark.parametrize("change", [{"kernels": ["saxpy"]}, {"kernels": [None]}, {"kernels": {"saxpy": {}}},
                                    {"files": ["x.cu"]}], ids=["str", "null", "dict", "files-list"])
def test_wrong_json_types_raise_object_format_error(saxpy_bytes, change):
    header, code = _kernel_meta(saxpy_bytes)
    header.update(change)
    load_error(assemble(header, code))


def test_deeply_nested_header(saxpy_bytes):
    _, _, _, code = split(saxpy_bytes)
    load_error(assemble(b"[" * 100_000 + b"]" * 100_000, code))


def test_negative_code_size_is_rejected(saxpy_bytes):
    header, code = _kernel_meta(saxpy_bytes)
    header["kernels"][0]["code_size"] = -16
    assert "code out of range" in load_error(assemble(header, code))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 40), 1 << 40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
KERNEL_FIELDS = ["name", "params", "registers", "shared_bytes", "lines", "debug_lines", "code_offset",
                 "code_size", "max_threads", "reqntid"]


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(KERNEL_FIELDS), value=json_values)
def test_any_kernel_field_value_loads_or_raises_object_format_error(saxpy_bytes, field, value):
    header, code = _kernel_meta(saxpy_bytes)
    header["kernels"][0][field] = value
    try:
        ObjectFile.from_bytes(assemble(header, code))
    except ObjectFormatError:
        pass


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_raise_object_format_error(data):
    for blob in (data, MAGIC + data, PREFIX.pack(MAGIC, 1, 0, len(data)) + data + hashlib.sha256(
            PREFIX.pack(MAGIC, 1, 0, len(data)) + data).digest()):
        with pytest.raises(ObjectFormatError):
            ObjectFile.from_bytes(blob)
