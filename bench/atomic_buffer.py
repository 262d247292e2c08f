"""Same-address atomics on one buffer, two kernels, two ways of timing (issue #10): the measured speed-ups
over one hot line of bench/device/atomic_buffer_truth.sh's run, against the L2 atomic model's.

    .venv/bin/python bench/atomic_buffer.py [examples/h200/atomic_buffer]

The run (its README) launched the microbenchmark's ``atomic_spacing`` (examples/microbench, as measured in
bench/timing_microbench.py's atomic_spacing_* rows) and ``hot_lines`` (the kernel of
examples/h200/atomic_slice, which the model's line homing was read from) on the same 2 MiB-aligned buffer:
n lines s lines apart from a base line, each 132 CTAs x 256 threads x 4 ``atomicAdd(1.0f)``, warp w to line
w % n. Per (base, n, s) and kernel this prints the speed-up over one line at the same base, measured three
ways: CUDA events (median of 21, less the launch's own 7 us as in bench/atomic_slice_check.py), Nsight
Compute's ``gpc__cycles_elapsed.max`` with its cache flush before each launch (``--cache-control all``, how
the microbenchmarks' truth was taken) and without (``none``); and the model's (modelled:
``sim.timing.h200.atomic_serial_cycles`` on the lines' addresses, bench/atomic_slice_check.py's
``model_cycles``). A gap between the kernels at one base is the kernel's; between bases, where the lines are
homed; between the columns of one kernel, the method's.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from atomic_slice_check import OVERHEAD_US, model_cycles  # noqa: E402
from sim.timing.sm import load_params  # noqa: E402

DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples" / "h200" / "atomic_buffer"


def ncu_cycles(path: Path) -> list[float]:
    """``gpc__cycles_elapsed.max`` of each profiled launch, in launch order."""
    text = path.read_text().splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith('"ID"'))
    per_id: dict[int, float] = {}
    for row in csv.DictReader(text[start:]):
        if row["Metric Name"] == "gpc__cycles_elapsed.max":
            per_id[int(row["ID"])] = float(row["Metric Value"].replace(",", ""))
    return [per_id[i] for i in sorted(per_id)]


def main() -> int:
    rows = json.loads((DIR / "atomic_buffer.json").read_text())["rows"]
    ncu = {cc: ncu_cycles(DIR / f"ncu_{cc}.csv") for cc in ("all", "none") if (DIR / f"ncu_{cc}.csv").exists()}
    for cc, cyc in ncu.items():
        if len(cyc) != len(rows):
            print(f"ncu_{cc}.csv: {len(cyc)} launches for {len(rows)} rows: left out")
    ncu = {cc: cyc for cc, cyc in ncu.items() if len(cyc) == len(rows)}
    P = load_params("h200")
    lat, hier = dict(P.lat), dict(P.hier)
    # (kernel, base) -> one line's figures
    one: dict[tuple, dict] = {}
    table: dict[tuple, dict] = defaultdict(dict)
    for i, r in enumerate(rows):
        key = (r["kernel"], r["base_line"])
        fig = {"us": r["us"], **{cc: cyc[i] for cc, cyc in ncu.items()}}
        if r["n"] == 1:
            one[key] = fig
        table[(r["base_line"], r["n"], r["stride_lines"])][r["kernel"]] = fig
    memo: dict = {}

    def model(base: int, n: int, s: int) -> float:
        lines = [base + k * s for k in range(n)]
        if tuple(lines) not in memo:
            memo[tuple(lines)] = model_cycles(lines, lat, hier)
        return memo[tuple(lines)]

    cols = ["events", *(f"ncu {cc}" for cc in ncu)]
    head = " ".join(f"{k + ' ' + c:>16}" for k in ("spacing", "hot_lines") for c in cols)
    print("speed-up over one line at the same base (measured; model: modelled)")
    print(f"{'base':>6} {'n':>3} {'s':>3}  {head}  {'model':>6}")
    for (base, n, s), by_kernel in sorted(table.items()):
        if n == 1:
            continue
        cells = []
        for k in ("atomic_spacing", "hot_lines"):
            f, o = by_kernel.get(k), one.get((k, base))
            if f is None or o is None:
                cells += ["-"] * len(cols)
                continue
            cells.append(f"{(o['us'] - OVERHEAD_US) / (f['us'] - OVERHEAD_US):.2f}")
            cells += [f"{o[cc] / f[cc]:.2f}" for cc in ncu]
        m = model(base, 1, 1) / model(base, n, s)
        print(f"{base:6d} {n:3d} {s:3d}  " + " ".join(f"{c:>16}" for c in cells) + f"  {m:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
