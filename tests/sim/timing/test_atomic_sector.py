"""L2 atomics serialised per 32-byte sector (examples/h200/pipe_atomic, measured on the H200;
sim/timing/streams.py)."""

import numpy as np
import pytest

import isa
import sim
from sim.timing import h200
from sim.timing.sm import load_params
from tests.sim.timing.test_fma_pipe import _kernel


N = 264 * 256                     # threads of the launches below: one red each


def _atomics(words: int, spacing: int, floats: int | None = None) -> dict:
    """The timing of 264 CTAs x 256 threads, each warp adding 1.0 to one of ``words`` hot words
    ``spacing`` bytes apart (warp w to word w mod words); ``floats``: the buffer's size, if not words x 32."""
    body = f"""    shr.u32 %r6, %r4, 5;
    and.b32 %r6, %r6, {words - 1};
    mul.wide.u32 %rd5, %r6, {spacing};
    add.s64 %rd6, %rd2, %rd5;
    red.global.add.f32 [%rd6], %f1;"""
    out = np.zeros(floats or words * 32, np.float32)
    return sim.run_kernel(isa.loads(_kernel(body)), "k", 264, 256, [out, np.uint32(0)], timing="h200",
                          sample="all").timing


def _service(k: int) -> float:
    """The model's cycles per operation of one L2 atomic unit over k hot sectors of equal share."""
    lat = load_params("h200").lat
    c, t = lat["atomic_same_address"], lat["atomic_unit_issue"]
    return t + (c - t) / k


def test_atomics_to_one_sector_serialise_like_one_address():
    """2-8 hot words of one 32-byte sector take the time of one hot word at the L2 (atomic_spacing_8x4:
    472,895 cycles, atomic_spacing_1: 472,913); 8 words 128 bytes apart do not share the sector: lines
    0-7 are homed in two L2 atomic units ({0, 1, 4, 5} and {2, 3, 6, 7}, sim/timing/l2slice.py) of four
    hot sectors each, the two units of one L2 slice, which starts the operations to sector 0 of its
    lines at most one per atomic_slice_issue (test_one_slice_bounds_eight_lines_at_one_sector_place)."""
    lat = load_params("h200").lat
    t = {s: _atomics(8, s) for s in (4, 128)}
    assert t[4]["atomic_cycles"] == pytest.approx(N * lat["atomic_same_address"])
    assert t[4]["bound"] == "atomics (same address)"
    assert t[128]["atomic_cycles"] == pytest.approx(N * lat["atomic_slice_issue"])
    assert t[128]["atomic_cycles"] > N / 2 * _service(4)


def test_one_slice_bounds_eight_lines_at_one_sector_place():
    """examples/h200/repeat, medians of 21 ncu launches less launch_overhead 4,120: 8 hot words 128 bytes
    apart (sector 0 of lines 0-7, the two units of one slice) take 160,962 cycles for 135,168 operations
    (atomic_spacing_8x128, the fit row of atomic_slice_issue; atomic_addrs_8, the same addresses: 161,928),
    where the two units alone would take 4 x 16,896 x 2.09 = 141,251; 16 and 32 lines 128 bytes apart are
    2 and 4 slices (16x128: 86,400 measured; 32x128: 40,284). 4 sectors of each of lines 0-3 (one slice,
    four places in the line: atomic_spacing_16x32, 122,930) are not bound by it but by their units."""
    lat = load_params("h200").lat
    q = lat["atomic_slice_issue"]
    for words, slices in ((8, 1), (16, 2), (32, 4)):
        assert _atomics(words, 128)["atomic_cycles"] == pytest.approx(N / slices * q)
    # 16 words 32 bytes apart: lines 0-3, units {0, 1} and {2, 3} with 8 hot sectors each
    assert _atomics(16, 32)["atomic_cycles"] == pytest.approx(N / 2 * _service(8))


def test_hot_sectors_of_one_line_share_its_unit():
    """4 hot words 32 bytes apart (4 sectors of one 128-byte line) share the line's L2 atomic unit,
    which pipelines operations to different sectors (atomic_spacing_4x32, median of 8 ncu launches
    284,165 cycles, one word 473,710), not 4 x; of 4 words 128 bytes apart (one per line) lines 0 and 1
    share a unit (examples/h200/atomic_slice), lines 2 and 3 another."""
    t = {s: _atomics(4, s) for s in (32, 128)}
    assert t[32]["atomic_cycles"] == pytest.approx(N * _service(4))
    assert t[128]["atomic_cycles"] == pytest.approx(N / 2 * _service(2))


def test_more_hot_sectors_of_a_line_go_faster():
    """The unit serialises operations to one sector but starts one to another sector
    atomic_unit_issue after the last: with requests from every SM interleaved at random, 4 hot sectors
    of a line are faster than 2 (examples/h200/repeat, medians of 21 ncu launches, less launch_overhead 4,120:
    one sector (atomic_spacing_1) 474,213 cycles, atomic_spacing_2x32 350,141 = 1.36 x its rate, 4x32 287,077
    = 1.66 x (the fit row), 8x32 245,640 = 1.95 x). The rule before this gave 2 and 4 sectors the same time."""
    t2, t4, t8 = (_atomics(k, 32)["atomic_cycles"] for k in (2, 4, 8))
    c = load_params("h200").lat["atomic_same_address"]
    assert N * c / t2 == pytest.approx(1.36, abs=0.02)
    assert N * c / t4 == pytest.approx(1.66, abs=0.02)
    # 8 sectors: lines 0 and 1, one unit (the model 1.87 x)
    assert N * c / t8 == pytest.approx(1.95, rel=0.05)


def test_unit_service_by_hand():
    c, t = 3.0, 1.0
    assert h200.atomic_unit_service({5: 100}, c, t) == c
    assert h200.atomic_unit_service({5: 50, 6: 50}, c, t) == pytest.approx(2.0)
    # a skewed pair: the hot sector's operations follow one another more often
    assert h200.atomic_unit_service({5: 75, 6: 25}, c, t) == pytest.approx(1.0 + 2.0 * (0.75 ** 2 + 0.25 ** 2))
