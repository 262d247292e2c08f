"""Time to analyse the whole PTX corpus (every file, every kernel, JSON out) next to ptxas compiling
the same files. Target: the analysis takes under half of ptxas's time.

    .venv/bin/python bench/analyze.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import os
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


def time_analysis(files: list[Path]) -> tuple[float, int]:
    from analyzer.cli import main

    buf = io.StringIO()
    t = time.perf_counter()
    with redirect_stdout(buf):
        code = main([str(f) for f in files] + ["--format", "json"])
    dt = time.perf_counter() - t
    if code != 0:
        raise SystemExit(f"validate-kernel exited {code}")
    return dt, len(buf.getvalue())


def time_ptxas(files: list[Path]) -> float:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        raise SystemExit("ptxas is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        for f in files:
            subprocess.run([ptxas, f"-arch={_arch(f)}", str(f), "-o", os.path.join(tmp, f.stem + ".cubin")],
                           check=True, capture_output=True)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = sorted(CORPUS.glob("*.ptx"))
    if not files:
        raise SystemExit(f"no corpus at {CORPUS}")
    # a fresh process each time would include interpreter start-up; report both first and best runs
    runs = [time_analysis(files) for _ in range(args.repeat)]
    first, nbytes = runs[0]
    best = min(r[0] for r in runs)
    ptx = min(time_ptxas(files) for _ in range(max(1, args.repeat - 1)))
    print(f"files: {len(files)}  ({sum(f.stat().st_size for f in files) / 1e6:.1f} MB of PTX)")
    print(f"analysis (parse + classify + CFG + dynamic + JSON, {nbytes / 1e6:.1f} MB out): "
          f"first {first:.2f} s, best {best:.2f} s")
    print(f"ptxas (serial, same files): {ptx:.2f} s")
    print(f"ratio analysis/ptxas: first {first / ptx:.2f}, best {best / ptx:.2f} (target < 0.50)")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "analyzer.cli", *map(str, files), "--format", "json", "-o", os.devnull],
                   check=True, cwd=ROOT)
    cold = time.perf_counter() - t
    print(f"cold process (python -m analyzer.cli ... --format json): {cold:.2f} s, ratio {cold / ptx:.2f}")


if __name__ == "__main__":
    main()
