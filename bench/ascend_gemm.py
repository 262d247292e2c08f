"""Ascend-like GEMM timing figures (prints them; not a test).

* 1024^3 fp16 on one cube core, --stages 1 vs 2: cycles, cube utilisation, speed-up;
* 4096^3 fp16 on 24 cube cores: predicted time and TFLOP/s next to the machine's peak;
* how long the simulator itself took (timing-only runs: no numerics).

    .venv/bin/python bench/ascend_gemm.py
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


def timed(cfg: GemmConfig, cores: int):
    module = isa.loads(gemm_kernel(cfg), "gemm.asm")
    t0 = time.perf_counter()
    res = run_module(module, M, cores=cores, functional=False)
    return res.timing, time.perf_counter() - t0


M = load_machine("davinci-a2")
print("1024x1024x1024 fp16, one cube core (L1 tile 128,256,256, L0 tile 128,256,64)")
rows = {}
for stages in (1, 2):
    t, wall = timed(GemmConfig(m=1024, n=1024, k=1024, stages=stages), 1)
    rows[stages] = t
    print(f"  stages {stages}: {t.cycles:10.0f} cycles  {t.seconds * 1e6:8.1f} us  cube busy "
          f"{t.utilization['M'] * 100:5.1f} %  MTE2 {t.utilization['MTE2'] * 100:5.1f} %  "
          f"MTE1 {t.utilization['MTE1'] * 100:5.1f} %  (simulated in {wall:.2f} s)")
print(f"  speed-up of stages 2 over 1: {rows[1].cycles / rows[2].cycles:.2f}x")

flops = 2 * 4096 ** 3
t, wall = timed(GemmConfig(m=4096, n=4096, k=4096, stages=2), 24)
tf = flops / t.seconds / 1e12
print("4096x4096x4096 fp16, 24 cube cores, stages 2")
print(f"  predicted {t.seconds * 1e6:.1f} us ({t.cycles:.0f} cycles) = {tf:.1f} TFLOP/s; "
      f"peak {M.peak_f16_flops / 1e12:.1f} TFLOP/s -> {tf * 1e12 / M.peak_f16_flops * 100:.1f} % of peak")
print(f"  cube busy {t.utilization['M'] * 100:.1f} %, GM traffic {t.gm_bytes / 2**20:.0f} MiB "
      f"({t.gm_unique_bytes / 2**20:.0f} MiB unique), GM share {t.gm_bytes_per_cycle:.0f} B/cycle/core")
print(f"  simulated in {wall:.2f} s")
