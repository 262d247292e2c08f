"""The project's own examples on the simulator against what a real H200 did with them.

Truth in ``examples/h200/`` (gathered with ``bench/device/example_truth.py``): GPU outputs bit for bit
for the same inputs, Nsight Compute counters, compute-sanitizer reports. No ``../shared`` needed.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import isa
from sim import launch
from tests.conftest import EXAMPLES

H200 = EXAMPLES / "h200"
NCU = json.loads((H200 / "ncu_metrics.json").read_text())["kernels"]
GOT = np.load(H200 / "examples_h200.npz")
KERNELS = ["sgemm_tiled", "hgemm_wmma", "dot_dp4a", "reduce_sum", "hfma2_axpy"]
BUGS = ["oob_write", "missing_sync", "uninit_smem"]


def ptx(name: str) -> Path:
    p = EXAMPLES / "ptx" / f"{name}.sm_90.ptx"
    return p if p.exists() else EXAMPLES / "ptx" / "bugs" / f"{name}.sm_90.ptx"


@lru_cache(maxsize=None)
def run(name: str):
    spec = launch.load_launch(f"{EXAMPLES / 'manifest.json'}#{name}")
    return spec, launch.execute(isa.load(ptx(name)), spec)


def ncu(name: str, metric: str) -> int:
    return int(NCU[name][metric])


@pytest.mark.parametrize("name", ["sgemm_tiled", "hgemm_wmma", "dot_dp4a", "hfma2_axpy"])
def test_outputs_are_bit_exact_with_the_h200(name):
    spec, ex = run(name)
    assert ex.problems == ()
    for buf in spec.outputs:
        got = GOT[f"{name}.got_{buf.name}"]
        mine = ex.device[buf.name]
        assert got.dtype == mine.dtype and got.shape == mine.shape
        assert np.array_equal(got.view(np.uint8), mine.view(np.uint8)), f"{name}.{buf.name} differs from the H200"


def test_atomic_sum_matches_within_fp32_reordering():
    spec, ex = run("reduce_sum")
    got = GOT["reduce_sum.got_out"].astype(np.float64)
    x = GOT["reduce_sum.in_x"].astype(np.float64)
    assert ex.problems == ()
    # 4 blocks add their partial sums with atom.global.add.f32 in an order the GPU does not fix;
    # the simulator adds them in block order. Both are within a few fp32 ulps of the exact sum.
    exact = x.sum()
    for value in (got[0], float(ex.outputs["out"][0])):
        assert abs(value - exact) <= 8 * np.spacing(np.float32(abs(exact)))


@pytest.mark.parametrize("name", ["sgemm_tiled", "reduce_sum", "missing_sync", "uninit_smem"])
def test_shared_store_wavefronts_equal_nsight_compute(name):
    _, ex = run(name)
    assert ex.stats["shared_store_wavefronts"] == ncu(name, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")


@pytest.mark.parametrize("name", ["reduce_sum", "missing_sync", "uninit_smem", "dot_dp4a", "hfma2_axpy"])
def test_shared_load_wavefronts_equal_nsight_compute(name):
    _, ex = run(name)
    assert ex.stats["shared_load_wavefronts"] == ncu(name, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")


def test_sgemm_tile_loads_differ_from_ncu_only_by_the_lds128_merge():
    # PTX reads As[ty][k] with 16 scalar ld.shared.f32 per tile (1 wavefront each: two rows of
    # the warp broadcast one word each); ptxas merged them into 4 LDS.128 (2 wavefronts each under
    # the pair rule), so ncu sees 8 fewer wavefronts per warp and tile. 9 CTAs x 8 warps x 4 tiles.
    _, ex = run("sgemm_tiled")
    warp_tiles = 9 * 8 * 4
    assert ex.stats["shared_load_wavefronts"] == warp_tiles * 32
    assert ncu("sgemm_tiled", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") == warp_tiles * (32 - 8)


def test_sgemm_tile_loads_through_the_sass_equal_nsight_compute():
    # the same launch, costing the shared accesses ptxas emitted (the LDS.128 of the SASS listing
    # kept in tests/isa/sass/data, mapped to PTX lines through -lineinfo): ncu's count exactly
    from isa.sass.parser import parse
    from isa.sass.shared import shared_plan
    from sim.memory.heat import MemoryHeat

    module = isa.load(ptx("sgemm_tiled"))
    listing = EXAMPLES.parent / "tests" / "isa" / "sass" / "data" / "sgemm_tiled.sm_90.sass"
    plan = shared_plan(module, parse(listing.read_text()))
    assert sorted(set(plan.values())) == [(), ((0, 16),)]
    spec = launch.load_launch(f"{EXAMPLES / 'manifest.json'}#sgemm_tiled")
    ex = launch.execute(module, spec, listeners=[MemoryHeat(shared_plan=plan)])
    assert ex.stats["shared_load_wavefronts"] == ncu("sgemm_tiled", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    assert ex.stats["shared_store_wavefronts"] == ncu("sgemm_tiled", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")


@pytest.mark.parametrize("name", KERNELS + ["missing_sync", "uninit_smem"])
def test_global_load_sectors_equal_nsight_compute(name):
    _, ex = run(name)
    assert ex.stats["global_load_sectors"] == ncu(name, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")


@pytest.mark.parametrize("name", ["sgemm_tiled", "hgemm_wmma", "dot_dp4a", "hfma2_axpy", "missing_sync", "uninit_smem",
                                  "reduce_sum"])
def test_global_store_sectors_equal_nsight_compute(name):
    _, ex = run(name)
    assert ex.stats["global_store_sectors"] == ncu(name, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")


def test_wmma_fragment_accesses_count_sectors_as_ncu():
    # 6 warps x 4 k-steps x (A + B): each wmma.load of a 16x16 f16 tile is 4 LDG.32 of 8 sectors
    # (registers 4-7 repeat 0-3 and are not loaded again); the f32 store is 4 STG.64 of 8 sectors.
    _, ex = run("hgemm_wmma")
    assert ex.stats["global_load_requests"] == 6 * 4 * 2 * 4
    assert ex.stats["global_store_requests"] == 6 * 4
    assert ex.stats["global_load_sectors"] == 6 * 4 * 2 * 32
    assert ex.stats["load_bytes_by_space"]["global"] == 48 * 64 * 2 * 2 + 32 * 64 * 2 * 3


def test_global_atomics_have_their_own_sector_count():
    # one atom.global.add.f32 per block (lane 0 of warp 0) on one word: 4 requests of 1 sector,
    # none of them in the load or store counters (ncu's op_st sectors are 0 for this kernel)
    _, ex = run("reduce_sum")
    assert (ex.stats["global_atomic_requests"], ex.stats["global_atomic_sectors"]) == (4, 4)
    assert ex.stats["global_store_requests"] == 0
    assert ex.stats["global_sectors"] == ncu("reduce_sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") + 4


def test_out_of_bounds_write_is_reported_with_thread_and_source_line():
    _, ex = run("oob_write")
    (p,) = ex.problems
    assert p.kind == "out_of_bounds"
    text = str(p)
    assert "oob_write.cu:4" in text and "thread=(72, 0, 0)" in text and "cta=(1, 0, 0)" in text
    assert "4 bytes past the end of 800 bytes" in text
    assert p.buffer == "out (param 1): 4 bytes past the end of 800 bytes"   # the spec's name, not the PTX's
    # every in-bounds result is still there
    x = ex.inputs["x"]
    assert np.array_equal(ex.outputs["out"], 2.0 * x)


def test_missing_barrier_is_reported_as_a_race_where_compute_sanitizer_reports_it():
    _, ex = run("missing_sync")
    races = [p for p in ex.problems if p.kind == "shared_race"]
    assert races and len(races) == len(ex.problems)
    assert all("missing_sync.cu:9" in str(p) for p in races)
    report = (H200 / "sanitizer.txt").read_text()
    assert "Write access at missing_sync+0x220 in missing_sync.cu:7" in report
    assert "Read access at missing_sync+0x260 in missing_sync.cu:9" in report


def test_uninitialised_shared_read_is_reported():
    _, ex = run("uninit_smem")
    kinds = {p.kind for p in ex.problems}
    assert kinds == {"uninitialized_shared"}
    assert all("uninit_smem.cu:8" in str(p) for p in ex.problems)


def test_valid_examples_report_nothing_and_bugs_report_something():
    for name in KERNELS:
        assert run(name)[1].problems == (), name
    for name in BUGS:
        assert run(name)[1].problems, name
