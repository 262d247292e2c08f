"""Same-address atomics over hot lines: the microbenchmark's kernel and hot_lines on ONE buffer, timed with CUDA
events and (mode ``once``, run under ncu) by Nsight Compute (issue #10; bench/device/atomic_buffer_truth.sh).

    python3 bench/device/atomic_buffer_truth.py time OUT_DIR     # events -> OUT_DIR/atomic_buffer.json
    python3 bench/device/atomic_buffer_truth.py once             # each launch once, in the order of ``launches()``

Why: for four lines 128 B apart the microbenchmark atomic_spacing_4x128 runs 2.29x faster than one line under ncu
and 2.34x with events (examples/h200/pipe_atomic), hot_lines on lines 0-3 of a 2 MiB-aligned buffer 2.66-2.75x;
for 4 KiB spacings the two methods disagree on the same kernel (16x4096: ncu 15.1x, events 10.6x). Here both
kernels run the same patterns (n lines, a stride of s lines, from a base line) on one 2 MiB-aligned buffer whose
address is recorded, so a difference is the kernel's, the base's or the method's, and nothing else.
The kernels: examples/microbench/ptx/atomic_spacing.sm_90.ptx (as measured) and hot_lines of
bench/device/atomic_slice.cu (compiled here with NVRTC); both 132 CTAs x 256 threads x 4 atomicAdd(1.0f),
warp w to line w % n.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import cupy as cp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MiB = 1 << 20
BASES = [0, 8192, 8192 * 5 + 37]                 # lines (128 B) from the buffer's 2 MiB-aligned start
PATTERNS = [(1, 0), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (2, 32), (4, 32), (8, 32), (16, 32), (32, 32)]


def launches():
    """(kernel, base line, n, stride in lines), in the order both modes run them."""
    return [(k, b, n, s) for b in BASES for n, s in PATTERNS for k in ("atomic_spacing", "hot_lines")]


def setup():
    spacing = cp.RawModule(path=str(ROOT / "examples/microbench/ptx/atomic_spacing.sm_90.ptx")).get_function("atomic_spacing")
    hot = cp.RawModule(code=(HERE / "atomic_slice.cu").read_text(), options=("-arch=sm_90",)).get_function("hot_lines")
    raw = cp.zeros((64 + 2) * MiB // 4, dtype=cp.float32)       # 64 MiB + room to align
    base_ptr = (raw.data.ptr + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)
    return spacing, hot, raw, base_ptr


def fire(fns, base_ptr, kernel, b, n, s, offs_cache):
    spacing, hot = fns
    p = base_ptr + b * 128
    if kernel == "atomic_spacing":
        spacing((132,), (256,), (cp.uint64(p), np.int32(4), np.int32(n), np.int32(s * 32)))
    else:
        key = (n, s)
        if key not in offs_cache:
            offs_cache[key] = cp.asarray(np.arange(n, dtype=np.int64) * s * 32)
        hot((132,), (256,), (cp.uint64(p), offs_cache[key], np.int32(n), np.int32(4)))


def main() -> int:
    mode = sys.argv[1]
    spacing, hot, raw, base_ptr = setup()
    offs = {}
    if mode == "once":
        for k, b, n, s in launches():
            fire((spacing, hot), base_ptr, k, b, n, s, offs)
            cp.cuda.runtime.deviceSynchronize()
        print(f"once: {len(launches())} launches, buffer at {base_ptr:#x}")
        return 0
    out = Path(sys.argv[2])
    st, en = cp.cuda.Event(), cp.cuda.Event()
    rows = []
    for k, b, n, s in launches():
        fire((spacing, hot), base_ptr, k, b, n, s, offs)
        ts = []
        for _ in range(21):
            st.record()
            fire((spacing, hot), base_ptr, k, b, n, s, offs)
            en.record()
            en.synchronize()
            ts.append(cp.cuda.get_elapsed_time(st, en) * 1e3)
        rows.append({"kernel": k, "base_line": b, "n": n, "stride_lines": s, "us": float(np.median(ts)), "all_us": ts})
        print(k, b, n, s, f"{rows[-1]['us']:.1f} us", flush=True)
    (out / "atomic_buffer.json").write_text(json.dumps({
        "what": __doc__.split("\n")[0], "buffer_ptr": int(base_ptr), "order": "as launches(); ncu csv rows in the same order",
        "rows": rows}, indent=0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
