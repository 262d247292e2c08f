"""Per-CTA records of the L2/DRAM copies on the GPU of this machine (bench/device/sm_share.cu; issue #10).

    python3 bench/device/sm_share_truth.py OUT_DIR [REPEATS]

For each case (an examples/microbench entry's launch, and the same launch with both buffers moved by an
offset, to tell a property of an SM from one of the addresses it touches) REPEATS launches after one warm-up;
each launch's records (smid, clock64 at entry and after the last store, globaltimer at entry) are kept. The copies
(more than one pass) then run REPEATS launches more with per-pass records: clock64 when thread 0 of each CTA ends
its share of each pass (bench/device/sm_share.cu), to see whether later passes run at L2 speed.
Writes OUT_DIR/sm_share.json: {case: {"kernel", "grid", "block", "n4", "reps", "offset",
"runs": [[[smid, c0, c1, g0], ...], ...], and for the copies "pass_runs": [{"rec": [[smid, c0, c1, g0], ...],
"pass": [[clock64 after pass 0, 1, ...] per CTA]}, ...]}}.
"""
import json
import sys
from pathlib import Path

import cupy as cp

HERE = Path(__file__).resolve().parent
out = Path(sys.argv[1])
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
mod = cp.RawModule(code=(HERE / "sm_share.cu").read_text(), options=("-arch=sm_90",))
F4 = 16
MiB = 1 << 20

# name -> (kernel, grid, n4, reps, kind) as in examples/microbench/manifest.json
CASES = {
    "copy_l2": ("copy_f4_p", 264, 135168, 16, "copy"),
    "copy_l2_cg": ("copy_f4_cg_p", 264, 135168, 16, "copy"),
    "copy_cg_8m": ("copy_f4_cg_p", 264, 524288, 8, "copy"),
    "copy_cg_8m_w64": ("copy_f4_cg_p", 1056, 524288, 8, "copy"),
    "copy_cg_16m": ("copy_f4_cg_p", 264, 1048576, 4, "copy"),
    "copy_cg_24m": ("copy_f4_cg_p", 264, 1572864, 4, "copy"),
    "copy_cg_32m": ("copy_f4_cg_p", 264, 2097152, 2, "copy"),
    "read_cg_4m": ("read_cg_p", 1056, 262144, 32, "read"),
    "read_cg_4m_w8": ("read_cg_p", 132, 262144, 32, "read"),
    "read_cg_48m": ("read_cg_p", 1056, 3145728, 4, "read"),
    "write_f4_4m": ("write_f4_p", 1056, 262144, 32, "write"),
    "write_f4_48m": ("write_f4_p", 1056, 3145728, 4, "write"),
}
OFFSETS = {"copy_l2_cg": [1 * MiB, 3 * MiB + 4096], "read_cg_4m": [1 * MiB], "write_f4_4m": [1 * MiB]}

result = {}
pool = cp.get_default_memory_pool()
for name, (kern, grid, n4, reps, kind) in CASES.items():
    fn = mod.get_function(kern)
    for off in [0] + OFFSETS.get(name, []):
        key = name if off == 0 else f"{name}@+{off}"
        nbytes = n4 * F4
        # 2 MiB-aligned allocations, then the offset in bytes
        a = cp.zeros(nbytes + off + 2 * MiB, dtype=cp.uint8)
        b = cp.zeros(nbytes + off + 2 * MiB, dtype=cp.uint8)
        pa = (a.data.ptr + 2 * MiB - 1) // (2 * MiB) * (2 * MiB) + off
        pb = (b.data.ptr + 2 * MiB - 1) // (2 * MiB) * (2 * MiB) + off
        rec = cp.zeros(4 * grid, dtype=cp.int64)
        small = cp.zeros(grid * 256, dtype=cp.float32)
        passes = cp.zeros(grid * reps, dtype=cp.int64)
        if kind == "copy":
            args = (cp.uint64(pa), cp.uint64(pb), cp.int32(n4), cp.int32(reps), rec, cp.uint64(0))
        elif kind == "read":
            args = (cp.uint64(pa), small, cp.int32(n4), cp.int32(reps), rec)
        else:
            args = (cp.uint64(pb), cp.int32(n4), cp.int32(reps), rec)
        runs = []
        for r in range(REPEATS + 1):
            fn((grid, 1, 1), (256, 1, 1), args)
            cp.cuda.runtime.deviceSynchronize()
            if r:
                runs.append(rec.reshape(grid, 4).get().tolist())
        result[key] = {"kernel": kern, "grid": grid, "block": 256, "n4": n4, "reps": reps, "offset": off, "runs": runs}
        if kind == "copy" and reps > 1:
            pargs = args[:-1] + (passes,)
            pruns = []
            for r in range(REPEATS + 1):
                fn((grid, 1, 1), (256, 1, 1), pargs)
                cp.cuda.runtime.deviceSynchronize()
                if r:
                    pruns.append({"rec": rec.reshape(grid, 4).get().tolist(),
                                  "pass": passes.reshape(grid, reps).get().tolist()})
            result[key]["pass_runs"] = pruns
        print(key, "done", flush=True)
        del a, b, rec, small, passes
        pool.free_all_blocks()
(out / "sm_share.json").write_text(json.dumps(result))
