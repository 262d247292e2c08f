"""Throughput of the numerics hot paths the simulators call (prints elements per second)."""

from __future__ import annotations

import time

import numpy as np

from sim.numerics import calibrate, encode, fma, float_to_int, round_float


def rate(fn, n, reps=5):
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return n * reps / (time.perf_counter() - t)


def main():
    n = 1 << 20
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 100
    a, b, c = (rng.standard_normal(n).astype(np.float32).astype(np.float64) for _ in range(3))
    rows = [
        ("round_float f16 rn", lambda: round_float(x, "f16", "rn")),
        ("round_float e4m3 rz satfinite", lambda: round_float(x, "e4m3", "rz", saturate=True)),
        ("round_float hif8 rna", lambda: round_float(x, "hif8", "rna")),
        ("encode bf16", lambda: encode(x, "bf16")),
        ("float_to_int s32 rni", lambda: float_to_int(x, "s32", "rni")),
        ("fma f32 rn", lambda: fma(a, b, c, "f32", "rn")),
        ("fma f16 rz", lambda: fma(a, b, c, "f16", "rz")),
    ]
    for name, fn in rows:
        print(f"{name:32s} {rate(fn, n) / 1e6:8.1f} M elem/s")
    small = rng.standard_normal(1000)
    print(f"{'fma f64 rn (exact path)':32s} {rate(lambda: fma(small, small, small, 'f64'), 1000, 2) / 1e6:8.3f} M elem/s")
    t = time.perf_counter()
    calibrate(x, "s8", "kl")
    print(f"{'calibrate kl, 1M values':32s} {time.perf_counter() - t:8.3f} s")


if __name__ == "__main__":
    main()
