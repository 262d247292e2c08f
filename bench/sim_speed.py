"""Thread-instructions per second of the PTX simulator (``sim.run_kernel``) on the corpus GEMMs.

    .venv/bin/python bench/sim_speed.py [--target sm_90] [--repeat 5] [--all | --only NAME,...] [--no-stats]

Each kernel runs at its manifest ``launch`` size (small: a few CTAs), ``--repeat`` times, the
kernels taken in turn. Parsing is excluded; the run with the least CPU time is reported: its CPU
seconds (``time.process_time``, what one core spent; the machine may be shared), the wall
seconds next to it, the rate over the whole
``run_kernel`` call in CPU time, and over the run loop alone. Decoding the program is a fixed
cost paid once per module and launch key (later launches reuse it), so the first launch's rate,
decoding included, is printed too: what a single ``kernlens run`` sees.
GPGPU-Sim's PTX mode runs 0.2-0.45 M thread-instructions/s.
"""

from __future__ import annotations

import argparse
import sys
import time

from corpus_runs import corpus_runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--all", action="store_true", help="every corpus entry, not only GEMMs")
    ap.add_argument("--only", default="", help="comma-separated entry names (default: every GEMM)")
    ap.add_argument("--no-stats", action="store_true", help="without the default memory-stats listener")
    args = ap.parse_args()
    jobs = corpus_runs(args.target, args.only, every=args.all)
    if jobs is None:
        print("../shared/corpus is not present", file=sys.stderr)
        return 2
    total_ti = 0
    total_s = 0.0
    total_wall = 0.0
    print(f"{'kernel':34s} {'target':6s} {'grid':>9s} {'thread-instr':>13s} {'cpu s':>8s} {'wall s':>8s}"
          f" {'M thr-instr/s':>14s} {'run loop M/s':>13s} {'1st launch M/s':>15s}")
    run_total = 0.0
    best: dict[str, tuple] = {}
    first: dict[str, float] = {}
    # round robin over the kernels, so that a burst of load from other processes on a shared
    # machine spoils one repeat of several kernels rather than every repeat of one
    for _ in range(args.repeat):
        for job in jobs:
            argv = job.args()
            w0, c0 = time.perf_counter(), time.process_time()
            res = job.run(argv, memory_stats=not args.no_stats)
            dt, wall = time.process_time() - c0, time.perf_counter() - w0
            first.setdefault(job.name, dt)
            if job.name not in best or dt < best[job.name][0]:
                # run_seconds is wall time of the run loop; scaled to CPU by this run's CPU/wall
                best[job.name] = (dt, res.stats["thread_instructions"], res.stats["run_seconds"] * dt / wall, wall)
    for job in jobs:
        e, target, launch = job.entry, job.target, job.launch
        dt, ti, rs, wall = best[e["name"]]
        total_ti += ti
        total_s += dt
        total_wall += wall
        run_total += rs
        grid = "x".join(str(g) for g in launch["grid"])
        print(f"{e['name']:34s} {target:6s} {grid:>9s} {ti:13d} {dt:8.3f} {wall:8.3f} {ti / dt / 1e6:14.1f}"
              f" {ti / rs / 1e6:13.1f} {ti / first[e['name']] / 1e6:15.1f}")
    print(f"{'total':34s} {'':6s} {'':>9s} {total_ti:13d} {total_s:8.3f} {total_wall:8.3f}"
          f" {total_ti / total_s / 1e6:14.1f}"
          f" {total_ti / run_total / 1e6:13.1f} {total_ti / sum(first.values()) / 1e6:15.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
