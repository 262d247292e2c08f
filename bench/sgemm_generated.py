"""A generated SGEMM (fma engine, f32) launch simulated in full on all cores, outputs checked.

    python bench/sgemm_generated.py            # 2048^3 (issue #14 goal: <= 5 minutes on 16 cores)
    python bench/sgemm_generated.py 512        # a smaller cube
    python bench/sgemm_generated.py 2048 16    # ... on 16 processes

Prints the simulator's wall time (measured, this machine), the cores used and the reference check.
Measured on the H200 machine's 16 cores (2026-12-03, examples/h200/sgemm_generated_2048_log.txt):
2048^3 in 40.1 s wall, all 256 CTAs, 0 problems, 0 of 4,194,304 outputs outside the tolerance.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import isa  # noqa: E402
from isa.generate import ptx_gemm as G  # noqa: E402
from sim import launch as L  # noqa: E402
from sim.verify import simulate  # noqa: E402


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    # the cores this process may run on (os.cpu_count() can report the host's under a sandbox)
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if len(sys.argv) > 2:
        jobs = int(sys.argv[2])
    cfg = G.PtxGemmConfig(arch="sm_90", dtype="f32", engine="fma", m=n, n=n, k=n, tile=(128, 128, 8),
                          warps=(4, 2), stages=2)
    spec = L.spec_from_entry(G.launch_spec(cfg))
    t0 = time.perf_counter()
    ex, report = simulate(isa.load(G.gemm_ptx(cfg)), spec, jobs=jobs)
    wall = time.perf_counter() - t0
    print(f"{cfg.kernel_name} {n}^3: {wall:.1f} s wall on {jobs} cores (measured), grid {list(spec.grid)}, "
          f"problems {len(ex.problems)}, reference check {'PASS' if report and report.passed else 'FAIL'}")
    for o in (report.reports if report else []):
        print(f"  {o.name}: {o.n_bad} of {o.n} outside rtol {o.rtol:g} + atol {o.atol:.3g}; max abs error "
              f"{o.max_abs:.3g}")
    return 0 if report and report.passed and not ex.problems else 1


if __name__ == "__main__":
    sys.exit(main())
