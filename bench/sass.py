"""What the SASS view costs: the whole corpus through isa.sass against ptxas alone.

    python bench/sass.py [PTX files...]      (default: ../shared/corpus/ptx/*.ptx, else examples/ptx)

* ``ptxas alone``: ``ptxas -v -lineinfo -arch=<target>`` once per file, what building the cubins takes;
* ``SASS analysis, cold``: ``isa.sass.listings`` with the disk cache off (batched ptxas + nvdisasm,
  the listing parsed, every instruction described, per-kernel counts and the shared-access plans);
* ``SASS analysis, warm``: the same on new module objects with the disk cache filled (what a second
  ``validate-kernel --sass`` run of the same files costs).

Goal (issue 13): SASS analysis of the corpus in less than ptxas's time + 50 %.
"""

from __future__ import annotations

import glob
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    import isa
    import isa.sass
    from isa.sass import compile as C

    files = argv or sorted(glob.glob(str(ROOT.parent / "shared" / "corpus" / "ptx" / "*.ptx"))) \
        or sorted(glob.glob(str(ROOT / "examples" / "ptx" / "*.ptx")))
    note = isa.sass.note()
    if note:
        print(f"note: {note}")
        return 0
    mods = [isa.load(f) for f in files]
    ptxas = C.tools()["ptxas"]

    def ptxas_alone():
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            for m in mods:
                subprocess.run([ptxas, "-v", "-lineinfo", f"-arch={isa.sass.ptx_target(m)}", m.path, "-o",
                                str(Path(tmp) / "k.cubin")], capture_output=True, check=True)
            return time.perf_counter() - t0

    def analyse(use_cache):
        modules = [isa.load(f) for f in files]          # new objects: no in-process reuse
        t = time.perf_counter()
        lists = isa.sass.listings(modules, use_cache=use_cache)
        n = 0
        for lst in lists:
            for k in lst.kernels.values():
                n += len(k.instructions)
                k.classes, k.opcodes  # noqa: B018 - the counts reports show
            lst.shared_plan  # noqa: B018
        return time.perf_counter() - t, lists, n

    # the machine is shared: three rounds, alternating, and the median of each
    rounds = int(__import__("os").environ.get("BENCH_ROUNDS", "3"))
    t_p, t_c, t_w = [], [], []
    for _ in range(rounds):
        t_p.append(ptxas_alone())
        t, lists, n_ins = analyse(use_cache=False)
        t_c.append(t)
        analyse(use_cache=True)                          # fill the cache
        t_w.append(analyse(use_cache=True)[0])
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    t_ptxas, t_cold, t_warm = med(t_p), med(t_c), med(t_w)
    kernels = sum(len(lst.kernels) for lst in lists)
    print(f"{len(files)} PTX files, {kernels} kernels, {n_ins} SASS instructions; median of {rounds} rounds")
    print(f"ptxas alone (one call per file):         {t_ptxas:7.2f} s   (rounds: {', '.join(f'{x:.2f}' for x in t_p)})")
    print(f"SASS analysis, cold (no disk cache):     {t_cold:7.2f} s = {t_cold / t_ptxas:.2f} x ptxas   "
          f"(rounds: {', '.join(f'{x:.2f}' for x in t_c)})")
    print(f"SASS analysis, warm (disk cache):        {t_warm:7.2f} s = {t_warm / t_ptxas:.2f} x ptxas   "
          f"(rounds: {', '.join(f'{x:.2f}' for x in t_w)})")
    goal = 1.5 * t_ptxas
    for what, t in (("cold", t_cold), ("warm", t_warm)):
        print(f"goal < ptxas + 50 % = {goal:.2f} s: {what} {'met' if t < goal else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
