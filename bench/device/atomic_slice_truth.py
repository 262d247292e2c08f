"""Device side of bench/device/atomic_slice_truth.sh (issue #10, tunit): the L2 slice of 128-byte lines, the
time of same-address atomics over hot lines at chosen distances, and bf16 conversion kernels, on the GPU of
this machine. Needs numpy and cupy, and the cubin of bench/device/atomic_slice.cu (nvcc -cubin -arch=sm_90).

    python3 atomic_slice_truth.py CUBIN probe OUTDIR CHUNK SMID   # slice_probe launches (run under ncu); SMID "all":
                                                                   # the chunk from every SM 0-131 in turn
    python3 atomic_slice_truth.py CUBIN time OUTDIR               # hot_lines sweep, CUDA events -> OUTDIR/hot_lines.json
    python3 atomic_slice_truth.py CUBIN bf16 OUTDIR               # bf16 kernels, CUDA events -> OUTDIR/bf16.json (and under ncu)

``probe``: each launch gives the 20 lines of one group to one CTA on SM ``SMID``; warp j does 2^j warp-wide
atomicAdd(1.0f) to its line, so a slice's lts__t_sectors_op_red (per instance) is 32 x a sum of distinct
powers of two: the lines homed (or proxied) there. The groups of each chunk go to OUTDIR/probe_CHUNK_SMID.json.
Chunk P (the first line of every 4 KiB of the first 4 MiB) maps the L2 partition of 4 KiB runs across two 2 MiB
pages; chunk Q (20 of those lines) run from every SM says which SMs sit on which side of the partition.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

LINES_LOG2 = 24             # the buffer: 2^24 lines of 128 B = 2 GiB
K = 20                      # lines per slice_probe launch


def chunk_lines(name: str) -> list[int]:
    """The lines (128-byte units from the buffer's start) a probe chunk covers, in a fixed order."""
    if name == "A":
        return list(range(1024))
    if name == "B":
        return list(range(1024, 2048))
    if name == "C":
        return list(range(2048, 4096))
    if name == "P":     # the first line of every 4 KiB run of the first 4 MiB (two 2 MiB pages)
        return [32 * k for k in range(1024)]
    if name == "Q":     # 20 of P's lines, to be run from every SM
        return [32 * k for k in range(K)]
    if name == "S":     # single and few-bit strides up to 1 GiB, then random lines of the 2 GiB buffer
        s = sorted({m << b for b in range(7, LINES_LOG2) for m in (1, 3, 5, 7) if (m << b) < (1 << LINES_LOG2)})
        rnd = np.random.default_rng(1).integers(4096, 1 << LINES_LOG2, 400).tolist()
        return [x for x in s if x >= 1024] + [x for x in rnd if x not in s]
    raise SystemExit(f"unknown chunk {name}")


def main() -> None:
    import cupy as cp

    cubin, mode, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    mod = cp.RawModule(path=cubin)
    if mode == "probe":
        chunk, which = sys.argv[4], sys.argv[5]
        smids = range(132) if which == "all" else [int(which)]
        buf = cp.zeros(1 << (LINES_LOG2 + 5), dtype=cp.float32)
        flag = cp.zeros(1, dtype=cp.int32)
        fn = mod.get_function("slice_probe")
        lines = chunk_lines(chunk)
        groups = []
        for smid in smids:
            for g in range(0, len(lines), K):
                grp = lines[g:g + K]
                offs = cp.asarray(np.asarray(grp, dtype=np.int64) * 32)
                flag.fill(0)
                fn((132,), (32 * len(grp),), (buf, offs, np.int32(len(grp)), np.int32(smid), flag))
                cp.cuda.Device().synchronize()
                groups.append({"lines": grp, "smid": smid, "smid_flag": int(flag.get()[0]) - 1})
        (out / f"probe_{chunk}_{which}.json").write_text(json.dumps(
            {"chunk": chunk, "smid": which, "buffer_ptr": int(buf.data.ptr), "weights": "warp j: 2^j x 32 red ops",
             "groups": groups}))
        print(f"probe {chunk} smid {which}: {len(groups)} launches, buffer at {buf.data.ptr:#x}")
    elif mode == "time":
        buf = cp.zeros(1 << (LINES_LOG2 + 5), dtype=cp.float32)
        fn = mod.get_function("hot_lines")
        st, en = cp.cuda.Event(), cp.cuda.Event()
        rng = np.random.default_rng(2)
        configs = [[0]]
        configs += [[0, d] for d in range(1, 1024)]
        configs += [[0, m << b] for b in range(10, LINES_LOG2) for m in (1, 3, 5) if (m << b) < (1 << LINES_LOG2)]
        configs += [[0, int(d)] for d in rng.integers(1024, 1 << LINES_LOG2, 200)]
        configs += [[1, 1 + d] for d in (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256, 512)]
        for n in (2, 4, 8, 16, 32):
            for s in list(range(1, 17)) + [24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096, 1 << 14, 1 << 16, 1 << 18]:
                if n * s < (1 << LINES_LOG2):
                    configs.append([i * s for i in range(n)])
        for _ in range(3):
            configs.append([0])
        rows = []
        for c in configs:
            offs = cp.asarray(np.asarray(c, dtype=np.int64) * 32)
            args = (buf, offs, np.int32(len(c)), np.int32(4))
            fn((132,), (256,), args)
            ts = []
            for _ in range(3):
                st.record()
                fn((132,), (256,), args)
                en.record()
                en.synchronize()
                ts.append(cp.cuda.get_elapsed_time(st, en) * 1e3)
            rows.append({"lines": c, "us": float(np.median(ts)), "all_us": ts})
        (out / "hot_lines.json").write_text(json.dumps({
            "what": "hot_lines: 132 CTAs x 256 threads x 4 atomicAdd(1.0f), warp w to line lines[w % n] (word 0 of it); "
                    "CUDA events, median of 3 after one warm launch; lines in 128-byte units from the buffer's start",
            "buffer_ptr": int(buf.data.ptr), "rows": rows}))
        print(f"time: {len(rows)} configs, one line {rows[0]['us']:.1f} us, pair (0,1) {rows[1]['us']:.1f} us")
    elif mode in ("bf16", "bf16once"):
        x = cp.asarray(np.random.default_rng(3).standard_normal(256).astype(np.float32))
        y = cp.zeros(256, dtype=cp.float32)
        runs = [("bf16_rt_dep", 32, (x, y, np.int32(512))),
                ("bf16_rt_indep", 256, (x, y, np.int32(512))),
                ("bf16_rt_ffma", 256, (x, y, np.float32(0.5), np.float32(0.25), np.int32(512))),
                ("bf16x2_unpack_ffma", 256, (x, y, np.float32(0.5), np.float32(0.25), np.int32(512)))]
        st, en = cp.cuda.Event(), cp.cuda.Event()
        res = {}
        for name, threads, args in runs:
            fn = mod.get_function(name)
            fn((1,), (threads,), args)
            if mode == "bf16once":
                continue
            ts = []
            for _ in range(10):
                st.record()
                fn((1,), (threads,), args)
                en.record()
                en.synchronize()
                ts.append(cp.cuda.get_elapsed_time(st, en) * 1e3)
            res[name] = {"threads": threads, "iters": 512, "us": float(np.median(ts))}
        cp.cuda.Device().synchronize()
        if mode == "bf16":
            (out / "bf16.json").write_text(json.dumps(res, indent=1))
            print("bf16:", {k: round(v["us"], 2) for k, v in res.items()})
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
