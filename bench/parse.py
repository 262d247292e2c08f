"""Parse speed: lines per second over the corpus, next to ptxas compiling the same files.

Target (issue 2): parsing the whole corpus takes at most half the time ptxas needs to compile it.
Both sides are timed in CPU seconds (this process's for the parse, the ptxas children's from
``getrusage``), best of N, which holds steady on a loaded machine; wall-clock figures are printed
next to them. The parser runs on lark-cython when it is installed (``KERNLENS_PURE_LARK=1``: pure
Lark).
Run: .venv/bin/python bench/parse.py [--repeat N]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isa  # noqa: E402


def corpus_files() -> list[Path]:
    files = sorted((ROOT.parent / "shared" / "corpus" / "ptx").glob("*.ptx"))
    return files or sorted((ROOT / "examples" / "ptx").glob("*.ptx"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    files = corpus_files()
    texts = [(str(p), p.read_text()) for p in files]
    lines = sum(t.count("\n") for _, t in texts)
    from isa.ptx import parser

    isa.loads(texts[0][1], texts[0][0])  # build the parser once (grammar compilation is not parsing)
    best = best_wall = float("inf")
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for name, text in texts:
            isa.loads(text, name)
        best = min(best, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - t0)
    print(f"files: {len(files)}  lines: {lines}  parser: {'lark-cython' if parser.ACCELERATED else 'pure Lark'}")
    print(f"kernlens parse: {best:.3f} s CPU, {best_wall:.3f} s wall (best of {args.repeat})  "
          f"{lines / best:,.0f} lines/s")
    if shutil.which("ptxas") is None:
        print("ptxas: not on PATH, no ratio")
        return 0
    targets = [isa.loads(text, name).target for name, text in texts]
    ptx_best = ptx_wall = float("inf")
    for _ in range(max(1, args.repeat // 2)):
        t0, r0 = time.perf_counter(), _children_cpu()
        for p, target in zip(files, targets):
            subprocess.run(["ptxas", f"-arch={target}", str(p), "-o", "/dev/null"], check=True)
        ptx_best = min(ptx_best, _children_cpu() - r0)
        ptx_wall = min(ptx_wall, time.perf_counter() - t0)
    print(f"ptxas compile: {ptx_best:.3f} s CPU, {ptx_wall:.3f} s wall  ({lines / ptx_best:,.0f} lines/s)")
    ratio = best / ptx_best
    print(f"parse / ptxas = {ratio:.2f} CPU, {best_wall / ptx_wall:.2f} wall  "
          f"(target <= 0.50: {'met' if ratio <= 0.5 else 'NOT met'})")
    return 0


def _children_cpu() -> float:
    """User + system CPU seconds of the waited-for child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    sys.exit(main())
