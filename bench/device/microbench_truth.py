"""Hardware truth for the project's microbenchmarks (``examples/microbench``), on a machine with an NVIDIA GPU.

    python3 bench/device/microbench_truth.py props OUTDIR      # device properties -> OUTDIR/props.json
    python3 bench/device/microbench_truth.py time OUTDIR       # check outputs, CUDA-event times -> OUTDIR/events.json
    python3 bench/device/microbench_truth.py once              # every launch once, in manifest order (under ncu)
    python3 bench/device/microbench_truth.py probe             # occupancy probe launches (under ncu)
    python3 bench/device/microbench_truth.py merge OUTDIR      # props + events + ncu_raw.csv + probe_raw.csv -> microbench.json
    python3 bench/device/microbench_truth.py metrics           # the ncu metric list, comma-separated
    python3 bench/device/microbench_truth.py repeats DIR       # DIR/ncu_rep*.csv (repeat_truth.sh) -> DIR/cycles.json

``--bench DIR`` points at another copy of ``examples/microbench`` (the device run carries one). Inputs
come from the launch specs and seed rule kernlens uses (``sim/launch.py``, loaded by path), so a
simulator run of the same entry sees the same bytes. Needs numpy and cupy only. The shell side
(ncu, nvidia-smi, cuobjdump) is in ``bench/device/microbench_truth.sh``.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "examples" / "microbench"
for i, a in enumerate(sys.argv):
    if a == "--bench":
        BENCH = Path(sys.argv[i + 1]).resolve()
        del sys.argv[i:i + 2]
        break
REPO = Path.cwd() if (Path.cwd() / "sim" / "launch.py").exists() else ROOT
sys.path.insert(0, str(REPO))
_spec = importlib.util.spec_from_file_location("kernlens_launch", REPO / "sim" / "launch.py")
launch = importlib.util.module_from_spec(_spec)
sys.modules["kernlens_launch"] = launch
_spec.loader.exec_module(launch)

METRICS = [
    "gpc__cycles_elapsed.max", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.max", "sm__cycles_active.avg",
    "sm__cycles_active.max", "smsp__cycles_active.avg", "gpu__time_duration.sum",
    "smsp__inst_executed.sum", "smsp__inst_executed.avg.per_cycle_active", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_config_size", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks", "launch__waves_per_multiprocessor",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_lsu.sum",
    "sm__inst_executed_pipe_fp16.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait")]

PROBE_METRICS = ["launch__shared_mem_config_size", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_registers",
                 "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks", "launch__registers_per_thread",
                 "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static"]
PROBE_THREADS = (64, 128, 256, 512, 1024)
PROBE_DYNAMIC = (16, 512, 1024, 2048, 4096, 8192, 16384, 32768)
PROBE_PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry occ_probe(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, dyn;
    st.shared.u32 [%r2], %r1;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    ld.shared.u32 %r3, [%r2];
    st.global.u32 [%rd2], %r3;
    ret;
}
"""


def entries(bench: Path | None = None) -> list[dict]:
    """The manifest entries of a bench folder (this script's BENCH by default; unseen_truth.py passes its own)."""
    return json.loads(((bench or BENCH) / "manifest.json").read_text())["entries"]


