"""How long the H200 timing model takes to predict the corpus's public launches (measured here).

    PYTHONPATH=. python bench/timing_speed.py                     # every perf and small launch
    PYTHONPATH=. python bench/timing_speed.py hgemm_cp_async_double_buffer --perf
    PYTHONPATH=. python bench/timing_speed.py --small --profile prof.txt

Per launch: the whole ``timing="h200"`` run (functional simulation of the CTAs the model needs +
the SM replay), as wall seconds and as this process's CPU seconds (``time.process_time``: the
figure that counts "on one core" when the machine is shared), the part spent in the replay
(``predict_seconds`` minus the functional run is ``model_seconds``), the CTAs simulated, and the
predicted cycles (modelled). Targets (issue 10): a 2048^3 perf launch <= 30 s, small launches <= 2 s.
Times are measured on this machine: they vary with its load; CPU seconds vary less.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from corpus_runs import manifest, timed_launches

TARGET = {"launch": 2.0, "perf_launch": 30.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--small", action="store_true", help="only the small launches")
    ap.add_argument("--perf", action="store_true", help="only the perf launches")
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument("--profile", help="write a cProfile summary (cumulative, top 60) of all launches run")
    a = ap.parse_args(argv)
    man = manifest()
    if man is None:
        return 2
    whiches = ("launch",) if a.small else ("perf_launch",) if a.perf else ("launch", "perf_launch")
    rows, profs = [], []
    print(f"{'kernel':30s} {'launch':6s} {'ctas':>6s} {'simulated':>9s} {'wall s':>7s} {'cpu s':>7s} "
          f"{'replay s':>8s} {'predicted cycles':>16s}  target")
    for e, which, (tm, wall, cpu, _, prof) in timed_launches(man["entries"], a.kernels, whiches,
                                                             profile=bool(a.profile)):
        if prof is not None:
            profs.append(prof)
        ok = cpu <= TARGET[which]
        rows.append({"kernel": e["name"], "which": which, "ctas": tm["ctas"], "simulated": tm["simulated_ctas"],
                     "wall_seconds": wall, "cpu_seconds": cpu, "replay_seconds": tm["model_seconds"],
                     "predicted_cycles": tm["cycles"], "target_seconds": TARGET[which], "within": ok})
        print(f"{e['name'][:30]:30s} {which[:6]:6s} {tm['ctas']:6d} {tm['simulated_ctas']:9d} {wall:7.2f} "
              f"{cpu:7.2f} {tm['model_seconds']:8.2f} {tm['cycles']:16.0f}  "
              f"{'ok' if ok else 'OVER'} (<= {TARGET[which]:.0f} s)", flush=True)
    for which in whiches:
        rs = [r for r in rows if r["which"] == which]
        if rs:
            worst = max(rs, key=lambda r: r["cpu_seconds"])
            print(f"{which:11s} n={len(rs):2d}  cpu max {worst['cpu_seconds']:.2f} s ({worst['kernel']}), "
                  f"total {sum(r['cpu_seconds'] for r in rs):.1f} s; within {TARGET[which]:.0f} s: "
                  f"{sum(r['within'] for r in rs)}/{len(rs)} (measured on this machine)")
    if a.profile and profs:
        import io
        import pstats

        buf = io.StringIO()
        st = pstats.Stats(profs[0], stream=buf)
        for p in profs[1:]:
            st.add(p)
        st.sort_stats("cumulative").print_stats(60)
        st.sort_stats("tottime").print_stats(40)
        Path(a.profile).write_text(buf.getvalue())
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
