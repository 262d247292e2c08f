"""Predicated-off lanes in shared-memory wavefronts: cases for bench/device/bank_probe.cu.

    python3 bench/device/bank_probe.py list          # the cases, as JSON
    python3 bench/device/bank_probe.py run PTX       # launch every case once (run under ncu)

Each case is (kernel, per-lane byte offsets, active-lane mask); one warp, one launch per case, in
the order of CASES, so ncu's kernel IDs follow that order.
"""

from __future__ import annotations

import json
import sys

L = range(32)
CASES = [
    ("A 32-bit 128*l, lanes 0-3", "probe32", [128 * l for l in L], 0x0000000F),
    ("B 32-bit 128*l, even lanes", "probe32", [128 * l for l in L], 0x55555555),
    ("C 32-bit 8*l, lanes 0-15", "probe32", [8 * l for l in L], 0x0000FFFF),
    ("D 32-bit 8*l, all lanes", "probe32", [8 * l for l in L], 0xFFFFFFFF),
    ("E 32-bit 0, lane 31 only", "probe32", [0 for l in L], 0x80000000),
    ("F 64-bit 8*(l/2), even lanes", "probe64", [8 * (l // 2) for l in L], 0x55555555),
    ("G 64-bit 8*(l/2), all lanes", "probe64", [8 * (l // 2) for l in L], 0xFFFFFFFF),
    ("H 64-bit 0, lane 0 only", "probe64", [0 for l in L], 0x00000001),
    ("I 64-bit 16*l, lanes 0-15", "probe64", [16 * l for l in L], 0x0000FFFF),
    ("J 64-bit 8*l, lanes 16-31", "probe64", [8 * l for l in L], 0xFFFF0000),
    ("K 128-bit 16*l, lanes 0-7", "probe128", [16 * l for l in L], 0x000000FF),
    ("L 128-bit 16*l, all lanes", "probe128", [16 * l for l in L], 0xFFFFFFFF),
    ("M 128-bit 32*l, lanes 0-7", "probe128", [32 * l for l in L], 0x000000FF),
    ("N 128-bit 16*(l/2), even lanes", "probe128", [16 * (l // 2) for l in L], 0x55555555),
    ("O 128-bit 0, lanes 0 and 8", "probe128", [0 for l in L], 0x00000101),
    ("P 128-bit 16*l, lanes 0,8,16,24", "probe128", [16 * l for l in L], 0x01010101),
]


def main() -> int:
    if sys.argv[1] == "list":
        print(json.dumps([{"case": c, "kernel": k, "offsets": o, "mask": m} for c, k, o, m in CASES]))
        return 0
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(path=sys.argv[2])
    out = cp.zeros(32, dtype=cp.float32)
    for _, kernel, offs, mask in CASES:
        o = cp.asarray(np.array(offs, dtype=np.int32))
        mod.get_function(kernel)((1, 1, 1), (32, 1, 1), (o, np.uint32(mask), out))
    cp.cuda.runtime.deviceSynchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
