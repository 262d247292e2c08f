"""Time to analyse the whole PTX corpus (every file, every kernel, JSON out) next to ptxas compiling
the same files. Target: the analysis takes under half of ptxas's time.

Both sides are timed in CPU seconds, best of N (this process's for the analysis, the ptxas
children's from ``getrusage``); wall-clock figures are printed next to them.

    .venv/bin/python bench/analyze.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus" / "ptx"


def _arch(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(".target"):
            return line.split()[1].rstrip(",")
    return "sm_90"


def _children_cpu() -> float:
    """User + system CPU seconds of the waited-for child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_analysis(files: list[Path]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, bytes of JSON) for one in-process analysis of ``files``."""
    from analyzer.cli import main

    buf = io.StringIO()
    t, c = time.perf_counter(), time.process_time()
    with redirect_stdout(buf):
        code = main([str(f) for f in files] + ["--format", "json"])
    cpu, wall = time.process_time() - c, time.perf_counter() - t
    if code != 0:
        raise SystemExit(f"validate-kernel exited {code}")
    return cpu, wall, len(buf.getvalue())


def time_ptxas(files: list[Path]) -> tuple[float, float]:
    """(CPU seconds of the ptxas processes, wall seconds) to compile ``files`` one after another."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        raise SystemExit("ptxas is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        t, c = time.perf_counter(), _children_cpu()
        for f in files:
            subprocess.run([ptxas, f"-arch={_arch(f)}", str(f), "-o", os.path.join(tmp, f.stem + ".cubin")],
                           check=True, capture_output=True)
        return _children_cpu() - c, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    files = sorted(CORPUS.glob("*.ptx"))
    if not files:
        raise SystemExit(f"no corpus at {CORPUS}")
    from isa.ptx import parser

    # a fresh process each time would include interpreter start-up; report both first and best runs
    runs = [time_analysis(files) for _ in range(args.repeat)]
    first, first_wall, nbytes = runs[0]
    best = min(r[0] for r in runs)
    best_wall = min(r[1] for r in runs)
    ptx_runs = [time_ptxas(files) for _ in range(max(1, args.repeat - 1))]
    ptx = min(r[0] for r in ptx_runs)
    ptx_wall = min(r[1] for r in ptx_runs)
    print(f"files: {len(files)}  ({sum(f.stat().st_size for f in files) / 1e6:.1f} MB of PTX)  "
          f"parser: {'lark-cython' if parser.ACCELERATED else 'pure Lark'}")
    print(f"analysis (parse + classify + CFG + dynamic + JSON, {nbytes / 1e6:.1f} MB out): "
          f"first {first:.2f} s, best {best:.2f} s CPU (wall: first {first_wall:.2f} s, best {best_wall:.2f} s)")
    print(f"ptxas (serial, same files): {ptx:.2f} s CPU, {ptx_wall:.2f} s wall")
    print(f"ratio analysis/ptxas: first {first / ptx:.2f}, best {best / ptx:.2f} CPU; "
          f"best {best_wall / ptx_wall:.2f} wall (target < 0.50: {'met' if best / ptx < 0.5 else 'NOT met'})")
    t, c = time.perf_counter(), _children_cpu()
    subprocess.run([sys.executable, "-m", "analyzer.cli", *map(str, files), "--format", "json", "-o", os.devnull],
                   check=True, cwd=ROOT)
    cold, cold_cpu = time.perf_counter() - t, _children_cpu() - c
    print(f"cold process (python -m analyzer.cli ... --format json): {cold_cpu:.2f} s CPU, {cold:.2f} s wall, "
          f"ratio {cold_cpu / ptx:.2f} CPU")


if __name__ == "__main__":
    main()
