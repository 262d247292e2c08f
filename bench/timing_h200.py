"""Predicted vs measured H200 cycles for the corpus's public launches (the H200 timing model).

    PYTHONPATH=. python bench/timing_h200.py                 # every perf launch
    PYTHONPATH=. python bench/timing_h200.py --small         # the small launches too
    PYTHONPATH=. python bench/timing_h200.py sgemm_naive --json out.json
    PYTHONPATH=. python bench/timing_h200.py --mix sgemm_vec4        # each launch's top-5 stalls too

Truth: ../shared/corpus/h200/ncu_metrics.json (``gpc__cycles_elapsed.max``) and ncu_deep.json (stall
reasons, L2 hit rate). Prints per launch: predicted and measured cycles, error, modelled vs ncu top
stall, L2 hit rate, and the prediction time; then MAPE and the share within +-35 %, for the
calibration two thirds and the held-out third separately; the SGEMM ladder's Spearman rank
correlation; the top-stall agreement; how close the whole stall breakdown is (how many of ncu's top-3
reasons the model also ranks in its top 3, and the total-variation distance of the two normalised
mixes: 0 the same shares, 1 nothing in common); L2 hit rate within 10 points.

Held-out split (fixed, documented): a kernel is held out of every fitting when
``zlib.crc32(name) % 3 == 0``. No constant is fitted per kernel. The model's fitted numbers are the
entries marked ``[fitted]`` in sim/machines/h200.toml (the bench prints them first; a test checks this
list against the toml), each fitted on data outside the held-out third:

* ``launch_overhead``: the small launches of the 22 calibration kernels (ncu_metrics), median residual;
* ``global_dram`` and ``dram_queue_latency``: the ten calibration kernels whose DRAM time is over a tenth
  of their SM time (perf launches, ncu_metrics; bench/fit_dram_latency.py);
* ``carveout_headroom``: ncu_deep's shared-memory occupancy limit of the 28 calibration launches with
  shared memory (bench/fit_carveout.py);
* ``l2_reuse_full``, ``l2_reuse_none``, ``l2_write_line_cycles``, ``l2_write_sector_cycles``,
  ``l2_write_partial_cycles``: the project's L2 microbenchmarks measured on the H200 (examples/h200/l2_sweep,
  examples/h200/mem_sweep), no corpus kernel;
* ``dram_line_overhead``: the project's microbenchmark strided_load_32 (examples/h200/microbench.json), no
  corpus kernel;
* ``dram_rw_turnaround`` (DRAM time of mixed read and write traffic): the project's microbenchmark
  copy_dram_perf (examples/h200/microbench.json), no corpus kernel;
* ``l2_read_queue`` (the loaded L2 read latency): the microbenchmarks read_cg_4m_w32 and read_cg_4m
  (examples/h200/mem_sweep, examples/h200/l2_sweep), no corpus kernel;
* ``atomic_unit_issue`` (an L2 atomic unit's operations to different sectors): the project's atomic sweep
  microbenchmark atomic_spacing_4x32, the median of its 8 ncu launches (examples/h200/pipe_atomic/ncu_repeat),
  no corpus kernel.
* ``atomic_slice_issue`` (an L2 slice's atomics to sectors at one place in their lines): the atomic sweep
  microbenchmark atomic_spacing_8x128, the median of its 21 ncu launches (examples/h200/repeat), no corpus
  kernel.
* ``l2_atomic_window`` (the L2 atomic requests an SM sub-partition keeps in flight): the atomic sweep
  microbenchmark atomic_spacing_16x4096 (examples/h200/pipe_atomic), no corpus kernel.

Other numbers are from ../shared/facts/h200.md, derived from ncu data, or marked ``[assumed]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

from corpus_runs import manifest, scores, timed_launches

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
LADDER = ["sgemm_naive", "sgemm_smem_tiled32", "sgemm_smem_conflict", "sgemm_smem_padded", "sgemm_regblock1d",
          "sgemm_vec4"]


def held_out(name: str) -> bool:
    return zlib.crc32(name.encode()) % 3 == 0


def _stall_name(key: str) -> str:
    return key.split("stalled_")[1].split("_per_issue")[0]


def ncu_stalls(metrics: dict) -> dict[str, float]:
    """ncu's warp-stall reasons (warps stalled per issue, measured), without ``selected`` (the issuing
    warp, which the model does not count as a stall)."""
    st = {_stall_name(k): v for k, v in metrics.items() if "issue_stalled" in k and "per_issue_active" in k}
    st.pop("selected", None)
    return st


def ncu_top_stall(metrics: dict) -> str | None:
    st = ncu_stalls(metrics)
    return max(st, key=st.get) if st else None


def stall_distance(model: dict, ncu: dict) -> tuple[int, float] | None:
    """How close the whole stall breakdown is: (how many of ncu's top-3 reasons are also in the model's
    top 3, total-variation distance of the two mixes normalised to sum 1: half their L1 distance, 0 =
    the same shares, 1 = no reason in common)."""
    tm, tn = sum(v for v in model.values() if v > 0), sum(v for v in ncu.values() if v > 0)
    if not tm or not tn:
        return None
    top = lambda d: set(sorted((k for k in d if d[k] > 0), key=lambda k: -d[k])[:3])  # noqa: E731
    keys = set(model) | set(ncu)
    tv = 0.5 * sum(abs(max(model.get(k, 0.0), 0.0) / tm - max(ncu.get(k, 0.0), 0.0) / tn) for k in keys)
    return len(top(model) & top(ncu)), tv


def spearman(a, b) -> float:
    def ranks(x):
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        for k, i in enumerate(order):
            r[i] = float(k)
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    if n < 2:
        return float("nan")
    d = sum((x - y) ** 2 for x, y in zip(ra, rb))
    return 1 - 6 * d / (n * (n * n - 1))


def fitted_constants(machine: str = "h200") -> list[tuple[str, float, str]]:
    """(dotted name, value, source) of every number of sim/machines/MACHINE.toml marked ``[fitted]``."""
    from sim import machines

    def walk(tab, path=()):
        for k, v in tab.items():
            if isinstance(v, dict) and "value" in v:
                if "[fitted]" in str(v.get("source", "")):
                    yield ".".join(path + (k,)), v["value"], v["source"]
            elif isinstance(v, dict):
                yield from walk(v, path + (k,))
    return list(walk(machines.load(machine)[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--small", action="store_true", help="also the small launches")
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument("--mix", action="store_true", help="also print each launch's top-5 stall reasons, model and ncu")
    a = ap.parse_args(argv)
    man = manifest()
    if man is None:
        return 2
    ncu = json.loads((CORPUS / "h200" / "ncu_metrics.json").read_text())["launches"]
    deep = json.loads((CORPUS / "h200" / "ncu_deep.json").read_text())["launches"]

    def truth(table, kernel, which, grid):
        return next((x["metrics"] for x in table if x["kernel"] == kernel and x["which"] == which
                     and list(x["grid"]) == list(grid)), None)

    fit = fitted_constants()
    print(f"fitted constants of sim/machines/h200.toml ({len(fit)}, none per kernel, none on the held-out third): "
          + ", ".join(f"{n.split('.')[-1]} = {v:g}" for n, v, _ in fit))
    rows = []
    whiches = ("launch", "perf_launch") if a.small else ("perf_launch",)
    print(f"{'kernel':30s} {'launch':6s} {'set':4s} {'predicted':>11s} {'measured':>11s} {'error':>7s}  "
          f"{'top stall (model / ncu)':42s} {'top3':>4s} {'TV':>4s} {'L2 hit m/n':>11s} {'time':>6s}")
    for e, which, (tm, secs, _, spec, _) in timed_launches(man["entries"], a.kernels, whiches):
        m = truth(ncu, e["entry"], which, spec.grid) or {}
        d = truth(deep, e["entry"], which, spec.grid) or {}
        meas = m.get("gpc__cycles_elapsed.max")
        err = (tm["cycles"] - meas) / meas if meas else None
        ntop = ncu_top_stall(d) if d else None
        nst = ncu_stalls(d) if d else {}
        dist = stall_distance(tm["stalls"], nst) if nst else None
        l2n = d.get("lts__t_sector_hit_rate.pct")
        l2m = tm["memory"]["l2_hit_rate"]
        row = {"kernel": e["name"], "which": which, "held_out": held_out(e["name"]), "predicted": tm["cycles"],
               "measured": meas, "error": err, "top_stall": tm["top_stall"], "ncu_top_stall": ntop,
               "l2_hit_model": None if l2m is None else 100 * l2m, "l2_hit_ncu": l2n, "seconds": secs,
               "sampled": tm["sampled"], "bound": tm["bound"], "stalls_model": tm["stalls"], "stalls_ncu": nst,
               "top3_shared": None if dist is None else dist[0], "stall_tv": None if dist is None else dist[1]}
        rows.append(row)
        es = f"{100 * err:+6.1f}%" if err is not None else "   n/a"
        l2s = f"{row['l2_hit_model'] or 0:5.1f}/{l2n if l2n is not None else float('nan'):5.1f}"
        ds = f"{dist[0]}/3 {dist[1]:4.2f}" if dist else "  n/a    "
        print(f"{e['name'][:30]:30s} {which[:6]:6s} {'held' if row['held_out'] else 'fit':4s} "
              f"{tm['cycles']:11.0f} {meas or 0:11.0f} {es}  {str(tm['top_stall']):20s} / {str(ntop):19s} "
              f"{ds} {l2s:>11s} {secs:5.1f}s", flush=True)
        if a.mix:
            fmt = lambda st: " ".join(f"{k} {v:.2f}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:5])  # noqa: E731
            print(f"{'':30s}   model: {fmt(tm['stalls'])}\n{'':30s}   ncu:   {fmt(nst)}")
    for which in whiches:
        rs = [r for r in rows if r["which"] == which and r["error"] is not None]
        for label, sel in (("calibration 2/3", [r for r in rs if not r["held_out"]]),
                           ("held-out 1/3", [r for r in rs if r["held_out"]]), ("all", rs)):
            if not sel:
                continue
            sc = scores(sel)
            print(f"{which:11s} {label:16s} n={sc.n:2d}  MAPE {sc.mape:6.1f} %  within +-35 %: {sc.within}/{sc.n}  "
                  f"top stall = ncu: {sc.top}/{sc.n}  L2 hit within 10 pts: {sc.l2ok}/{sc.l2n}  "
                  f"ncu top-3 in model top-3: {100 * sc.top3:.0f} %  stall-mix TV distance: mean {sc.tv:.2f}")
        lad = [next((r for r in rs if r["kernel"] == k), None) for k in LADDER]
        lad = [r for r in lad if r is not None]
        if len(lad) >= 2:
            rho = spearman([r["predicted"] for r in lad], [r["measured"] for r in lad])
            print(f"{which:11s} SGEMM ladder ({len(lad)} kernels) Spearman {rho:.3f}; measured order: "
                  + " < ".join(r["kernel"] for r in sorted(lad, key=lambda r: r["measured"])))
            print(f"{'':11s} predicted order: " + " < ".join(r["kernel"] for r in sorted(lad, key=lambda r: r["predicted"])))
        ts = [r["seconds"] for r in rows if r["which"] == which]
        if ts:
            print(f"{which:11s} prediction time per launch: max {max(ts):.1f} s, total {sum(ts):.1f} s")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
