"""Hardware truth for the never-seen kernels (``examples/unseen``), on a machine with an NVIDIA GPU.

    python3 bench/device/unseen_truth.py time OUTDIR     # outputs + CUDA-event times -> OUTDIR/events.json, unseen.npz
    python3 bench/device/unseen_truth.py once            # every launch once (small, then perf), for ncu
    python3 bench/device/unseen_truth.py merge OUTDIR    # props + events + ncu_raw.csv -> OUTDIR/unseen.json
    python3 bench/device/unseen_truth.py metrics         # the ncu metric list (the corpus's two sets), comma-separated

``--bench DIR`` points at another copy of ``examples/unseen`` (the device run carries one). Each entry has
a small ``launch`` (checked against ``reference.py``; its inputs and the GPU's outputs saved bit for bit,
as device storage, in ``unseen.npz`` as ``<name>.in_<buf>`` / ``<name>.got_<buf>``) and a ``perf_launch``
(timed and profiled). Inputs follow the seed rule kernlens uses (``sim/launch.py``: crc32 of the entry
name, + 7919 for the perf launch), so a simulator run of the same entry sees the same bytes.
The ncu metric set is the union of the corpus's ``h200/ncu_metrics.json`` and ``h200/ncu_deep.json``
``metrics_used`` (:data:`CORPUS_METRICS`; ``tests/sim/timing/test_unseen.py`` checks it still is).
Device properties, ncu CSV parsing and launching are ``microbench_truth.py``'s. Shell side:
``bench/device/unseen_truth.sh``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
BENCH = HERE.parents[1] / "examples" / "unseen"
for _i, _a in enumerate(sys.argv):
    if _a == "--bench":
        BENCH = Path(sys.argv[_i + 1]).resolve()
        del sys.argv[_i:_i + 2]
        break

import microbench_truth as mt  # noqa: E402  (props, fire, parse_ncu, the sim/launch.py loader)

launch = mt.launch

#: ``metrics_used`` of ../shared/corpus/h200/ncu_metrics.json, then ncu_deep.json's (in that order, deduplicated)
NCU_METRICS_BASIC = [
    "smsp__inst_executed.sum", "sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed_pipe_tensor.sum",
    "smsp__inst_executed_pipe_tensor_op_hmma.sum", "smsp__inst_executed_pipe_tensor_op_imma.sum",
    "smsp__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.sum", "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum", "smsp__sass_thread_inst_executed.sum", "gpu__time_duration.sum",
    "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
]
NCU_METRICS_DEEP = [
    "gpc__cycles_elapsed.max", "sm__cycles_elapsed.avg", "sm__cycles_active.avg", "smsp__cycles_active.avg",
    "gpu__time_duration.sum", "smsp__inst_executed.sum", "smsp__inst_executed.avg.per_cycle_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks", "launch__waves_per_multiprocessor", "launch__registers_per_thread",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait", "gmma")] + [
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_lsu.sum",
    "sm__inst_executed_pipe_xu.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
]
CORPUS_METRICS = list(dict.fromkeys(NCU_METRICS_BASIC + NCU_METRICS_DEEP))
WHICH = ("launch", "perf_launch")
CACHE = Path("/tmp/unseen_inputs")   # the perf launches' device inputs, between the ``time`` and ``once`` processes


def entries() -> list[dict]:
    return mt.entries(BENCH)


def reference_module():
    return mt.reference_module(BENCH, "unseen_reference")


_MODULES: dict = {}


def prepare(e: dict, which: str):
    """(spec, decoded inputs, device storage, cupy arrays, kernel args, function) of one launch."""
    import cupy as cp

    ent = dict(e, launch=e[which])
    spec = launch.spec_from_entry(ent, source=str(BENCH / "manifest.json"), base=BENCH)
    cache = CACHE / f"{e['name']}.{which}.npz"
    if which == "perf_launch" and cache.exists():          # built by ``time``, reused by ``once`` (same bytes)
        with np.load(cache) as z:
            dev = {k: z[k] for k in z.files}
        decoded = None
    else:
        decoded = launch.build_inputs(spec, seed=launch.entry_seed(e["name"], which == "perf_launch"))
        dev = launch.device_buffers(spec, decoded)
        if which == "perf_launch":
            CACHE.mkdir(parents=True, exist_ok=True)
            np.savez(cache, **dev)
    gpu = {k: cp.asarray(v) for k, v in dev.items()}
    args = [gpu[a.name] if isinstance(a, launch.BufferArg) else a.numpy() for a in spec.args]
    path = str(BENCH / e["ptx"]["sm_90"])
    if path not in _MODULES:
        _MODULES[path] = cp.RawModule(path=path)
    return spec, decoded, dev, gpu, args, _MODULES[path].get_function(e["entry"])


def _compare(got: np.ndarray, want: np.ndarray, tol: dict) -> dict:
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    err = np.abs(g - w)
    bad = int((err > tol.get("atol", 0) + tol.get("rtol", 0) * np.abs(w)).sum())
    return {"ok": bad == 0, "n_bad": bad, "n": int(w.size), "max_abs_err": float(err.max()) if err.size else 0.0}


def cmd_time(out: Path, reps: int = 20) -> None:
    """Small launch: outputs against the reference, saved bit for bit; both launches: median of ``reps``
    event-timed launches after 3 warm-ups."""
    import cupy as cp

    ref = reference_module()
    res, blob = {}, {}
    for e in entries():
        for which in WHICH:
            t0 = time.time()
            name = e["name"] if which == "launch" else e["name"] + ".perf"
            try:
                spec, decoded, dev, gpu, args, fn = prepare(e, which)
                mt.fire(spec, fn, args)
                cp.cuda.runtime.deviceSynchronize()
                r = {"which": which, "grid": list(spec.grid), "block": list(spec.block), "regs": int(fn.num_regs),
                     "static_shared": int(fn.shared_size_bytes)}
                if which == "launch":
                    outs = {a.name: gpu[a.name].get() for a in spec.outputs}
                    want = getattr(ref, e["reference"])(dict(decoded))
                    r["outputs"] = {k: _compare(launch.decode(outs[k], a.dtype), want[k], e.get("tolerance", {}))
                                    for a in spec.outputs for k in [a.name]}
                    r["check"] = "pass" if all(o["ok"] for o in r["outputs"].values()) else "FAIL"
                    for k, v in dev.items():
                        blob[f"{e['name']}.in_{k}"] = v
                    for k, v in outs.items():
                        blob[f"{e['name']}.got_{k}"] = v
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                for _ in range(3):
                    mt.fire(spec, fn, args)
                times = []
                for _ in range(reps):
                    start.record()
                    mt.fire(spec, fn, args)
                    stop.record()
                    stop.synchronize()
                    times.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)  # microseconds
                r.update(event_us_median=float(np.median(times)), event_us_min=float(np.min(times)),
                         event_us_max=float(np.max(times)))
                del gpu, args, dev
            except Exception as exc:  # noqa: BLE001 - one bad kernel must not stop the others
                r = {"which": which, "check": "ERROR", "error": f"{type(exc).__name__}: {exc}"}
            cp.get_default_memory_pool().free_all_blocks()
            res[name] = r
            print(name, r.get("check", "-"), f"{r.get('event_us_median', float('nan')):.2f} us",
                  f"({time.time() - t0:.1f} s)", flush=True)
    np.savez_compressed(out / "unseen.npz", **blob)
    (out / "events.json").write_text(json.dumps({"reps": reps, "warmup": 3, "launches": res}, indent=1))


def cmd_once() -> None:
    import cupy as cp

    for e in entries():
        for which in WHICH:
            try:
                spec, _, _, gpu, args, fn = prepare(e, which)
                mt.fire(spec, fn, args)
                cp.cuda.runtime.deviceSynchronize()
                print("launched", e["name"], which, flush=True)
                del gpu, args
            except Exception as exc:  # noqa: BLE001
                print("failed", e["name"], which, exc, flush=True)
            cp.get_default_memory_pool().free_all_blocks()


def cmd_merge(out: Path) -> None:
    props = json.loads((out / "props.json").read_text()) if (out / "props.json").exists() else {}
    events = json.loads((out / "events.json").read_text()) if (out / "events.json").exists() else {"launches": {}}
    ncu = mt.parse_ncu(out / "ncu_raw.csv") if (out / "ncu_raw.csv").exists() else []
    smi = (out / "smi.csv").read_text().strip().splitlines() if (out / "smi.csv").exists() else []
    rows = list(ncu)
    launches = []
    for e in entries():
        for which in WHICH:
            ent = dict(e, launch=e[which])
            spec = launch.spec_from_entry(ent, source=str(BENCH / "manifest.json"), base=BENCH)
            grid = "(" + ", ".join(str(g) for g in spec.grid) + ")"
            k = next((i for i, r in enumerate(rows) if r["kernel"] == e["entry"] and (r["grid"] or "").replace(" ", "")
                      == grid.replace(" ", "")), None)
            if k is None and rows and rows[0]["kernel"] == e["entry"]:   # ncu's grid text differs: launch order
                k = 0
            rec = {"entry": e["name"], "kernel": e["entry"], "which": which, "grid": list(spec.grid),
                   "block": list(spec.block)}
            rec.update({k2: v for k2, v in events["launches"].get(e["name"] if which == "launch" else e["name"] + ".perf",
                                                                  {}).items() if k2 not in rec})
            if k is not None:
                r = rows.pop(k)
                rec["metrics"], rec["units"] = r["metrics"], r["units"]
            launches.append(rec)
    doc = {
        "tool": "Nsight Compute (ncu --clock-control none, default cache control: caches flushed before each kernel), "
                "one launch of each entry's launch and perf_launch, in manifest order; CUDA events (median of 20 "
                "after 3 warm-ups, caches warm)",
        "script": "bench/device/unseen_truth.sh + bench/device/unseen_truth.py",
        "metrics_used": CORPUS_METRICS,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "device": props, "nvidia_smi": smi, "launches": launches,
        "unmatched_ncu_rows": [{"kernel": r["kernel"], "grid": r["grid"]} for r in rows],
    }
    (out / "unseen.json").write_text(json.dumps(doc, indent=1))
    print("merged", len(launches), "launches,", len(ncu), "ncu kernels,", len(rows), "unmatched")


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "props":
        mt.cmd_props(Path(sys.argv[2]))
    elif mode == "time":
        cmd_time(Path(sys.argv[2]))
    elif mode == "once":
        cmd_once()
    elif mode == "merge":
        cmd_merge(Path(sys.argv[2]))
    elif mode == "metrics":
        print(",".join(CORPUS_METRICS))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
