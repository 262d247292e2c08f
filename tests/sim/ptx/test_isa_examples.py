"""The hand-written PTX ISA programs of ``examples/ptx/isa/`` against the H200's outputs.

Each program (written by ``bench/device/isa_programs.py``, measured by
``bench/device/isa_truth.py``; see ``examples/ptx/isa/h200.log``) runs as one CTA of 32 threads
on ``input.npy``; the simulator must reproduce the GPU's output words bit for bit.  Where the
ISA defines the result (carry flags, set, bfind, video instructions, mma fragment layouts) the
two agree; where it is silent (wmma register layouts, NaN corner cases) the H200 decides.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import isa
import sim

ISA = Path(__file__).resolve().parents[3] / "examples" / "ptx" / "isa"
PROGRAMS = sorted(p.stem for p in ISA.glob("*.ptx"))
TRUTH = np.load(ISA / "h200.npz")

#: programs the simulator cannot run yet, with the reason (kept honest: each one is asserted to
#: fail with a clear error, so a fix shows up here)
NOT_YET: dict[str, str] = {}


def _run(name: str) -> np.ndarray:
    text = (ISA / f"{name}.ptx").read_text()
    words = int(re.search(r"words=(\d+)", text).group(1))
    out = np.zeros(32 * words, np.uint32)
    inp = np.load(ISA / "input.npy")
    res = sim.run_kernel(isa.loads(text, f"{name}.ptx"), "k", (1, 1, 1), (32, 1, 1), [out, inp],
                         check_uninitialized=False)
    assert not [p for p in res.problems if p.kind != "uninitialized"], res.problems[:3]
    return out


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in NOT_YET])
def test_program_matches_the_h200(name):
    expect = TRUTH[name]
    got = _run(name)
    words = expect.size // 32
    bad = np.flatnonzero(got != expect)
    if bad.size:
        t, w = divmod(int(bad[0]), words)
        pytest.fail(f"{name}: {bad.size} of {expect.size} words differ; first thread {t} word {w}: "
                    f"kernlens 0x{int(got[bad[0]]):08x}, H200 0x{int(expect[bad[0]]):08x}")


@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_programs_not_simulated_yet_fail_clearly(name):
    from isa.errors import KernlensError

    with pytest.raises(KernlensError):
        _run(name)


def test_every_program_has_h200_truth():
    assert set(PROGRAMS) == set(TRUTH.files)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptxas_accepts_every_program(tmp_path):
    for name in PROGRAMS:
        r = subprocess.run(["ptxas", "-arch=sm_90a", str(ISA / f"{name}.ptx"), "-o", str(tmp_path / "x.o")],
                           capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stderr)
