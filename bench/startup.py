"""Start-up (issue #15): a cold ``kernlens run`` of a small launch against the same launch run
warm, and a one-file ``validate-kernel``, each in fresh processes, against their goals.

Goals: cold run within 1.5x of the warm run; one-file ``validate-kernel`` <= 0.2 s.
"cold" is a fresh process from start to exit (imports, parse, decode, run, report); "warm" is the
same launch run again inside one process that has run it once (``sim.launch.execute``). Each
figure is the best of N, wall and CPU seconds (user + system, from ``wait4``), measured on this
machine (its CPU count and load average are printed: on a shared machine wall time is inflated).

Run: .venv/bin/python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
from proc_time import measure  # noqa: E402

ENTRY = "dot_dp4a"          # a small launch of the bundled examples (examples/manifest.json)
VALIDATE = ROOT / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx"


def proc(cmd: list[str]) -> tuple[float, float]:
    wall, cpu, _, rc = measure(cmd)
    if rc not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {rc}")
    return wall, cpu


WARM = """
import json, sys, time
import isa
from sim import launch as L
m = json.load(open("examples/manifest.json"))
(e,) = [x for x in m["entries"] if x["name"] == sys.argv[1]]
spec = L.spec_from_entry(e)
path = "examples/" + (e["ptx"].get("sm_90") or next(iter(e["ptx"].values())))
best = []
for i in range(int(sys.argv[2]) + 1):
    t, c = time.perf_counter(), time.process_time()
    L.execute(isa.load(path), spec, e["entry"])
    best.append((time.perf_counter() - t, time.process_time() - c))
print(min(best[1:])[0], min(b[1] for b in best[1:]))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.repeat
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}; best of {n}; measured on this machine")
    out = subprocess.run([PY, "-c", WARM, ENTRY, str(n)], env=ENV, cwd=ROOT, capture_output=True, text=True, check=True)
    warm_wall, warm_cpu = map(float, out.stdout.split())
    cold = [proc([PY, "-m", "kernlens.cli", "run", f"examples/ptx/{ENTRY}.sm_90.ptx",
                  "--launch", f"examples/manifest.json#{ENTRY}"]) for _ in range(n)]
    cold_wall, cold_cpu = min(c[0] for c in cold), min(c[1] for c in cold)
    ratio = cold_wall / warm_wall if warm_wall else float("inf")
    print(f"kernlens run {ENTRY} (manifest launch): warm {warm_wall:.3f} s wall / {warm_cpu:.3f} s CPU, "
          f"cold {cold_wall:.3f} s wall / {cold_cpu:.3f} s CPU: {ratio:.1f}x "
          f"(goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'}; CPU ratio {cold_cpu / warm_cpu if warm_cpu else 0:.1f}x)")
    val = [proc([PY, "-m", "analyzer.cli", str(VALIDATE), "-o", os.devnull]) for _ in range(n)]
    v_wall, v_cpu = min(v[0] for v in val), min(v[1] for v in val)
    print(f"validate-kernel {VALIDATE.name}: {v_wall:.3f} s wall / {v_cpu:.3f} s CPU "
          f"(goal <= 0.2 s: {'met' if v_wall <= 0.2 else 'NOT met'}{'' if v_wall <= 0.2 or v_cpu > 0.2 else '; CPU within'})")
    bare = [proc([PY, "-c", "pass"]) for _ in range(n)]
    print(f"for scale: a bare '{Path(PY).name} -c pass' takes {min(b[0] for b in bare):.3f} s wall / "
          f"{min(b[1] for b in bare):.3f} s CPU here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
