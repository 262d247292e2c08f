"""What the race detectors cost: each corpus GEMM with ``check_races=False`` and ``True``.

    .venv/bin/python bench/race_cost.py [--target sm_90] [--repeat 3] [--only NAME,...]

``check_races`` turns on the shared-memory race check, the global race detector (``global_race``,
:mod:`sim.ptx.order`) and, in kernels with asynchronous operations, the ``async_race`` checks run
either way. Per kernel: the least CPU time (``time.process_time``) of ``--repeat`` launches
without and with, and their ratio; the goal is a ratio of at most 2 on every GEMM.
"""

from __future__ import annotations

import argparse
import sys
import time

from corpus_runs import corpus_runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    runs = corpus_runs(args.target, args.only)
    if runs is None:
        print("../shared/corpus is not present", file=sys.stderr)
        return 2
    print(f"{'kernel':34s} {'target':6s} {'off cpu s':>10s} {'on cpu s':>10s} {'ratio':>6s} {'problems':>8s}")
    tot = [0.0, 0.0]
    worst = 0.0
    for job in runs:
        best = {}
        nprob = 0
        for _ in range(args.repeat):
            for races in (False, True):
                argv = job.args()
                c0 = time.process_time()
                res = job.run(argv, check_races=races)
                dt = time.process_time() - c0
                best[races] = min(best.get(races, dt), dt)
                if races:
                    nprob = len(res.problems)
        r = best[True] / best[False]
        worst = max(worst, r)
        tot[0] += best[False]
        tot[1] += best[True]
        print(f"{job.name:34s} {job.target:6s} {best[False]:10.3f} {best[True]:10.3f} {r:6.2f} {nprob:8d}")
    print(f"{'total':34s} {'':6s} {tot[0]:10.3f} {tot[1]:10.3f} {tot[1] / tot[0]:6.2f}   worst {worst:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
