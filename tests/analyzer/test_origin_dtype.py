"""``validate-kernel --precision-mode must_keep_origin_dtype --origin-dtype DTYPE``: the origin modes
need the model's original dtype, which a compiled kernel does not record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WMMA = ROOT / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx"     # f16 inputs, f32 accumulation


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "analyzer.cli", str(WMMA), "--precision-mode",
                           "must_keep_origin_dtype", *args], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_an_f16_model_keeps_its_dtype_in_the_f16_wmma_kernel():
    r = _cli("--origin-dtype", "f16")
    assert r.returncode == 0, r.stderr
    assert "complies with must_keep_origin_dtype" in r.stdout


def test_an_f32_model_is_violated_by_f16_tensor_core_arithmetic():
    r = _cli("--origin-dtype", "f32")
    assert r.returncode == 1
    assert "keep-origin" in r.stdout and "wmma.mma" in r.stdout


def test_without_the_origin_dtype_the_cli_says_how_to_give_it():
    r = _cli()
    assert r.returncode == 2
    assert "--origin-dtype f16" in r.stderr and "Traceback" not in r.stderr


def test_a_non_float_origin_dtype_is_bad_input():
    r = _cli("--origin-dtype", "s8")
    assert r.returncode == 2 and "not a floating-point dtype" in r.stderr
