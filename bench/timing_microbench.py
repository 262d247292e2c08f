"""Predicted (the H200 timing model, ``result.timing``) vs measured cycles for every microbenchmark.

    .venv/bin/python bench/timing_microbench.py [--perf] [--only NAME,...] [--json OUT.json]

Measured: ``examples/h200/microbench.json`` (Nsight Compute ``gpc__cycles_elapsed.max`` of one launch, SM
clock 1980 MHz; ``bench/device/microbench_truth.sh``). Predicted: ``sim.run_kernel(..., timing="h200")``
on the same launch spec and inputs. Goal: every microbenchmark within 10 %. ``--perf`` adds the
GPU-sized ``*_perf`` launches (run with ``sample="auto"``; minutes without sampling). Without a timing
model on this build the script says so and prints the measured figures alone.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isa  # noqa: E402
import sim  # noqa: E402
from sim import launch  # noqa: E402

MB = ROOT / "examples" / "microbench"
TRUTH = ROOT / "examples" / "h200" / "microbench.json"


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
    truth = json.loads(TRUTH.read_text())["launches"]
    entries = json.loads((MB / "manifest.json").read_text())["entries"]
    only = {s for s in args.only.split(",") if s}
    entries = [e for e in entries if (not only or e["name"] in only) and (args.perf or not e["name"].endswith("_perf"))]
    timing = has_timing()
    if not timing:
        print("no timing model yet: sim.run_kernel has no 'timing' argument on this build; measured figures only")
    print(f"{'microbenchmark':24s} {'measured':>11s} {'predicted':>11s} {'error':>8s} {'bound':>14s} {'cpu s':>6s}")
    rows, errs = [], []
    for e in entries:
        meas = int(truth[e["name"]]["ncu"]["gpc__cycles_elapsed.max"])
        row = {"name": e["name"], "measured_cycles": meas}
        if timing:
            try:
                t, cpu = predict(e, "auto" if e["name"].endswith("_perf") else "all")
            except Exception as exc:  # noqa: BLE001 - a bench reports every failure and goes on
                print(f"{e['name']:24s} {meas:11,d} {'failed':>11s}  {type(exc).__name__}: {exc}")
                row["error"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                continue
            pred = float(t["cycles"])
            err = (pred - meas) / meas
            errs.append(abs(err))
            row.update(predicted_cycles=pred, error=err, bound=t.get("bound"), cpu_s=cpu)
            print(f"{e['name']:24s} {meas:11,d} {pred:11,.0f} {100 * err:+7.1f}% {str(t.get('bound', '')):>14s} {cpu:6.2f}")
        else:
            print(f"{e['name']:24s} {meas:11,d} {'-':>11s}")
        rows.append(row)
    if errs:
        within = sum(x <= 0.10 for x in errs)
        print(f"\n{len(errs)} predicted: MAPE {100 * sum(errs) / len(errs):.1f} %, worst {100 * max(errs):.1f} %, "
              f"{within}/{len(errs)} within 10 % (goal: all)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
