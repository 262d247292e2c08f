"""Which SMs are the slow ones in the L2/DRAM copies? (per-CTA records of bench/device/sm_share_truth.sh; issue #10)

    python3 bench/sm_share.py [examples/h200/sm_share/sm_share.json] [--model]

Every SM has the same work in these launches (2 or 8 CTAs of a grid-stride loop), yet ncu's
sm__cycles_active max/avg is 1.18 for copy_l2/copy_l2_cg. Per case this prints, measured: the SMs' busy
time (clock64 from the first CTA's entry to the last CTA's exit on that SM) as max / mean and its spread;
how alike the SMs' ranking is from launch to launch (Spearman of two launches' per-SM busy times: near 1 a
property of the SM or its place in the chip, near 0 chance); the same against the case with both buffers
moved (``@+offset``: a property of the SM, not of the addresses, when it stays high); and the mean busy time of
the SMs grouped by smid // 2 (a TPC) into the slowest and fastest groups. For the multi-pass copies, the
duration of each pass (thread 0 of each CTA: clock64 from entry or the previous pass's end to this pass's end;
median over CTAs and launches) and its ratio to the first pass: whether the passes after the first run at L2
speed (the copies whose working set fits the L2) or stay at DRAM speed. With ``--model``, the same per-pass
figures from the timing model (modelled: ``kernlens run --timing h200 --trace`` of the examples/microbench
launch; thread 0's warp in each CTA of the traced SM, the end of the issue of its last store of each pass).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
PATH = Path(ARGS[0]) if ARGS else ROOT / "examples" / "h200" / "sm_share" / "sm_share.json"
MODEL = "--model" in sys.argv


def model_passes(name: str, reps: int) -> list[float]:
    """Per-pass cycles in the timing model's trace of the microbenchmark ``name`` (modelled): for the warp
    holding thread 0 of each CTA on the traced SM (warp 0 and 8 of the SM's 2 CTAs of 8 warps...), the end
    of the issue of its last st.global of each pass, from cycle 0; the median over those warps."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "t.json"
        subprocess.run([sys.executable, "-m", "kernlens.cli", "run", "examples/microbench/ptx/copy.sm_90.ptx",
                        "--launch", f"examples/microbench/manifest.json#{name}", "--timing", "h200",
                        "--trace", str(trace)], cwd=ROOT, check=True, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        ev = json.loads(trace.read_text())["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    stores = defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "issue" and e["name"].startswith("st.global"):
            stores[(e["pid"], e["tid"])].append(e["args"]["start_cycle"] + e["args"]["cycles"])
    per_warp = []
    for key, ends in stores.items():
        if int(names[key].split()[-1]) % 8:          # 8 warps per CTA: thread 0 is in warps 0, 8, 16...
            continue
        ends.sort()
        k = len(ends) // reps
        last = [ends[(r + 1) * k - 1] for r in range(reps)]
        per_warp.append(np.diff([0.0] + last))
    return list(np.median(per_warp, axis=0))


def busy(run: list[list[int]]) -> dict[int, int]:
    """smid -> cycles from its first CTA's entry to its last CTA's exit (clock64 of that SM)."""
    a = np.asarray(run, dtype=np.int64)
    out = {}
    for s in np.unique(a[:, 0]):
        r = a[a[:, 0] == s]
        out[int(s)] = int(r[:, 2].max() - r[:, 1].min())
    return out


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def main() -> int:
    data = json.loads(PATH.read_text())
    per_case = {}
    print(f"{'case':26} {'grid':>5} {'SMs':>4} {'mean':>8} {'max/mean':>8} {'p90/mean':>8} {'min/mean':>8} "
          f"{'launch-to-launch rho':>21} {'start spread':>12}")
    for key, case in data.items():
        runs = [busy(r) for r in case["runs"]]
        sms = sorted(set.intersection(*(set(b) for b in runs)))
        m = np.array([[b[s] for s in sms] for b in runs], dtype=float)   # runs x SMs
        per_case[key] = (sms, m.mean(axis=0))
        ratios = m.max(axis=1) / m.mean(axis=1)
        rhos = [spearman(m[i], m[j]) for i in range(len(m)) for j in range(i + 1, len(m))]
        g0 = np.array([[x[3] for x in r] for r in case["runs"]], dtype=float)
        spread_ns = float(np.median(g0.max(axis=1) - g0.min(axis=1)))
        mean = m.mean()
        print(f"{key:26} {case['grid']:5d} {len(sms):4d} {mean:8.0f} {np.median(ratios):8.3f} "
              f"{np.median(np.percentile(m, 90, axis=1) / m.mean(axis=1)):8.3f} "
              f"{np.median(m.min(axis=1) / m.mean(axis=1)):8.3f} {np.median(rhos):21.2f} {spread_ns:10.0f}ns")
    print()
    for key in data:
        if "@+" not in key:
            continue
        base = key.split("@+")[0]
        sa, a = per_case[base]
        sb, b = per_case[key]
        common = sorted(set(sa) & set(sb))
        ia = [sa.index(s) for s in common]
        ib = [sb.index(s) for s in common]
        print(f"{key}: per-SM mean busy vs {base}: Spearman {spearman(a[ia], b[ib]):.2f}")
    print()
    for key, (sms, mean) in per_case.items():
        tpc = {}
        for s, v in zip(sms, mean):
            tpc.setdefault(s // 2, []).append(v)
        t = sorted((np.mean(v), k) for k, v in tpc.items())
        slow = ", ".join(f"{k}:{v / mean.mean():.2f}" for v, k in t[-6:][::-1])
        fast = ", ".join(f"{k}:{v / mean.mean():.2f}" for v, k in t[:4])
        print(f"{key:26} slowest TPCs (smid//2: busy/mean) {slow}; fastest {fast}")
    passes = {k: c for k, c in data.items() if c.get("pass_runs")}
    if passes:
        print()
        print("per pass (thread 0 of each CTA; cycles, median over CTAs and launches; / pass 0), and the whole CTA")
        print("with the per-pass records against without them (their cost):")
    for key, case in passes.items():
        durs, spans = [], []
        for run in case["pass_runs"]:
            rec = np.asarray(run["rec"], dtype=np.int64)
            ends = np.asarray(run["pass"], dtype=np.int64)                    # CTAs x passes
            starts = np.concatenate([rec[:, 1:2], ends[:, :-1]], axis=1)
            durs.append(ends - starts)
            spans.append(rec[:, 2] - rec[:, 1])
        d = np.median(np.concatenate(durs), axis=0)
        plain = np.median([np.median(np.asarray(r, dtype=np.int64)[:, 2] - np.asarray(r, dtype=np.int64)[:, 1])
                           for r in case["runs"]])
        cells = " ".join(f"{x:7.0f}" + (f" ({x / d[0]:.2f})" if i else "") for i, x in enumerate(d))
        print(f"{key:26} {cells}   CTA {np.median(np.concatenate(spans)):.0f} vs {plain:.0f}")
        if MODEL and "@+" not in key:
            m = model_passes(key, case["reps"])
            cells = " ".join(f"{x:7.0f}" + (f" ({x / m[0]:.2f})" if i else "") for i, x in enumerate(m))
            print(f"{'  model (modelled)':26} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
