"""Start-up (issue #15): a command imports what it runs and no more; the figures themselves are
``bench/startup.py``'s (tests never time things), these tests keep the heavy imports off the path.

Heavy and not needed by a PTX run without bf16/fp8 or by a one-file ``validate-kernel``: the
inspector (textual), networkx, ml_dtypes (~0.5 s of CPU to import), and, once the module is in
the on-disk cache, the parser (lark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("textual", "tui", "networkx", "ml_dtypes", "lark", "lark_cython", "scipy", "dask", "pyarrow")
#: submodules of a package the command does need that it must not import: numpy.ma (~10 ms of CPU;
#: np.unique and np.percentile import it, sim.arrays does not)
HEAVY_PARTS = ("numpy.ma",)
#: what a command needs only when the cache is empty: numpy.random (~12 ms of CPU) draws the
#: inputs, which the cache then holds
CACHED_AWAY = ("numpy.random",)

PROBE = """
import contextlib, io, json, sys
from importlib import import_module
main = import_module(sys.argv[1]).main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[2:])
print(json.dumps([rc, sorted(sys.modules)]))
"""


def imported(tmp_path, module: str, *argv: str) -> tuple[int, set[str]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path / "cache"))
    env.pop("KERNLENS_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, module, *argv], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, {m.split(".")[0] for m in mods} | {m for m in mods if m in HEAVY_PARTS + CACHED_AWAY}


@pytest.mark.parametrize("module,argv", [
    ("kernlens.cli", ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"]),
    ("analyzer.cli", ["examples/ptx/hgemm_wmma.sm_90.ptx"]),
])
def test_a_run_and_a_validation_import_nothing_heavy(tmp_path, module, argv):
    rc, first = imported(tmp_path, module, *argv)
    assert rc == 0 and "lark" in first                          # an empty cache: parsed
    assert not first & (set(HEAVY) - {"lark", "lark_cython"}), first & set(HEAVY)
    assert not first & set(HEAVY_PARTS), first & set(HEAVY_PARTS)
    rc, second = imported(tmp_path, module, *argv)
    cached_away = set(HEAVY + HEAVY_PARTS + CACHED_AWAY)
    assert rc == 0 and not second & cached_away, second & cached_away   # from the cache: no parser, no draws
    assert "numpy" in second and "isa" in second


def test_a_bf16_launch_imports_ml_dtypes_and_runs(tmp_path):
    from tests.conftest import corpus_or_skip

    corpus = corpus_or_skip()
    rc, mods = imported(tmp_path, "kernlens.cli", "run", str(corpus / "ptx" / "bf16_smem_gemm.sm_90.ptx"),
                        "--launch", f"{corpus / 'manifest.json'}#bf16_gemm_smem_tiled")
    assert rc == 0 and "ml_dtypes" in mods


def test_the_command_line_still_knows_every_command(capsys, monkeypatch):
    from kernlens.cli import SUBCOMMANDS, main

    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)     # --no-cache sets it: undone after the test

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in SUBCOMMANDS)
    assert main(["--no-cache", "fmt", str(ROOT / "examples" / "ptx" / "dot_dp4a.sm_90.ptx")]) == 0
    assert ".entry dot_dp4a" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'frobnicate'" in err and "run" in err and "inspect" in err


def test_the_program_exits_quickly_with_its_code_and_its_whole_output(tmp_path):
    """``python -m kernlens.cli`` ends through exit_now (no interpreter teardown): the exit code
    and every line of a long output still arrive, and atexit handlers run."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path))
    ptx = ROOT / "examples" / "ptx" / "dot_dp4a.sm_90.ptx"
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "fmt", str(ptx)], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout.rstrip().endswith("}")
    assert out.stdout.count("\n") > 20
    out = subprocess.run([sys.executable, "-m", "kernlens.cli", "fmt", str(tmp_path / "missing.ptx")], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "no such file" in out.stderr
    code = ("import atexit, sys; from kernlens.cli import exit_now; "
            "atexit.register(lambda: print('atexit ran')); print('x' * 100000); exit_now(3)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 3 and out.stdout == "x" * 100000 + "\natexit ran\n"


BLAS_PROBE = """
import json, os, sys
import {module}
import numpy
print(json.dumps(os.environ.get("OPENBLAS_NUM_THREADS")))
"""


@pytest.mark.parametrize("module", ["kernlens.cli", "analyzer.cli"])
@pytest.mark.parametrize("chosen, expected", [({}, "1"), ({"OMP_NUM_THREADS": "3"}, None),
                                              ({"OPENBLAS_NUM_THREADS": "2"}, "2")])
def test_an_entry_point_asks_openblas_for_one_thread_unless_the_user_chose(module, chosen, expected):
    """OpenBLAS's threads start (and spin) at numpy's import; the simulator never calls BLAS."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(chosen, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE.format(module=module)], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == expected


def test_the_bench_s_run_imports_are_what_a_run_imports(tmp_path):
    """bench/startup.py prints the CPU of importing RUN_IMPORTS as the part of a cold run no cache
    removes: each of them is imported by a PTX run."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import startup
    finally:
        sys.path.remove(str(ROOT / "bench"))
    wanted = {m.strip() for m in startup.RUN_IMPORTS.removeprefix("import ").split(",")}
    env = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", PROBE, "kernlens.cli", "run", "examples/ptx/dot_dp4a.sm_90.ptx",
                          "--launch", "examples/manifest.json#dot_dp4a"], env=env, cwd=ROOT, capture_output=True,
                         text=True)
    rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
    assert rc == 0 and wanted <= set(mods), wanted - set(mods)
