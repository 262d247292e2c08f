"""L2 atomics serialised per 32-byte sector (examples/h200/pipe_atomic, measured on the H200;
sim/timing/streams.py)."""

import numpy as np
import pytest

import isa
import sim
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


def test_atomics_to_one_sector_serialise_like_one_address():
    """2-8 hot words of one 32-byte sector take the time of one hot word at the L2 (atomic_spacing_8x4:
    472,895 cycles, atomic_spacing_1: 472,913); 8 words 128 bytes apart do not share the sector: lines
    0-7 are homed in two L2 atomic units ({0, 1, 4, 5} and {2, 3, 6, 7}, sim/timing/l2slice.py) of four
    hot lines each, at atomic_line_parallel ** 2 x one sector's rate."""
    lat = load_params("h200").lat["atomic_same_address"]
    t = {s: _atomics(8, s) for s in (4, 128)}
    assert t[4]["atomic_cycles"] == pytest.approx(N * lat)
    assert t[4]["bound"] == "atomics (same address)"
    par = load_params("h200").lat["atomic_line_parallel"]
    assert t[128]["atomic_cycles"] == pytest.approx(N / 2 * lat / par ** 2)


def test_hot_sectors_of_one_line_share_its_unit():
    """4 hot words 32 bytes apart (4 sectors of one 128-byte line): the line's sectors share its
    slice's atomic unit at atomic_line_parallel (1.31) x one sector's rate (atomic_spacing_4x32:
    361,574 cycles, one word 472,913), not 4 x; of 4 words 128 bytes apart (one per line) lines 0 and 1
    share a unit (examples/h200/atomic_slice), lines 2 and 3 have one each."""
    lat = load_params("h200").lat
    t = {s: _atomics(4, s) for s in (32, 128)}
    assert t[32]["atomic_cycles"] == pytest.approx(N * lat["atomic_same_address"] / lat["atomic_line_parallel"])
    assert t[128]["atomic_cycles"] == pytest.approx(N / 2 * lat["atomic_same_address"] / lat["atomic_line_parallel"])
