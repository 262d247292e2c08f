"""Predicted vs measured H200 cycles for the kernels the timing model has never seen (``examples/unseen``).

    PYTHONPATH=. python bench/timing_unseen.py                # every perf launch, then the SGEMM ladder
    PYTHONPATH=. python bench/timing_unseen.py --small        # the small launches too
    PYTHONPATH=. python bench/timing_unseen.py --no-ladder    # skip the corpus ladder (6 corpus 2048^3 runs)
    PYTHONPATH=. python bench/timing_unseen.py gemv_f32 --json out.json
    PYTHONPATH=. python bench/timing_unseen.py --compare rows.json  # rows of bench/timing_h200.py --json beside

The rule: these 11 kernels were written for issue #10's check "kernels the project has never seen" and
are NEVER used for fitting. No number in ``sim/machines/h200.toml`` may be set or changed from them or
from their truth (``tests/sim/test_unseen_h200.py`` checks that the model's code and machine file do not
read them); a model change that moves their figures is reported, not tuned against.

Truth: ``examples/h200/unseen/unseen.json`` (Nsight Compute ``gpc__cycles_elapsed.max``, stall reasons,
L2 hit rate, DRAM bytes, shared-memory wavefronts; the corpus's metric set; one H200, 2026-12-03,
``bench/device/unseen_truth.sh``). Predicted: ``sim.launch.execute(..., timing="h200")`` (modelled).
Prints per launch: predicted and measured cycles, error, modelled vs ncu top stall, L2 hit rate, DRAM
MiB read and shared wavefronts (model / ncu); then MAPE and the share within +-35 %; the SGEMM ladder's
Spearman rank correlation without and with the two new rungs (coalesced, 2D register blocking), the
corpus rungs' truth from ../shared/corpus/h200.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from corpus_runs import CORPUS, scores, timed_launches
from timing_h200 import LADDER, ncu_top_stall, spearman

ROOT = Path(__file__).resolve().parents[1]
UNSEEN = ROOT / "examples" / "unseen"
TRUTH = ROOT / "examples" / "h200" / "unseen" / "unseen.json"
NEW_RUNGS = ["sgemm_coalesced", "sgemm_regblock2d"]
RULE = ("unseen set: never used for fitting (no h200.toml number comes from it); figures as measured, "
        "errors = (predicted - measured) / measured")


def truth_of(table: list[dict], kernel: str, which: str, grid) -> dict | None:
    return next((x["metrics"] for x in table if x["kernel"] == kernel and x["which"] == which
                 and list(x["grid"]) == list(grid) and "metrics" in x), None)


def row_of(e: dict, which: str, tm: dict, secs: float, spec, m: dict, d: dict, unseen: bool) -> dict:
    meas = m.get("gpc__cycles_elapsed.max")
    mem = tm.get("memory", {})
    l2m = mem.get("l2_hit_rate")
    # shared-memory wavefronts of loads, stores and atomics (ncu's ..._mem_shared.sum also counts
    # wavefronts of no shared access: 262,144 for sgemm_coalesced, which has none)
    ops = [f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{o}.sum" for o in ("ld", "st", "atom")]
    wf = sum(m.get(k, 0) for k in ops) if ops[0] in m else None
    return {"kernel": e["name"], "which": which, "unseen": unseen, "predicted": tm["cycles"], "measured": meas,
            "error": (tm["cycles"] - meas) / meas if meas else None, "top_stall": tm.get("top_stall"),
            "ncu_top_stall": ncu_top_stall(d) if d else None, "l2_hit_model": None if l2m is None else 100 * l2m,
            "l2_hit_ncu": d.get("lts__t_sector_hit_rate.pct"),
            "l1_hit_model": None if mem.get("l1_hit_rate") is None else 100 * mem["l1_hit_rate"],
            "l1_hit_ncu": d.get("l1tex__t_sector_hit_rate.pct"), "dram_read_model": mem.get("dram_bytes_read"),
            "dram_read_ncu": m.get("dram__bytes_read.sum"), "shared_wavefronts_model": mem.get("shared_wavefronts"),
            "shared_wavefronts_ncu": wf, "bound": tm.get("bound"), "sampled": tm.get("sampled"), "seconds": secs}


def _mib(x) -> str:
    return "   -" if x is None else f"{x / 2**20:6.1f}"


def _k(x) -> str:
    return "   -" if x is None else f"{x / 1e3:7.1f}k"


def print_row(r: dict) -> None:
    es = f"{100 * r['error']:+6.1f}%" if r["error"] is not None else "   n/a"
    l2n = r["l2_hit_ncu"]
    l2s = f"{r['l2_hit_model'] if r['l2_hit_model'] is not None else float('nan'):5.1f}/" \
          f"{l2n if l2n is not None else float('nan'):5.1f}"
    print(f"{r['kernel'][:20]:20s} {r['which'][:6]:6s} {r['predicted']:11.0f} {r['measured'] or 0:11.0f} {es}  "
          f"{str(r['top_stall']):16s}/ {str(r['ncu_top_stall']):16s} {l2s:>11s} "
          f"{_mib(r['dram_read_model'])}/{_mib(r['dram_read_ncu'])} "
          f"{_k(r['shared_wavefronts_model'])}/{_k(r['shared_wavefronts_ncu'])} {r['seconds']:5.1f}s", flush=True)


def summary(rows: list[dict], label: str) -> None:
    sc = scores(rows)
    if sc is None:
        return
    print(f"{label:24s} n={sc.n:2d}  MAPE {sc.mape:6.1f} %  within +-35 %: {sc.within}/{sc.n}  "
          f"top stall = ncu: {sc.top}/{sc.n}  L2 hit within 10 pts: {sc.l2ok}/{sc.l2n}  "
          f"worst {sc.worst['kernel']} {100 * sc.worst['error']:+.1f} %")


def ladder(unseen_rows: list[dict], kernels) -> list[dict]:
    """The corpus ladder's perf launches (predicted now, measured from the corpus's ncu truth)."""
    man = json.loads((CORPUS / "manifest.json").read_text())
    ncu = json.loads((CORPUS / "h200" / "ncu_metrics.json").read_text())["launches"]
    deep = json.loads((CORPUS / "h200" / "ncu_deep.json").read_text())["launches"]
    ents = [e for e in man["entries"] if e["name"] in LADDER]
    rows = []
    for e, which, (tm, secs, _, spec, _) in timed_launches(ents, kernels, ("perf_launch",)):
        r = row_of(e, which, tm, secs, spec, truth_of(ncu, e["entry"], which, spec.grid) or {},
                   truth_of(deep, e["entry"], which, spec.grid) or {}, unseen=False)
        print_row(r)
        rows.append(r)
    return rows


def print_ladder(corpus_rows: list[dict], new_rows: list[dict]) -> None:
    for label, lad in (("corpus ladder (seen)", corpus_rows), ("ladder + unseen rungs", corpus_rows + new_rows)):
        lad = [r for r in lad if r["measured"]]
        if len(lad) < 2:
            continue
        rho = spearman([r["predicted"] for r in lad], [r["measured"] for r in lad])
        print(f"{label:22s} ({len(lad)} kernels) Spearman {rho:.3f} (goal >= 0.95)")
        print(f"{'':22s} measured order:  " + " < ".join(r["kernel"] for r in sorted(lad, key=lambda r: r["measured"])))
        print(f"{'':22s} predicted order: " + " < ".join(r["kernel"] for r in sorted(lad, key=lambda r: r["predicted"])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--small", action="store_true", help="also the small launches")
    ap.add_argument("--no-ladder", action="store_true", help="skip the corpus SGEMM ladder")
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument("--compare", metavar="ROWS.json",
                    help="rows of `bench/timing_h200.py --json`: print its calibration and held-out thirds beside the unseen set")
    a = ap.parse_args(argv)
    print(RULE)
    man = json.loads((UNSEEN / "manifest.json").read_text())
    truth = json.loads(TRUTH.read_text())["launches"]
    whiches = ("launch", "perf_launch") if a.small else ("perf_launch",)
    print(f"{'kernel':20s} {'launch':6s} {'predicted':>11s} {'measured':>11s} {'error':>7s}  "
          f"{'top stall model / ncu':34s} {'L2 hit m/n':>11s} {'DRAM MiB m/n':>13s} {'smem wavefr m/n':>17s} {'time':>6s}")
    rows = []
    for e, which, (tm, secs, _, spec, _) in timed_launches(man["entries"], a.kernels, whiches, base=UNSEEN):
        m = truth_of(truth, e["entry"], which, spec.grid) or {}
        r = row_of(e, which, tm, secs, spec, m, m, unseen=True)
        print_row(r)
        rows.append(r)
    for which in whiches:
        summary([r for r in rows if r["which"] == which], f"unseen {which}")
    if a.compare:
        seen = [r for r in json.loads(Path(a.compare).read_text()) if r["which"] in whiches]
        print(f"beside the corpus ({a.compare}, bench/timing_h200.py on the same model):")
        for which in whiches:
            summary([r for r in seen if r["which"] == which and not r["held_out"]], f"corpus fit 2/3 {which[:6]}")
            summary([r for r in seen if r["which"] == which and r["held_out"]], f"corpus held 1/3 {which[:6]}")
    ts = [r["seconds"] for r in rows]
    if ts:
        print(f"prediction time (wall, this machine, loaded): max {max(ts):.1f} s, total {sum(ts):.1f} s")
    lad = []
    if not a.no_ladder and "perf_launch" in whiches and (CORPUS / "manifest.json").exists():
        print("SGEMM ladder, perf launches (2048^3); corpus rungs measured in ../shared/corpus/h200, new rungs in "
              "examples/h200/unseen (the same H200 model, another day):")
        lad = ladder(rows, None)
        print_ladder(lad, [r for r in rows if r["kernel"] in NEW_RUNGS and r["which"] == "perf_launch"])
    if a.json:
        Path(a.json).write_text(json.dumps(rows + lad, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
