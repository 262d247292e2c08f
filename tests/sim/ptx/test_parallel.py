"""run_kernel(jobs=N): CTA ranges in forked processes give the one-process outputs and counts."""

from __future__ import annotations

import numpy as np

import isa
import sim
from isa.generate import ptx_gemm as G
from isa.generate import ptx_vector as V
from sim import launch as L


def _run(text, spec, jobs):
    module = isa.load(text)
    dec = L.build_inputs(spec)
    dev = L.device_buffers(spec, dec)
    r = sim.run_kernel(module, spec.kernel, spec.grid, spec.block, L.kernel_args(spec, dev, dec),
                       spec.shared_bytes(module.target), jobs=jobs)
    return dev, r


def test_gemm_two_jobs_identical():
    cfg = G.PtxGemmConfig(arch="sm_80", dtype="f32", engine="fma", m=96, n=64, k=24, tile=(32, 32, 8),
                          warps=(1, 1), beta=0.5)
    text, spec = G.gemm_ptx(cfg), L.spec_from_entry(G.launch_spec(cfg))
    d1, r1 = _run(text, spec, 1)
    d2, r2 = _run(text, spec, 2)
    assert r2.stats["jobs"] == 2 and r2.stats["ctas"] == 6
    assert np.array_equal(d1["C"].view(np.uint32), d2["C"].view(np.uint32))
    for key in ("warp_instructions", "thread_instructions", "shared_load_wavefronts", "global_load_sectors"):
        assert r1.stats[key] == r2.stats[key], key
    assert r1.stats["opcodes"] == r2.stats["opcodes"]
    assert not r2.problems


def test_atomics_run_in_one_process():
    cfg = V.PtxReduceConfig(arch="sm_90", op="sum", dtype="f32", rows=2, cols=500, passes=2, threads=64, splits=2)
    text, spec = V.reduce_ptx(cfg), L.spec_from_entry(V.reduce_launch(cfg))
    d1, r1 = _run(text, spec, 1)
    d2, r2 = _run(text, spec, 2)
    assert "jobs" not in r2.stats
    assert np.array_equal(d1["out"], d2["out"])
