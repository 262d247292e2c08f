"""Run every corpus entry on the PTX simulator and print what it costs and how right it is.

    .venv/bin/python bench/sim_corpus.py [--targets sm_90,sm_80] [--only NAME,...] [--json out.json]

Per entry and target: simulation time, thread-instructions per second, pass/fail against
reference.py (manifest tolerances), problems found, bit-exact fraction against the H200's outputs
(sm_90), and shared-memory load/store wavefronts against Nsight Compute (sm_90, launch size).
Needs ../shared/corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"


def _reference():
    spec = importlib.util.spec_from_file_location("corpus_reference", CORPUS / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ncu():
    data = json.loads((CORPUS / "h200" / "ncu_metrics.json").read_text())
    out = {}
    for launch in data["launches"]:
        if launch["which"] == "launch":
            m = launch["metrics"]
            out[launch["entry"]] = (m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
                                    m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"])
    return out


def run_one(entry, target, ref_mod, ncu) -> dict:
    from isa.ptx.parser import parse
    from sim import launch as L
    from sim.check import bit_exact

    name = entry["name"]
    row = {"name": name, "target": target}
    t0 = time.perf_counter()
    try:
        module = parse((CORPUS / entry["ptx"][target]).read_text(), str(CORPUS / entry["ptx"][target]))
        row["parse_s"] = time.perf_counter() - t0
        spec = L.spec_from_entry(entry, source=str(CORPUS / "manifest.json"))
        ex = L.execute(module, spec, entry["entry"])
    except Exception as exc:  # a bench reports, it does not stop
        row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        return row
    row["seconds"] = ex.seconds
    row["thread_instructions"] = int(ex.stats.get("thread_instructions", 0))
    row["warp_instructions"] = int(ex.stats.get("warp_instructions", 0))
    row["tips"] = row["thread_instructions"] / ex.seconds if ex.seconds > 0 else 0.0
    row["problems"] = len(ex.problems)
    expected = getattr(ref_mod, entry["reference"])({k: (v.copy() if isinstance(v, np.ndarray) else v)
                                                     for k, v in ex.inputs.items()})
    tol = entry["tolerance"]
    per = entry.get("per_output") or tol.get("per_output") or {}
    ok = True
    worst = 0.0
    for out, ref in expected.items():
        t = per.get(out, tol)
        good, _, mrel, _ = ref_mod.compare(ex.outputs[out], ref, t["rtol"], t["atol"])
        ok &= good
        worst = max(worst, mrel)
    row["pass"] = bool(ok)
    row["max_rel"] = worst
    npz = CORPUS / "h200" / "io_sm90" / f"{name}.sm_90.npz"
    if target == "sm_90" and npz.exists():
        dtypes = {a.name: a.dtype for a in spec.buffers}
        with np.load(npz) as z:
            fr = [float(bit_exact(ex.outputs[o], z[f"got_{o}"].reshape(ex.outputs[o].shape), dtypes[o]).mean())
                  for o in ex.outputs]
        row["bit_exact"] = min(fr) if fr else 1.0
    row["wavefronts"] = (int(ex.stats.get("shared_load_wavefronts", 0)),
                         int(ex.stats.get("shared_store_wavefronts", 0)))
    if target == "sm_90" and name in ncu:
        row["ncu_wavefronts"] = ncu[name]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="sm_90,sm_80")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    if not (CORPUS / "manifest.json").exists():
        print(f"no corpus at {CORPUS}")
        return 2
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    only = {s for s in args.only.split(",") if s}
    ref_mod, ncu = _reference(), _ncu()
    rows = []
    head = (f"{'entry':<30} {'tgt':<6} {'sim s':>7} {'thr-inst':>10} {'M/s':>6} {'ok':<4} {'prob':>4} "
            f"{'exact':>7} {'wf ld/st sim':>15} {'ncu':>15}")
    print(head)
    print("-" * len(head))
    t_all = time.perf_counter()
    for target in args.targets.split(","):
        for e in manifest["entries"]:
            if target not in e["ptx"] or (only and e["name"] not in only):
                continue
            r = run_one(e, target, ref_mod, ncu)
            rows.append(r)
            if "error" in r:
                print(f"{r['name']:<30} {target:<6} ERROR {r['error']}")
                continue
            exact = f"{100 * r['bit_exact']:.2f}%" if "bit_exact" in r else "-"
            wf = "{}/{}".format(*r["wavefronts"])
            nc = "{}/{}".format(*r["ncu_wavefronts"]) if "ncu_wavefronts" in r else "-"
            print(f"{r['name']:<30} {target:<6} {r['seconds']:>7.2f} {r['thread_instructions']:>10} "
                  f"{r['tips'] / 1e6:>6.2f} {'PASS' if r['pass'] else 'FAIL':<4} {r['problems']:>4} "
                  f"{exact:>7} {wf:>15} {nc:>15}", flush=True)
    ok = [r for r in rows if "error" not in r]
    total_ti = sum(r["thread_instructions"] for r in ok)
    total_s = sum(r["seconds"] for r in ok)
    print("-" * len(head))
    print(f"{len(rows)} runs: {sum(r.get('pass', False) for r in ok)} pass, "
          f"{sum(1 for r in ok if not r['pass'])} fail, {len(rows) - len(ok)} errors, "
          f"{sum(r['problems'] > 0 for r in ok)} with problems; "
          f"{total_ti} thread-instructions in {total_s:.1f} s simulated "
          f"({total_ti / total_s / 1e6 if total_s else 0:.2f} M/s overall), wall {time.perf_counter() - t_all:.1f} s")
    wf_rows = [r for r in ok if "ncu_wavefronts" in r]
    match = [r for r in wf_rows if all(abs(s - n) <= 0.02 * n for s, n in zip(r["wavefronts"], r["ncu_wavefronts"]))]
    print(f"wavefronts within 2 % of ncu: {len(match)}/{len(wf_rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
