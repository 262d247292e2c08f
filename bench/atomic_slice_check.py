"""The L2 atomic model (sim.timing.h200.atomic_serial_cycles with its sub-partition windows) against the
independent hot-line run examples/h200/atomic_slice/hot_lines.json (CUDA events on the H200; issue #10).

    .venv/bin/python bench/atomic_slice_check.py [--groups] [--overhead-us 7] [--json OUT.json]

Every launch there is 132 CTAs x 256 threads, each warp 4 x 32 lanes of ``atomicAdd(1.0f)`` to word 0 of
line ``lines[w % n]`` (128-byte lines of a 2 MiB-aligned buffer). The model's time of the atomics of a
launch is compared as a speed-up over one hot line, the measured one as (one line - 7 us) / (this - 7 us)
(7 us: the launch's own time beside the atomics, the README's ratios); the error of a launch is that of
its atomics' time, (one line - 7 us) / the model's speed-up against its own time less 7 us. Printed: MAPE
and within 10 % for the pairs (2 lines) and the groups of 4-32 lines (``--groups``: the groups only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.timing import h200  # noqa: E402
from sim.timing.sm import load_params  # noqa: E402

DATA = ROOT / "examples" / "h200" / "atomic_slice" / "hot_lines.json"
OVERHEAD_US = 7.0


def model_cycles(lines, lat, hier) -> float:
    """The model's time of the atomics of one hot_lines launch (132 CTAs x 8 warps, one CTA per SM)."""
    n = len(lines)
    seq, counts = {}, {}
    for w in range(132 * 8):
        sector = lines[w % n] * 4
        seq[w] = [((sector, 32),)] * 4
        c = counts.setdefault(sector, [0, 0, True, set()])
        c[0] += 128
    return h200.atomic_serial_cycles(counts, 1.0, lat, hier, h200.atomic_windows(seq, 132, 132, 1, 8))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--groups", action="store_true", help="only the launches of 3 or more lines")
    ap.add_argument("--overhead-us", type=float, default=OVERHEAD_US, help="a launch's time beside its atomics")
    args = ap.parse_args()
    P = load_params("h200")
    check(dict(P.lat), dict(P.hier), args.groups, args.json, args.overhead_us)
    return 0


def check(lat: dict, hier: dict, groups_only: bool = False, json_out: str | None = None,
          overhead_us: float = OVERHEAD_US) -> dict:
    """Print and return {kind: [absolute errors]} of the model (``lat``, ``hier``) on hot_lines."""
    rows = json.loads(DATA.read_text())["rows"]
    one_us = [r["us"] for r in rows if r["lines"] == [0]]
    one_us = sorted(one_us)[len(one_us) // 2]
    one = model_cycles([0], lat, hier)
    memo: dict = {}
    out, groups = [], {}
    for r in rows:
        n = len(r["lines"])
        if n < 2 or (groups_only and n < 3):
            continue
        key = tuple(r["lines"])
        if key not in memo:
            memo[key] = model_cycles(list(key), lat, hier)
        speedup = one / memo[key]
        pred = overhead_us + (one_us - overhead_us) / speedup
        err = (pred - r["us"]) / (r["us"] - overhead_us)
        kind = "pairs" if n == 2 else "groups"
        groups.setdefault(kind, []).append(abs(err))
        groups.setdefault(f"n = {n}", []).append(abs(err))
        out.append({"lines": r["lines"], "us": r["us"], "predicted_us": pred, "speedup": speedup,
                    "measured_speedup": (one_us - overhead_us) / (r["us"] - overhead_us), "error": err})
    for k, xs in groups.items():
        print(f"{k:8s} {len(xs):5d} launches: MAPE {100 * sum(xs) / len(xs):5.2f} %, "
              f"{sum(x <= 0.10 for x in xs)}/{len(xs)} within 10 %")
    if json_out:
        Path(json_out).write_text(json.dumps(out, indent=1))
    return groups


if __name__ == "__main__":
    sys.exit(main())
