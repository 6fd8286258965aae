"""bench/gpu_check.py without a GPU: record mode's files, the gpu mode's argument packing (dry run, checked
against the PTX parameter lists) and the same launches through xcc.runtime.driver (cuda-python's shape),
the comparison and the report section."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import gpu_check as gc  # noqa: E402

CASES = ["saxpy", "affine_struct"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpucheck")
    gc.record(out, CASES, pairs=False)
    return out


def test_record_writes_manifest_npz_and_ptx(recorded):
    manifest = json.loads((recorded / "manifest.json").read_text())
    assert manifest["format"] == gc.FORMAT and manifest["seed"] == gc.SEED
    assert sorted(manifest["cases"]) == sorted(CASES)
    for name, entry in manifest["cases"].items():
        assert (recorded / "ptx" / entry["ptx"]).is_file() and entry["arch"] == "sm_80"
        meta, arrays = gc.load_case(recorded / entry["file"])
        assert meta["name"] == name and meta["xcc_error"] is None
        assert len(meta["kinds"]) == len(gc.entry_params((recorded / "ptx" / entry["ptx"]).read_text(), meta["entry"]))
        for i in meta["outputs"]:
            assert arrays[f"xcc{i}"].dtype == arrays[f"arg{i}"].dtype
            assert np.array_equal(arrays[f"xcc{i}"].view(np.uint8), arrays[f"ref{i}"].view(np.uint8))
    meta, arrays = gc.load_case(recorded / "cases" / "affine_struct.npz")
    assert meta["kinds"] == ["scalar", "buffer", "buffer"]
    assert arrays["arg0"].dtype.names and arrays["arg0"].dtype.itemsize == 24  # the struct, by value
    meta, arrays = gc.load_case(recorded / "cases" / "saxpy.npz")
    assert arrays["arg0"].dtype == np.int32 and arrays["arg1"].dtype == np.float32 and arrays["arg0"].shape == ()


def test_dry_run_packs_every_parameter(recorded, tmp_path):
    out = tmp_path / "dry.json"
    assert gc.gpu_mode(recorded, out, dry_run=True, driver="cuda", pairs="all", only=None, timeout_s=5) == 0
    res = {c["name"]: c for c in json.loads(out.read_text())["cases"]}
    meta, arrays = gc.load_case(recorded / "cases" / "affine_struct.npz")
    packed = res["affine_struct"]["param_bytes"]
    assert bytes.fromhex(packed[0]) == arrays["arg0"].tobytes()
    assert len(bytes.fromhex(packed[1])) == 8 and int.from_bytes(bytes.fromhex(packed[1]), "little") != 0
    meta, arrays = gc.load_case(recorded / "cases" / "saxpy.npz")
    packed = res["saxpy"]["param_bytes"]
    assert bytes.fromhex(packed[0])[:4] == arrays["arg0"].tobytes() and bytes.fromhex(packed[0])[4:] == b"\0" * 4


def test_params_refuse_a_wrong_size():
    with pytest.raises(ValueError, match="4 bytes for a 8-byte parameter"):
        gc.Params([b"\1\2\3\4"], [8])


def test_through_xcc_driver_is_bit_exact(recorded, tmp_path):
    out = tmp_path / "xcc.json"
    assert gc.gpu_mode(recorded, out, dry_run=False, driver="xcc", pairs="none", only=None, timeout_s=60) == 0
    r = json.loads(out.read_text())
    assert r["summary"]["ran"] == 2 and r["summary"]["bit_exact"] == 2 and r["summary"]["ref_ok"] == 2
    md = tmp_path / "B.md"
    md.write_text(f"# Benchmarks\n\n{gc.BEGIN}\nold\n{gc.END}\n\ntail\n")
    gc.report(out, md)
    text = md.read_text()
    assert "old" not in text and text.endswith("tail\n") and text.count(gc.BEGIN) == 1
    assert "| `affine_struct` | sm_80 | yes | ok |" in text


def test_compare_and_explain():
    want = np.array([1.0, 2.0, np.nan, 4.0], np.float32)
    got = want.copy()
    got[1] = np.nextafter(np.float32(2.0), np.float32(3.0))
    c = gc.compare_arrays(got, want)
    assert not c["bit_exact"] and c["n_diff"] == 1 and c["first_diff"]["index"] == 1 and c["max_ulp"] == 1
    assert gc.check_reference(got, want, 0.0, 1e-6)["ok"] and not gc.check_reference(got, want, 0.0, 0.0)["ok"]
    nan_only = want.copy()
    nan_only[2] = np.float32(np.frombuffer(np.uint32(0x7FFFFFFF).tobytes(), np.float32)[0])
    c2 = gc.compare_arrays(nan_only, want)
    assert c2["n_diff"] == 1 and c2["all_nan"]
    assert gc.explain({"approx": ["sin.approx.f32"]}, [c2]) == ["nan"]
    assert gc.explain({"approx": ["sin.approx.f32"]}, [c]) == ["approx"]


def test_kernel_features_follow_calls():
    ptx = """
.func (.param .b32 r) helper(.param .b32 a)
{
    sin.approx.f32 %f1, %f2;
    ret;
}
.visible .entry k(.param .u64 p, .param .align 8 .b8 s[24])
{
    call.uni (retval0), helper, (param0);
    atom.global.add.f32 %f3, [%rd1], %f1;
    ret;
}
"""
    assert gc.entry_params(ptx, "k") == [("p", 8), ("s", 24)]
    assert gc.kernel_features(ptx, "k") == {"approx": ["sin.approx.f32"], "float_atomic": ["atom.global.add.f32"]}


def test_differing_outputs_are_kept_and_reported(recorded, tmp_path):
    import shutil

    d = tmp_path / "rec"
    shutil.copytree(recorded, d)
    meta, arrays = gc.load_case(d / "cases" / "saxpy.npz")
    arrays["xcc3"] = arrays["xcc3"].copy()
    arrays["xcc3"].view(np.uint32)[7] ^= 1  # xcc "said" one other bit: the run must see it
    np.savez_compressed(d / "cases" / "saxpy.npz", meta=np.array(json.dumps(meta)), **arrays)
    out = tmp_path / "run.json"
    gc.gpu_mode(d, out, dry_run=False, driver="xcc", pairs="none", only=["saxpy"], timeout_s=60)
    r = json.loads(out.read_text())
    o = r["cases"][0]["outputs"][0]
    assert r["summary"]["differ"] == 1 and o["n_diff"] == 1 and o["first_diff"]["index"] == 7 and o["max_ulp"] == 1
    assert o["ref"]["ok"]  # the GPU side (here xcc's driver) still matches the reference
    with np.load(tmp_path / "run_outputs.npz") as z:
        assert z.files == ["saxpy.arg3"]
    md = tmp_path / "B.md"
    gc.report(out, md)
    assert "| `saxpy` | sm_80 | no | ok | arg 3: 1/" in md.read_text()
