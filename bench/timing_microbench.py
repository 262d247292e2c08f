"""Predicted (the H200 timing model, ``result.timing``) vs measured cycles for every microbenchmark.

    .venv/bin/python bench/timing_microbench.py [--perf] [--only NAME,...] [--json OUT.json]

Measured: ``examples/h200/microbench.json`` (Nsight Compute ``gpc__cycles_elapsed.max`` of one launch, SM
clock 1980 MHz; ``bench/device/microbench_truth.sh``) and ``examples/h200/l2_sweep/microbench.json`` (the
L2/DRAM sweep and the independent HFMA2/atomic variants, 2026-12-03; ``bench/device/l2_sweep_truth.sh``) and
``examples/h200/mem_sweep/microbench.json`` (read/write/copy at other occupancies, strides and footprints;
``bench/device/mem_sweep_truth.sh``) and ``examples/h200/pipe_atomic/microbench.json`` (HFMA2/FFMA mixes
at other warp counts and ratios, a conversion chain, the atomic address-count x spacing sweep, 2026-12-04;
``bench/device/pipe_atomic_truth.sh``).
Predicted: ``sim.run_kernel(..., timing="h200")`` on the same launch spec and inputs. Goal: every
microbenchmark within 10 %. ``--perf`` adds the GPU-sized ``*_perf`` launches (run with
``sample="auto"``; minutes without sampling); an entry whose manifest record says ``"sample": "auto"``
is sampled too. Without a timing model on this build the script says so and prints the measured figures
alone.

Column ``use``: ``fit`` marks a launch a constant of ``sim/machines/h200.toml`` was derived from (named
in ``FIT``; its error says how well the model reproduces its own calibration, it is no prediction),
``check`` every other launch (an independent test of the model). The summary gives both.

Truth is the median of repeated launches where there are repeats: ``examples/h200/repeat`` holds 21 ncu
launches of every entry (``bench/device/repeat_truth.sh``). One launch is no 10 % truth for short or
contended launches (strided_load_32 recorded 25,559 cycles once, median of 21 22,486, range 22,160-22,985;
atomic_spacing_4x32 361,574 once, 273,754-308,282 repeated), so ``measured`` and ``error`` (and the
summary and the goal) are the median's; ``one launch`` and ``vs one`` print the single launch of the
microbench.json files beside it, and ``range`` the repeats' spread ((max - min) / median). An entry without
repeats falls back to its single launch, marked ``1x``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isa  # noqa: E402
import sim  # noqa: E402
from sim import launch  # noqa: E402

MB = ROOT / "examples" / "microbench"
TRUTHS = (ROOT / "examples" / "h200" / "microbench.json", ROOT / "examples" / "h200" / "l2_sweep" / "microbench.json",
          ROOT / "examples" / "h200" / "mem_sweep" / "microbench.json",
          ROOT / "examples" / "h200" / "pipe_atomic" / "microbench.json")
#: entry -> gpc__cycles_elapsed.max of repeated ncu launches (README.md beside it)
REPEATS = ROOT / "examples" / "h200" / "repeat" / "cycles.json"

# launches that sim/machines/h200.toml's constants were fitted on (the key there says how)
FIT = {
    "hfma2_dep": "latency_cycles.hfma2",
    "hfma2_indep": "pipes.fp16",
    "atomic_same": "latency_cycles.atomic_same_address",
    "atomic_spacing_4x32": "latency_cycles.atomic_unit_issue (the median of its 8 repeated launches)",
    "atomic_spacing_8x128": "latency_cycles.atomic_slice_issue (the median of its 21 repeated launches)",
    "atomic_spacing_16x4096": "hierarchy.l2_atomic_window (its recorded launch; not its median, see h200.toml)",
    "strided_load_32": "hierarchy.dram_granule, dram_line_overhead",
    "write_f4_16m": "hierarchy.l2_write_line_cycles, l2_write_sector_cycles, l2_write_partial_cycles",
    "write_strided_32": "hierarchy.l2_write_line_cycles, l2_write_sector_cycles, l2_write_partial_cycles",
    "write_strided_16": "hierarchy.l2_write_line_cycles, l2_write_sector_cycles, l2_write_partial_cycles",
    "read_cg_16m": "hierarchy.l2_reuse_full, l2_reuse_none",
    "read_cg_48m": "hierarchy.l2_reuse_full, l2_reuse_none",
    "write_f4_48m": "hierarchy.l2_reuse_full, l2_reuse_none",
    "copy_cg_8m": "hierarchy.l2_reuse_full, l2_reuse_none",
    "copy_cg_24m": "hierarchy.l2_reuse_full, l2_reuse_none",
    "read_cg_4m_w32": "hierarchy.l2_read_queue",
    "read_cg_4m": "hierarchy.l2_read_queue",
    "copy_dram_perf": "hierarchy.dram_rw_turnaround",
}


def has_timing() -> bool:
    return "timing" in inspect.signature(sim.run_kernel).parameters


def predict(entry: dict, sample: str):
    spec = launch.load_launch(f"{MB / 'manifest.json'}#{entry['name']}")
    module = isa.load(MB / entry["ptx"]["sm_90"])
    fn = launch.kernel_function(module, spec, None)
    decoded = launch.build_inputs(spec, spec.seed_for(fn.name))
    device = launch.device_buffers(spec, decoded)
    t0 = time.process_time()
    res = sim.run_kernel(module, fn.name, spec.grid, spec.block, launch.kernel_args(spec, device, decoded),
                         spec.shared_bytes(module.target), timing="h200", sample=sample)
    return res.timing, time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perf", action="store_true", help="also the *_perf launches (sampled)")
    ap.add_argument("--only", default="", help="comma-separated entry names")
    ap.add_argument("--json", metavar="OUT", help="write the rows as JSON")
    args = ap.parse_args()
    truth = {}
    for path in TRUTHS:
        if path.exists():
            truth.update(json.loads(path.read_text())["launches"])
    entries = json.loads((MB / "manifest.json").read_text())["entries"]
    only = {s for s in args.only.split(",") if s}
    entries = [e for e in entries if (not only or e["name"] in only) and (args.perf or not e["name"].endswith("_perf"))]
    timing = has_timing()
    if not timing:
        print("no timing model yet: sim.run_kernel has no 'timing' argument on this build; measured figures only")
    print(f"{'microbenchmark':24s} {'use':5s} {'measured':>11s} {'predicted':>11s} {'error':>8s} {'bound':>14s} {'cpu s':>6s}"
          f" {'one launch':>11s} {'vs one':>7s} {'range':>6s}")
    rows, errs, errs_one = [], {"fit": [], "check": []}, []
    repeats = json.loads(REPEATS.read_text()) if REPEATS.exists() else {}
    for e in entries:
        if e["name"] not in truth:
            print(f"{e['name']:24s} no measured truth in {', '.join(str(p.relative_to(ROOT)) for p in TRUTHS)}")
            continue
        one = int(truth[e["name"]]["ncu"]["gpc__cycles_elapsed.max"])
        r = sorted(repeats.get(e["name"], []))
        meas = statistics.median(r) if r else one
        use = "fit" if e["name"] in FIT else "check"
        row = {"name": e["name"], "measured_cycles": meas, "one_launch_cycles": one, "repeats": r, "use": use,
               "fitted": FIT.get(e["name"])}
        spread = f"{100 * (r[-1] - r[0]) / meas:5.1f}%" if r else "    1x"
        if timing:
            try:
                t, cpu = predict(e, "auto" if e["name"].endswith("_perf") else e.get("sample", "all"))
            except Exception as exc:  # noqa: BLE001 - a bench reports every failure and goes on
                print(f"{e['name']:24s} {use:5s} {meas:11,.0f} {'failed':>11s}  {type(exc).__name__}: {exc}")
                row["error"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                continue
            pred = float(t["cycles"])
            err = (pred - meas) / meas
            errs[use].append(abs(err))
            errs_one.append(abs(pred - one) / one)
            row.update(predicted_cycles=pred, error=err, error_vs_one_launch=(pred - one) / one, bound=t.get("bound"),
                       cpu_s=cpu)
            print(f"{e['name']:24s} {use:5s} {meas:11,.0f} {pred:11,.0f} {100 * err:+7.1f}% {str(t.get('bound', '')):>14s} "
                  f"{cpu:6.2f} {one:11,d} {100 * (pred - one) / one:+6.1f}% {spread}", flush=True)
        else:
            print(f"{e['name']:24s} {use:5s} {meas:11,.0f} {'-':>11s}")
        rows.append(row)
    print()
    n_rep = sum(1 for r in rows if r["repeats"])
    print(f"measured = the median of {len(next(iter(repeats.values()), []))} launches ({REPEATS.relative_to(ROOT)}) for "
          f"{n_rep} of {len(rows)} rows, one launch for the rest")
    for label, xs in (("check (independent)", errs["check"]), ("fit (calibration)", errs["fit"]),
                      ("all", errs["check"] + errs["fit"]), ("all, vs one launch", errs_one)):
        if xs:
            within = sum(x <= 0.10 for x in xs)
            goal = "" if label.endswith("one launch") else " (goal: all)"
            print(f"{label:20s} {len(xs):2d} predicted: MAPE {100 * sum(xs) / len(xs):5.1f} %, worst {100 * max(xs):5.1f} %, "
                  f"{within}/{len(xs)} within 10 %{goal}")
    if errs["fit"]:
        print("fit rows: " + ", ".join(f"{k} ({v})" for k, v in FIT.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
