"""sim.launch: manifest-style launch specs, inputs identical to the corpus's, storage encodings."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from isa.errors import InputError
from sim import launch as L
from tests.conftest import CORPUS, corpus_or_skip

SPEC = {
    "grid": [2, 1], "block": 64, "dynamic_shared_bytes": {"sm_80": 16, "sm_90": 32},
    "args": [
        {"buffer": "x", "dtype": "bf16", "shape": [4, 8], "init": "randn(2)", "role": "in"},
        {"buffer": "q", "dtype": "e4m3", "shape": [16], "init": "uniform(-500,500)", "role": "in"},
        {"buffer": "i", "dtype": "s8", "shape": [16], "init": "randint(-200,200)", "role": "in"},
        {"buffer": "y", "dtype": "f16", "shape": [8], "init": "full(1.5)", "role": "inout"},
        {"buffer": "l", "dtype": "f32", "shape": [8], "init": "logrand(-3,3)", "role": "out"},
        {"scalar": "n", "dtype": "s32", "value": 7},
        {"scalar": "s", "dtype": "f32", "value": "0.5"},
        {"scalar": "scratch", "dtype": "u64", "value": 0},
    ],
}


def _reference_module():
    corpus_or_skip()
    spec = importlib.util.spec_from_file_location("corpus_reference", CORPUS / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parse_fills_dims_and_picks_shared_bytes_per_target():
    s = L.parse_launch(SPEC, name="demo")
    assert s.grid == (2, 1, 1) and s.block == (64, 1, 1) and s.threads == 128
    assert s.shared_bytes("sm_80") == 16 and s.shared_bytes("sm_90a") == 32
    with pytest.raises(InputError):
        s.shared_bytes("sm_70")
    assert [a.name for a in s.outputs] == ["y", "l"]
    assert s.seed_for() == L.entry_seed("demo")


def test_inputs_are_rounded_to_their_dtype_and_scalars_typed():
    s = L.parse_launch(SPEC, name="demo")
    d = L.build_inputs(s)
    assert list(d) == ["x", "q", "i", "y", "l", "n", "s", "scratch"]
    assert d["x"].dtype == np.float32 and (L.round_bf16(d["x"]) == d["x"]).all()
    assert np.abs(d["q"]).max() == 448.0                 # e4m3 saturates
    assert d["i"].dtype == np.int8 and d["i"].min() == -128 and d["i"].max() == 127  # clipped
    assert (d["y"] == np.float16(1.5)).all() and d["y"].dtype == np.float16
    assert d["n"] == np.int32(7) and type(d["n"]) is np.int32
    assert type(d["s"]) is np.float32 and d["s"] == 0.5 and type(d["scratch"]) is np.uint64
    dev = L.device_buffers(s, d)
    assert dev["x"].dtype == np.uint16 and dev["q"].dtype == np.uint8
    assert (L.decode(dev["x"], "bf16") == d["x"]).all() and (L.decode(dev["q"], "e4m3") == d["q"]).all()
    args = L.kernel_args(s, dev, d)
    assert args[0] is dev["x"] and type(args[5]) is np.int32 and len(args) == 8
    assert set(L.decode_outputs(s, dev)) == {"y", "l"}


def test_seed_changes_draws_and_same_seed_repeats():
    s = L.parse_launch(SPEC, name="demo")
    a, b, c = L.build_inputs(s, 1), L.build_inputs(s, 1), L.build_inputs(s, 2)
    assert (a["x"] == b["x"]).all() and not (a["x"] == c["x"]).all()


def test_inputs_come_from_the_disk_cache_the_second_time_without_drawing(tmp_path, monkeypatch):
    """Start-up (issue #15): a process that finds its inputs in the cache does not import
    numpy.random (tests/test_startup.py checks the import); the values are the drawn ones."""
    monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path))
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    s = L.parse_launch(SPEC, name="demo")
    drawn = L.build_inputs(s, 3)
    assert len(list((tmp_path / "inputs").iterdir())) == 1

    def no_draws(*a, **k):
        raise AssertionError("drew again")

    monkeypatch.setattr(np.random, "default_rng", no_draws)
    again = L.build_inputs(s, 3)
    assert list(again) == list(drawn)
    assert all(np.array_equal(again[k], drawn[k]) and np.asarray(again[k]).dtype == np.asarray(drawn[k]).dtype
               for k in drawn)
    with pytest.raises(AssertionError, match="drew again"):
        L.build_inputs(s, 4)                              # another seed: another entry, drawn
    monkeypatch.setenv("KERNLENS_NO_CACHE", "1")
    with pytest.raises(AssertionError, match="drew again"):
        L.build_inputs(s, 3)                              # cache off: drawn


@pytest.mark.parametrize("bad,match", [
    ({"grid": [0, 1, 1]}, "grid"),
    ({"block": [2048]}, "1024"),
    ({"args": [{"buffer": "a", "dtype": "f8", "shape": [2]}]}, "dtype"),
    ({"args": [{"buffer": "a", "dtype": "f32", "shape": [2], "init": "gauss"}]}, "init"),
    ({"args": [{"buffer": "a", "dtype": "f32", "shape": [2], "init": "randint(1)"}]}, "parameters"),
    ({"args": [{"buffer": "a", "dtype": "f32", "shape": [2], "role": "io"}]}, "role"),
    ({"args": [{"scalar": "n", "dtype": "s32", "value": 1.5}]}, "integer"),
    ({"args": [{"scalar": "n", "dtype": "s32", "value": 1}, {"scalar": "n", "dtype": "s32", "value": 2}]}, "twice"),
    ({"args": [{"thing": 1}]}, "neither"),
])
def test_bad_specs_are_input_errors(bad, match):
    with pytest.raises(InputError, match=match):
        L.parse_launch(dict(SPEC, **bad))


def test_errors_point_at_the_line_in_the_file(tmp_path):
    text = json.dumps(dict(SPEC, args=[{"buffer": "a", "dtype": "f32", "shape": [2], "init": "gauss"}]), indent=1)
    p = tmp_path / "spec.json"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        L.load_launch(p)
    want = next(i for i, line in enumerate(text.splitlines(), 1) if '"gauss"' in line)
    assert exc.value.span.file == str(p) and exc.value.span.line == want
    p.write_text("{not json")
    with pytest.raises(InputError, match="not JSON"):
        L.load_launch(p)
    with pytest.raises(InputError, match="cannot read"):
        L.load_launch(tmp_path / "missing.json")


def test_npz_inputs_decoded_or_stored(tmp_path):
    s = L.parse_launch(SPEC, name="demo")
    d = L.build_inputs(s)
    dev = L.device_buffers(s, d)
    np.savez(tmp_path / "a.npz", **{f"in_{k}": v for k, v in d.items()})
    np.savez(tmp_path / "b.npz", **dev)                   # device storage, scalars absent
    for name in ("a.npz", "b.npz"):
        got = L.load_inputs(s, tmp_path / name)
        for k in d:
            assert np.array_equal(np.asarray(got[k]), np.asarray(d[k])) and np.asarray(got[k]).dtype == np.asarray(d[k]).dtype
    np.savez(tmp_path / "c.npz", x=np.zeros(3))
    with pytest.raises(InputError):
        L.load_inputs(s, tmp_path / "c.npz")


def test_encodings_match_the_corpus_reference():
    ref = _reference_module()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.uniform(-12, 6, 2000),
                        [0.0, -0.0, np.nan, np.inf, -np.inf, 448.0, 464.0, 480.0, -1e9, 2.0 ** -10, 2.0 ** -9 * 1.5]])
    for dt in ("bf16", "e4m3", "f16", "f32", "s8", "u8", "s32"):
        vals = ref.make_buffer(np.random.default_rng(1), "uniform(-300,300)", dt, [500])
        assert np.array_equal(L.encode(vals, dt), ref.encode(vals, dt), equal_nan=dt in ("f16", "f32"))
    assert np.array_equal(L.encode(x.astype(np.float32), "bf16"), ref.f32_to_bf16_bits(x.astype(np.float32)))
    # one codec (sim.numerics.codec): the reference's e4m3 encoder saturates NaN to 416 (code 125)
    same = ~np.isnan(x)
    assert np.array_equal(L.encode(x[same], "e4m3"), ref.f64_to_e4m3_bits(x[same]))
    assert L.encode(np.array([np.nan, -0.0, -1e-7]), "e4m3").tolist() == [0x7F, 0, 0]
    assert ref.f64_to_e4m3_bits(np.array([np.nan, -0.0, -1e-7])).tolist() == [125, 0, 0]
    codes = np.arange(256, dtype=np.uint8)
    assert np.array_equal(L.decode(codes, "e4m3"), ref.decode(codes, "e4m3"), equal_nan=True)


def test_every_manifest_launch_builds_the_inputs_the_gpu_saw(manifest):
    ref = _reference_module()
    for e in manifest["entries"]:
        s = L.load_launch(f"{CORPUS / 'manifest.json'}#{e['name']}")
        mine = L.build_inputs(s)
        theirs = ref.build_inputs(e["launch"], ref.entry_seed(e["name"]))
        assert list(mine) == list(theirs)
        for k in theirs:
            a, b = np.asarray(mine[k]), np.asarray(theirs[k])
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), (e["name"], k)
        npz = CORPUS / "h200" / "io_sm90" / f"{e['name']}.sm_90.npz"
        if npz.exists():
            with np.load(npz) as z:
                for k in theirs:
                    assert np.array_equal(np.asarray(mine[k]), z[f"in_{k}"]), (e["name"], k)
        assert s.reference.endswith(":" + e["reference"]) and s.rtol == e["tolerance"]["rtol"]
        dyn = e["launch"].get("dynamic_shared_bytes", 0)
        for t in e["ptx"]:
            assert s.shared_bytes(t) == (dyn[t] if isinstance(dyn, dict) else dyn), (e["name"], t)


def test_manifest_lookup_by_kernel_name_and_errors(corpus):
    s = L.load_launch(corpus / "manifest.json", kernel="sgemm_naive")
    assert s.name == "sgemm_naive" and s.grid == (3, 7, 1)
    with pytest.raises(InputError, match="no entry"):
        L.load_launch(f"{corpus / 'manifest.json'}#nope")
    with pytest.raises(InputError, match="needs an entry"):
        L.load_launch(corpus / "manifest.json")


def test_npz_inputs_that_do_not_fit_their_dtype_are_errors(tmp_path):
    """Issue 15: values converted silently to the spec's dtype (3.7 -> 3, 300 -> 127 for s8)."""
    s = L.parse_launch(SPEC, name="demo")
    d = L.build_inputs(s)
    base = {f"in_{k}": v for k, v in d.items()}

    def load(**over):
        np.savez(tmp_path / "x.npz", **{**base, **over})
        return L.load_inputs(s, tmp_path / "x.npz")

    with pytest.raises(InputError, match=r"in_i \(float64\) for buffer i \(s8\): 3\.7 is not an integer"):
        load(in_i=np.full(16, 3.7))
    with pytest.raises(InputError, match=r"buffer i \(s8\): values from 0 to 300 do not fit s8 \[-128, 127\]"):
        load(in_i=np.arange(16) * 20)
    with pytest.raises(InputError, match=r"buffer y \(f16\): an unsigned array .* \(arr\.view\(np\.float16\)\)"):
        load(in_y=np.full(8, 0x3E00, np.uint16))
    with pytest.raises(InputError, match=r"scalar n \(s32\): 2\.5 is not an integer"):
        load(in_n=np.float64(2.5))
    # what fits passes: integral floats for integers, the f16 bit patterns viewed as float16
    got = load(in_i=np.arange(16, dtype=np.float64), in_y=np.full(8, 0x3E00, np.uint16).view(np.float16), in_n=9.0)
    assert got["i"].tolist() == list(range(16)) and got["y"].tolist() == [1.5] * 8 and got["n"] == 9
