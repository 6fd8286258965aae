"""bench/gpu_semantics.py without a GPU: the probe kernels run on both engines and give the rules that an
NVIDIA H200 showed (bench/data/gpu_semantics.json), the gpu mode runs through xcc.runtime.driver
(cuda-python's shape), and the report compares the recorded GPU outputs with xcc's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import gpu_semantics as gs  # noqa: E402

PROBES = ["intdiv_s32", "intdiv_u64", "carry_first", "carry_chain", "shfl_inactive", "shfl_live", "nan_f64", "nan_f32",
          "nan_f16", "nan_bf16", "nan_f16x2", "nan_bf16x2",
          "nan_cvt_f64", "nan_cvt_int_f64", "nan_cvt_int_f32", "nan_cvt_narrow_f64", "nan_cvt_narrow_f32",
          "nan_cvt_narrow_f16"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("semantics")
    gs.record(out, PROBES)
    return out


def _outputs(d: Path, name: str, engine: str = "ir"):
    meta, arrays = gs.gc.load_case(d / f"{name}.npz")
    return meta, arrays, arrays[f"xcc_{engine}"].reshape(len(meta["labels"]), meta["n"])


def test_engines_agree_on_every_probe(recorded):
    for name in PROBES:
        meta, arrays = gs.gc.load_case(recorded / f"{name}.npz")
        assert meta["errors"] == {}, name
        assert np.array_equal(arrays["xcc_isa"], arrays["xcc_ir"]), name


def test_division_by_zero_gives_all_ones(recorded):
    for name, ones in (("intdiv_s32", 0xFFFFFFFF), ("intdiv_u64", 2**64 - 1)):
        meta, arrays, out = _outputs(recorded, name)
        zero = arrays["in1"] == 0
        assert zero.any() and (out[0][zero] == ones).all() and (out[1][zero] == ones).all()


def test_subc_before_any_cc_borrows_one(recorded):
    meta, arrays, out = _outputs(recorded, "carry_first")
    a, b = arrays["in0"].astype(np.uint64), arrays["in1"].astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    assert (out[meta["labels"].index("addc")] == (a + b) & m).all()
    assert (out[meta["labels"].index("subc")] == (a - b - np.uint64(1)) & m).all()
    meta, arrays, out = _outputs(recorded, "carry_chain")
    # sub.cc then subc is PTX's borrow chain: (a - b) then a - b - borrow
    borrow = (arrays["in0"] < arrays["in1"]).astype(np.uint64)
    assert (out[meta["labels"].index("sub.cc;subc")] == (a - b - borrow) & m).all()


def test_shfl_from_an_inactive_or_non_member_lane_gives_zero_and_true(recorded):
    meta, _, out = _outputs(recorded, "shfl_inactive")
    lanes = slice(0, 16)
    assert (out[meta["labels"].index("idx lane+16")][lanes] == 0).all()
    assert (out[meta["labels"].index("idx lane+16 p")][lanes] == 1).all()
    assert out[meta["labels"].index("down 8")][lanes].tolist() == [1008 + i for i in range(8)] + [0] * 8
    assert out[meta["labels"].index("idx lane^1")][lanes].tolist() == [1000 + (i ^ 1) for i in range(16)]
    meta, _, out = _outputs(recorded, "shfl_live")
    assert (out[0] == 0).all() and (out[1] == 1).all()


def test_f64_nan_is_b_then_a_quieted(recorded):
    meta, arrays, out = _outputs(recorded, "nan_f64")
    a, b = arrays["in0"].view(np.uint64), arrays["in1"].view(np.uint64)
    nan_a, nan_b = np.isnan(arrays["in0"].view(np.float64)), np.isnan(arrays["in1"].view(np.float64))
    quiet = np.uint64(1 << 51)
    for op in ("add.rn", "sub.rn", "mul.rn"):
        got = out[meta["labels"].index(op)]
        assert (got[nan_b] == b[nan_b] | quiet).all(), op
        assert (got[nan_a & ~nan_b] == a[nan_a & ~nan_b] | quiet).all(), op
    for op in ("min", "max"):  # one NaN gives the other operand, two give b's
        got = out[meta["labels"].index(op)]
        both = nan_a & nan_b
        assert (got[both] == b[both] | quiet).all() and (got[nan_a & ~nan_b] == b[nan_a & ~nan_b]).all(), op


CVT_INT = [f"cvt.{m}.{d}" for d in ("s32", "u32", "s64", "u64") for m in ("rni", "rzi", "rmi", "rpi")]


@pytest.mark.parametrize("probe, label", [("nan_f64", "neg"), ("nan_f64", "abs"), ("nan_f64", "cvt.rzi.s64"),
                                          ("nan_f32", "neg"), ("nan_f32", "abs"), ("nan_f16", "neg"),
                                          ("nan_f16", "abs"), ("nan_bf16", "neg"), ("nan_bf16", "abs"),
                                          ("nan_f16x2", "neg.f16x2"), ("nan_f16x2", "neg.ftz.f16x2"),
                                          ("nan_f16x2", "abs.f16x2"), ("nan_f16x2", "abs.ftz.f16x2"),
                                          ("nan_bf16x2", "neg.bf16x2"), ("nan_bf16x2", "abs.bf16x2"),
                                          ("nan_cvt_f64", "neg+add")]
                         + [(f"nan_cvt_int_{src}", c) for src in ("f64", "f32") for c in CVT_INT]
                         + [(f"nan_cvt_narrow_{src}", f"cvt.{m}.{d}") for src in ("f64", "f32", "f16")
                            for d in ("s16", "u16", "s8", "u8") for m in ("rni", "rzi")]
                         + [("nan_cvt_narrow_f16", f"cvt.{m}.{d}") for d in ("s32", "u32", "s64", "u64")
                            for m in ("rni", "rzi")])
def test_nan_results_the_h200_recorded(recorded, probe, label):
    """Both engines give, for every input, the bits the H200 returned (bench/data/gpu_semantics_outputs.npz):
    neg.f64/abs.f64 of a NaN is the NaN quieted with its sign unchanged, neg/abs.f32 0x7FFFFFFF, f16/bf16 (x2 too) 0x7FFF; a NaN converted from f64 to any
    integer, or from f32/f16 to a 64-bit one, gives the destination's top bit, otherwise 0 (every rounding
    mode)."""
    with np.load(ROOT / "bench" / "data" / "gpu_semantics_outputs.npz") as z:
        gpu = z[probe]
    for engine in ("ir", "isa"):
        meta, _, out = _outputs(recorded, probe, engine)
        j = meta["labels"].index(label)
        assert np.array_equal(out[j], gpu.reshape(len(meta["labels"]), meta["n"])[j]), (engine, label)


def test_gpu_mode_through_xcc_driver_and_report(recorded, tmp_path):
    js = tmp_path / "gpu.json"
    assert gs.gpu_mode(recorded, js, "xcc") == 0
    result = json.loads(js.read_text())
    assert all(p["status"] == "ok" for p in result["probes"].values())
    md = tmp_path / "B.md"
    md.write_text("# Benchmarks\n")
    assert gs.report(js, recorded, md) == 0
    comparison = json.loads(js.read_text())["comparison"]["probes"]
    for name in PROBES:  # the xcc driver runs the ISA engine: every value the same as both engines'
        for row in comparison[name]["results"]:
            assert row["same_isa"] == row["same_ir"] == row["n"], (name, row)
    text = md.read_text()
    assert gs.BEGIN in text and "| intdiv_s32 | `rem` | 64 | 64 | 64 |" in text


def test_every_probe_assembles_for_xcc(tmp_path):
    """Each probe's PTX parses, checks and builds the launch its gpu mode would (the parameter list)."""
    for name, p in gs.probes().items():
        params = gs.gc.entry_params(p["ptx"], p["entry"])
        assert len(params) == len(p["inputs"]) + 1 + int(p["scalar_n"]), name