def reference_module(bench: Path | None = None, name: str = "microbench_reference"):
    """The bench folder's reference.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, (bench or BENCH) / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_MODULES: dict = {}


def prepare(e: dict):
    import cupy as cp

    spec = launch.spec_from_entry(e, source=str(BENCH / "manifest.json"), base=BENCH)
    decoded = launch.build_inputs(spec, seed=launch.entry_seed(e["name"]))
    dev = launch.device_buffers(spec, decoded)
    gpu = {k: cp.asarray(v) for k, v in dev.items()}
    args = [gpu[a.name] if isinstance(a, launch.BufferArg) else a.numpy() for a in spec.args]
    path = str(BENCH / e["ptx"]["sm_90"])
    if path not in _MODULES:
        _MODULES[path] = cp.RawModule(path=path)
    fn = _MODULES[path].get_function(e["entry"])
    return spec, decoded, dev, gpu, args, fn


def fire(spec, fn, args):
    fn(tuple(spec.grid), tuple(spec.block), tuple(args), shared_mem=spec.shared_bytes("sm_90"))


def cmd_props(out: Path) -> None:
    import cupy as cp

    p = cp.cuda.runtime.getDeviceProperties(0)
    keep = ("name", "major", "minor", "multiProcessorCount", "clockRate", "memoryClockRate", "memoryBusWidth",
            "l2CacheSize", "persistingL2CacheMaxSize", "regsPerMultiprocessor", "regsPerBlock", "maxThreadsPerMultiProcessor",
            "maxThreadsPerBlock", "maxBlocksPerMultiProcessor", "sharedMemPerMultiprocessor", "sharedMemPerBlock",
            "sharedMemPerBlockOptin", "reservedSharedMemPerBlock", "warpSize", "totalGlobalMem")
    props = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in p.items() if k in keep}
    props["driver"] = cp.cuda.runtime.driverGetVersion()
    props["runtime"] = cp.cuda.runtime.runtimeGetVersion()
    (out / "props.json").write_text(json.dumps(props, indent=1))
    print(json.dumps(props))


def cmd_time(out: Path, reps: int = 20) -> None:
    """Outputs against the reference (small launches), then the median of ``reps`` event-timed launches."""
    import cupy as cp

    ref = reference_module()
    res = {}
    for e in entries():
        t0 = time.time()
        spec, decoded, dev, gpu, args, fn = prepare(e)
        fire(spec, fn, args)
        cp.cuda.runtime.deviceSynchronize()
        r = {"grid": list(spec.grid), "block": list(spec.block), "regs": int(fn.num_regs),
             "static_shared": int(fn.shared_size_bytes)}
        if not e["name"].endswith("_perf"):
            got = {a.name: launch.decode(gpu[a.name].get(), a.dtype) for a in spec.outputs}
            want = getattr(ref, e["reference"])(dict(decoded))
            tol = e.get("tolerance", {})
            ok = all(np.allclose(got[k], want[k], rtol=tol.get("rtol", 1e-4), atol=tol.get("atol", 1e-5)) for k in want)
            r["check"] = "pass" if ok else "FAIL"
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(3):
            fire(spec, fn, args)
        times = []
        for _ in range(reps):
            start.record()
            fire(spec, fn, args)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)  # microseconds
        r["event_us_median"] = float(np.median(times))
        r["event_us_min"] = float(np.min(times))
        r["event_us_max"] = float(np.max(times))
        res[e["name"]] = r
        print(e["name"], r.get("check", "-"), f"{r['event_us_median']:.2f} us", f"({time.time() - t0:.1f} s)", flush=True)
        del gpu, args, dev
        cp.get_default_memory_pool().free_all_blocks()
    (out / "events.json").write_text(json.dumps({"reps": reps, "warmup": 3, "launches": res}, indent=1))


def cmd_once() -> None:
    import cupy as cp

    for e in entries():
        spec, _, _, gpu, args, fn = prepare(e)
        fire(spec, fn, args)
        cp.cuda.runtime.deviceSynchronize()
        print("launched", e["name"], flush=True)
        del gpu, args
        cp.get_default_memory_pool().free_all_blocks()


def cmd_probe() -> None:
    import cupy as cp

    path = Path("/tmp/occ_probe.ptx")
    path.write_text(PROBE_PTX)
    mod = cp.RawModule(path=str(path))
    fn = mod.get_function("occ_probe")
    out = cp.zeros(4, dtype=cp.uint32)
    for t in PROBE_THREADS:
        for d in PROBE_DYNAMIC:
            fn((1, 1, 1), (t, 1, 1), (out,), shared_mem=d)
    cp.cuda.runtime.deviceSynchronize()


def _num(s: str):
    s = s.replace(",", "").strip()
    try:
        v = float(s)
    except ValueError:
        return s
    return int(v) if v.is_integer() else v


def parse_ncu(path: Path) -> list[dict]:
    """ncu --csv output (one row per metric) -> one dict per profiled kernel, in launch order."""
    text = path.read_text(errors="replace").splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows: dict[int, dict] = {}
    for row in csv.DictReader(text[start:]):
        try:
            kid = int(row["ID"])
        except (KeyError, ValueError):
            continue
        k = rows.setdefault(kid, {"kernel": row.get("Kernel Name"), "block": row.get("Block Size"),
                                  "grid": row.get("Grid Size"), "metrics": {}, "units": {}})
        k["metrics"][row["Metric Name"]] = _num(row["Metric Value"])
        k["units"][row["Metric Name"]] = row.get("Metric Unit", "")
    return [rows[k] for k in sorted(rows)]


def cmd_merge(out: Path) -> None:
    props = json.loads((out / "props.json").read_text()) if (out / "props.json").exists() else {}
    events = json.loads((out / "events.json").read_text()) if (out / "events.json").exists() else {"launches": {}}
    ncu = parse_ncu(out / "ncu_raw.csv") if (out / "ncu_raw.csv").exists() else []
    probe = parse_ncu(out / "probe_raw.csv") if (out / "probe_raw.csv").exists() else []
    smi = (out / "smi.csv").read_text().strip().splitlines() if (out / "smi.csv").exists() else []  # before, after events, after ncu
    launches = {}
    names = [e["name"] for e in entries()]
    for i, e in enumerate(entries()):
        rec = {"entry": e["entry"], "what": e.get("what", "")}
        rec.update(events["launches"].get(e["name"], {}))
        if i < len(ncu) and ncu[i]["kernel"] == e["entry"]:
            rec["ncu"] = ncu[i]["metrics"]
        elif i < len(ncu):
            rec["ncu_mismatch"] = ncu[i]["kernel"]
        launches[e["name"]] = rec
    probes = []
    k = 0
    for t in PROBE_THREADS:
        for d in PROBE_DYNAMIC:
            if k < len(probe):
                probes.append({"threads": t, "dynamic_shared": d, **probe[k]["metrics"]})
            k += 1
    doc = {
        "tool": "Nsight Compute (ncu --clock-control none, default cache control: caches flushed before each kernel), "
                "one launch of each entry in manifest order; CUDA events (median of 20 after 3 warm-ups, caches warm)",
        "script": "bench/device/microbench_truth.sh + bench/device/microbench_truth.py",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "device": props, "nvidia_smi": smi, "order": names, "launches": launches, "occupancy_probe": probes,
    }
    (out / "microbench.json").write_text(json.dumps(doc, indent=1))
    print("merged", len(launches), "launches,", len(ncu), "ncu kernels,", len(probes), "probes")


def cmd_repeats(folder: Path) -> None:
    """Merge the passes of ``repeat_truth.sh`` (``ncu_repN.csv``: one row per profiled launch and metric, launches
    in manifest order) into ``cycles.json``: entry -> [gpc__cycles_elapsed.max of each pass], and
    ``sm_active.json`` likewise for sm__cycles_active.max. A pass whose kernels do not line up with the manifest's
    entries (a launch missing) is dropped, saying so."""
    names = [e["name"] for e in entries()]
    kernels = [e["entry"] for e in entries()]
    out: dict[str, dict[str, list[int]]] = {"gpc__cycles_elapsed.max": {}, "sm__cycles_active.max": {}}
    files = sorted(folder.glob("ncu_rep*.csv"), key=lambda p: int(p.stem.removeprefix("ncu_rep")))
    for path in files:
        rows = list(csv.DictReader(path.read_text().splitlines()))
        ids = sorted({int(r["ID"]) for r in rows})
        by_id = {i: [r for r in rows if int(r["ID"]) == i] for i in ids}
        if len(ids) != len(names) or any(by_id[i][0]["Kernel Name"] != k for i, k in zip(ids, kernels)):
            print(f"{path.name}: {len(ids)} launches do not line up with the {len(names)} manifest entries; dropped")
            continue
        for i, name in zip(ids, names):
            for r in by_id[i]:
                if r["Metric Name"] in out:
                    out[r["Metric Name"]].setdefault(name, []).append(int(r["Metric Value"].replace(",", "")))
    (folder / "cycles.json").write_text(json.dumps(out["gpc__cycles_elapsed.max"]))
    (folder / "sm_active.json").write_text(json.dumps(out["sm__cycles_active.max"]))
    print(f"{len(files)} passes, {len(next(iter(out['gpc__cycles_elapsed.max'].values()), []))} kept")


def main() -> int:
    mode = sys.argv[1]
    if mode == "props":
        cmd_props(Path(sys.argv[2]))
    elif mode == "time":
        cmd_time(Path(sys.argv[2]))
    elif mode == "once":
        cmd_once()
    elif mode == "probe":
        cmd_probe()
    elif mode == "merge":
        cmd_merge(Path(sys.argv[2]))
    elif mode == "repeats":
        cmd_repeats(Path(sys.argv[2]))
    elif mode == "metrics":
        print(",".join(dict.fromkeys(METRICS)))
    elif mode == "probe-metrics":
        print(",".join(PROBE_METRICS))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
