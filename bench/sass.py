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
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for m in mods:
            subprocess.run([ptxas, "-v", "-lineinfo", f"-arch={isa.sass.ptx_target(m)}", m.path, "-o",
                            str(Path(tmp) / "k.cubin")], capture_output=True, check=True)
        t_ptxas = time.perf_counter() - t0

    def analyse(modules, use_cache):
        t = time.perf_counter()
        lists = isa.sass.listings(modules, use_cache=use_cache)
        n = 0
        for lst in lists:
            for k in lst.kernels.values():
                n += len(k.instructions)
                k.classes, k.opcodes  # noqa: B018 - the counts reports show
            lst.shared_plan  # noqa: B018
        return time.perf_counter() - t, lists, n

    t_cold, lists, n_ins = analyse(mods, use_cache=False)
    split = {"ptxas": 0.0, "disassemble": 0.0}
    for lst in lists:
        for key in split:
            split[key] += lst.compiled.seconds.get(key, 0.0)
    analyse([isa.load(f) for f in files], use_cache=True)            # fill the cache
    t_warm, _, _ = analyse([isa.load(f) for f in files], use_cache=True)
    kernels = sum(len(lst.kernels) for lst in lists)
    print(f"{len(files)} PTX files, {kernels} kernels, {n_ins} SASS instructions")
    print(f"ptxas alone (one call per file):        {t_ptxas:7.2f} s")
    print(f"SASS analysis, cold (no disk cache):     {t_cold:7.2f} s  = {t_cold / t_ptxas:.2f} x ptxas "
          f"(tools, summed over the parallel batches: ptxas {split['ptxas']:.2f} s, "
          f"nvdisasm {split['disassemble']:.2f} s)")
    print(f"SASS analysis, warm (disk cache):        {t_warm:7.2f} s  = {t_warm / t_ptxas:.2f} x ptxas")
    goal = 1.5 * t_ptxas
    for what, t in (("cold", t_cold), ("warm", t_warm)):
        print(f"goal < ptxas + 50 % = {goal:.2f} s: {what} {'met' if t < goal else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
