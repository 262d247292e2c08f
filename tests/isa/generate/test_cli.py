"""``kernlens generate ... --isa ptx`` writes F.ptx + F.launch.json that ``kernlens run`` accepts; bad
combinations exit 2 with one error line; the Ascend-like interface is unchanged."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernlens.cli import main


def kl(*argv):
    return subprocess.run([sys.executable, "-m", "kernlens.cli", *argv], capture_output=True, text=True)


def test_gemm_ptx_roundtrip_through_run(tmp_path):
    out = tmp_path / "g.ptx"
    assert main(["generate", "gemm", "--isa", "ptx", "--arch", "sm_80", "--dtype", "bf16", "--engine", "mma",
                 "--m", "40", "--n", "24", "--k", "48", "--tile", "32x32x32", "--warps", "2x1", "--stages", "2",
                 "--layout", "tn", "--alpha", "0.5", "--beta", "2", "-o", str(out)]) == 0
    spec = json.loads((tmp_path / "g.launch.json").read_text())
    assert spec["launch"]["grid"] == [1, 2, 1] and spec["launch"]["block"] == [64, 1, 1]
    assert spec["generator"]["layout"] == "tn" and spec["tolerance"]["rtol"] > 0
    r = kl("run", str(out), "--launch", str(tmp_path / "g.launch.json"), "--json")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    res = json.loads(r.stdout)
    assert res["ok"] and res["check"]["passed"] and not res["problems"]


def test_reduce_and_softmax_ptx(tmp_path):
    for kind, extra in (("reduce", ["--op", "max", "--passes", "2", "--splits", "2"]), ("softmax", [])):
        out = tmp_path / f"{kind}.ptx"
        assert main(["generate", kind, "--isa", "ptx", "--dtype", "f32", "--rows", "2", "--cols", "300",
                     "--threads", "64", *extra, "-o", str(out)]) == 0
        assert main(["run", str(out), "--launch", str(tmp_path / f"{kind}.launch.json")]) == 0


@pytest.mark.parametrize("argv,needle", [
    (["gemm", "--isa", "ptx", "--dtype", "f32", "--engine", "wgmma", "--m", "8", "--n", "8", "--k", "8"],
     "supported: fma: f32"),
    (["gemm", "--isa", "ptx", "--dtype", "s8", "--layout", "tn", "--m", "8", "--n", "8", "--k", "8"], "--layout nt"),
    (["gemm", "--isa", "ptx", "--tile", "12x3", "--m", "8", "--n", "8", "--k", "8"], "--tile '12x3'"),
    (["gemm", "--isa", "ptx", "--epilogue", "requant", "--m", "8", "--n", "8", "--k", "8"], "--epilogue"),
    (["gemm", "--isa", "ascend", "--engine", "mma", "--m", "8", "--n", "8", "--k", "8"], "--engine"),
    (["gemm", "--dtype", "e4m3", "--m", "8", "--n", "8", "--k", "8"], "Ascend-like GEMM supports"),
    (["softmax", "--isa", "ptx", "--passes", "3", "--rows", "2", "--cols", "8"], "--passes 3"),
    (["reduce", "--passes", "2", "--rows", "2", "--cols", "8"], "--passes"),
])
def test_bad_combinations_exit_2(argv, needle):
    r = kl("generate", *argv)
    assert r.returncode == 2
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_ascend_default_is_unchanged(tmp_path):
    r = kl("generate", "gemm", "--dtype", "f16", "--m", "128", "--n", "256", "--k", "256")
    assert r.returncode == 0 and r.stdout.startswith(".arch davinci-a2")


def test_verify_without_gpu_is_a_clear_error(tmp_path):
    out = tmp_path / "g.ptx"
    assert main(["generate", "gemm", "--isa", "ptx", "--dtype", "f32", "--m", "16", "--n", "16", "--k", "8",
                 "--tile", "32x32x8", "--warps", "1x1", "-o", str(out)]) == 0
    spec = str(tmp_path / "g.launch.json")
    ok = kl("verify", str(out), "--launch", spec)
    assert ok.returncode == 0 and "verify: OK" in ok.stdout
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here: the no-GPU message is not what this machine shows")
    except ImportError:
        pass
    r = kl("verify", str(out), "--launch", spec, "--on-gpu")
    assert r.returncode == 2
    assert "--on-gpu" in r.stderr and "CuPy" in r.stderr and "Traceback" not in r.stderr
