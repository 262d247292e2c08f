"""Ascend-like GEMM timing figures beside hardware figures (prints them; not a test).

* 1024^3 fp16 on one cube core, --stages 1 vs 2: cycles, cube utilisation, speed-up;
* 6144^3 fp16 in, fp32 accumulate on 24 cube cores: the model beside a public GEMM kernel measured
  on an A2/A3-class part (issue #16: 1.506 ms, cube 86.7 %, MTE2 95.2 %, MTE1 68.1 %, FixPipe 3.1 %);
  goal: time within 15 %, cube busy within 10 points;
* efficiency against size on 24 cores (small GEMMs cannot fill 24 cores: blocks, waves);
* CATLASS's published tuning cases (docs/matmul_fast_tuning.md, 20-AIC part, 06_optimized_matmul /
  21_basic_matmul_preload_zN): unseen by the model, a different kernel and part; printed, not fitted;
* how long the simulator itself took (timing-only runs: every core simulated, no sampling).

    .venv/bin/python bench/ascend_gemm.py [--quick]     # --quick skips 6144^3 (~30 s) and 4096^3
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import isa  # noqa: E402
from isa.generate.gemm import GemmConfig, gemm_kernel  # noqa: E402
from sim.ascend.machine import load_machine  # noqa: E402
from sim.ascend.run import run_module  # noqa: E402

QUICK = "--quick" in sys.argv
M = load_machine("davinci-a2")
PIPES = ("M", "MTE2", "MTE1", "FIX")


def timed(cfg: GemmConfig, cores: int):
    module = isa.loads(gemm_kernel(cfg), "gemm.asm")
    t0 = time.perf_counter()
    res = run_module(module, M, cores=cores, functional=False)
    return res.timing, time.perf_counter() - t0


def busy(t) -> str:
    return "  ".join(f"{p} {t.utilization[p] * 100:5.1f} %" for p in PIPES)


print("1024x1024x1024 fp16, one cube core (L1 tile 128,256,256, L0 tile 128,256,64)   [modelled]")
rows = {}
for stages in (1, 2):
    t, wall = timed(GemmConfig(m=1024, n=1024, k=1024, stages=stages), 1)
    rows[stages] = t
    print(f"  stages {stages}: {t.cycles:10.0f} cycles  {t.seconds * 1e6:8.1f} us  {busy(t)}  (simulated in {wall:.2f} s)")
print(f"  speed-up of stages 2 over 1: {rows[1].cycles / rows[2].cycles:.2f}x")

if not QUICK:
    hw = {"ms": 1.506, "M": 86.7, "MTE2": 95.2, "MTE1": 68.1, "FIX": 3.1}
    t, wall = timed(GemmConfig(m=6144, n=6144, k=6144, stages=2), 24)
    ms = t.seconds * 1e3
    print("\n6144x6144x6144 fp16 in (fp32 accumulate, f16 out), 24 cube cores, stages 2, swizzle <3,0>")
    print(f"  {'':10} {'time':>9} {'cube':>7} {'MTE2':>7} {'MTE1':>7} {'FixPipe':>8}")
    print(f"  {'hardware':10} {hw['ms']:7.3f}ms {hw['M']:6.1f}% {hw['MTE2']:6.1f}% {hw['MTE1']:6.1f}% {hw['FIX']:7.1f}%"
          "   [measured, issue #16]")
    print(f"  {'model':10} {ms:7.3f}ms " + " ".join(f"{t.utilization[p] * 100:6.1f}%" for p in PIPES[:3])
          + f" {t.utilization['FIX'] * 100:7.1f}%   [modelled]")
    err = (ms - hw["ms"]) / hw["ms"] * 100
    pts = t.utilization["M"] * 100 - hw["M"]
    print(f"  time {err:+.1f} % (goal within 15 %: {'met' if abs(err) <= 15 else 'NOT met'}), cube busy {pts:+.1f} points "
          f"(goal within 10: {'met' if abs(pts) <= 10 else 'NOT met'})")
    print(f"  L2 hit rate {t.l2_hit_rate * 100:.1f} % of {t.gm_bytes / 2**30:.2f} GiB GM traffic; HBM reads "
          f"{t.hbm_read_bytes / 2**20:.0f} MiB, write-backs {t.hbm_writeback_bytes / 2**20:.0f} MiB "
          f"(footprint {t.gm_unique_bytes / 2**20:.0f} MiB > 192 MiB L2); simulated in {wall:.1f} s")

print("\nsize curve: fp16 square GEMMs on 24 cube cores, stages 2, tiles 128x256x256   [modelled]")
print(f"  {'size':>6} {'blocks':>6} {'waves':>5} {'time us':>9} {'TFLOP/s':>8} {'of peak':>7} {'cube':>6} {'L2 hit':>6}  sim s")
sizes = (256, 512, 1024, 1536, 2048, 3072) + (() if QUICK else (4096,))
for n in sizes:
    t, wall = timed(GemmConfig(m=n, n=n, k=n, stages=2), 24)
    blocks = -(-n // 128) * -(-n // 256)
    tf = 2 * n ** 3 / t.seconds / 1e12
    print(f"  {n:6d} {blocks:6d} {-(-blocks // 24):5d} {t.seconds * 1e6:9.1f} {tf:8.1f} {tf * 1e12 / M.peak_f16_flops * 100:6.1f}% "
          f"{t.utilization['M'] * 100:5.1f}% {t.l2_hit_rate * 100:5.1f}%  {wall:5.1f}")

print("\nunseen: CATLASS tuning cases on a 20-AIC part (docs/matmul_fast_tuning.md; other kernels: preload,")
print("padding on the vector cores; clock and HBM of that part unknown) vs this generator on 20 cores")
cases = [((1024, 576, 6144), "col", (128, 256, 256), (128, 256, 64), 72.5),
         ((1024, 576, 6144), "col", (256, 128, 256), (256, 128, 64), 48.6),
         ((20, 6144, 16384), "row", (128, 256, 256), (128, 256, 64), 238.8),
         ((20, 6144, 16384), "row", (32, 320, 128), (32, 320, 32), 252.4)]
for (m, n, k), lb, l1, l0, us in cases:
    t, _ = timed(GemmConfig(m=m, n=n, k=k, layout_b=lb, l1_tile=l1, l0_tile=l0, stages=2), 20)
    print(f"  {m}x{n}x{k} B {lb}-major, L1 tile {','.join(map(str, l1))}: hardware {us:6.1f} us, model "
          f"{t.seconds * 1e6:6.1f} us ({(t.seconds * 1e6 - us) / us * 100:+.0f} %)")

print("\nmix kernels on 24 cube + 48 vector cores (timing-only)   [modelled]")
from isa.generate.fused import AttentionConfig, EpilogueConfig, flash_attention_kernel, gemm_epilogue_kernel  # noqa: E402

for label, text, flops in (
        ("gemm-epilogue 2048^3, bias + ReLU + int8", gemm_epilogue_kernel(EpilogueConfig(m=2048, n=2048, k=2048)),
         2 * 2048 ** 3),
        ("flash-attention sq 1536, sk 2048, d 128", flash_attention_kernel(AttentionConfig(sq=1536, sk=2048, d=128)),
         4 * 1536 * 2048 * 128)):
    t0 = time.perf_counter()
    res = run_module(isa.loads(text, "mix.asm"), M, functional=False)
    t = res.timing
    k = t.utilization_by_kind
    print(f"  {label}: {t.seconds * 1e6:8.1f} us, {flops / t.seconds / 1e12:6.1f} TFLOP/s; cube M {k['cube']['M'] * 100:4.1f} %, "
          f"vector V {k['vector']['V'] * 100:4.1f} %; top stalls "
          + ", ".join(f"{c} {v / 1e3:.0f}k" for c, v in sorted(t.stalls.cycles.items(), key=lambda kv: -kv[1])[:3])
          + f"  (simulated in {time.perf_counter() - t0:.1f} s)")
