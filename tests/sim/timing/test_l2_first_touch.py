"""Where a launch's L2 misses fall in the replay: a load sector an SM touches for the first time misses
first, one it touched before hits unless the launch has more misses than first touches
(sim.timing.h200.first_touch_split, the SM's ``l2_hit_first``). examples/h200/l2_sweep read_cg_16m:
16 MiB read 8 times with ``ld.global.cg``, the first pass from DRAM, the other seven from L2."""

import numpy as np
import pytest

import isa
import sim
from sim.timing.h200 import first_touch_split
from sim.timing.sm import SM, OpFacts, load_params

_P = load_params()
_LD = OpFacts("ld.global.cg.v4.f32", "lsu", 0.0, "long_scoreboard", (), (0,), l1_bypass=True)
_ADD = OpFacts("add.f32", "fma", 4.0, "wait", (0,), (1,))


def test_the_misses_go_to_first_touches_first():
    # 16 MiB read 8 times: 1/8 of the sectors miss, and they are the first pass
    assert first_touch_split(0.125, 8.0, 1.0) == pytest.approx((0.0, 1.0))
    # more misses than first touches (a copy past the L2): every first touch misses, the rest of the
    # misses are spread over the re-touches
    assert first_touch_split(0.75, 4.0, 1.0) == pytest.approx((0.0, 1.0 - 2.0 / 3.0))
    # fewer misses than first touches (SMs sharing data: another SM brought most of the lines)
    assert first_touch_split(0.1, 4.0, 2.0) == pytest.approx((0.8, 1.0))
    # nothing re-touched, or nothing first: the rate is the same for all
    assert first_touch_split(0.3, 4.0, 4.0) == pytest.approx((0.7, 0.7))
    assert first_touch_split(0.3, 4.0, 0.0) == pytest.approx((0.7, 0.7))


def _one_warp(passes: int, lines: int, **kw):
    """One warp reading ``lines`` 128-byte lines (one 512-byte .cg load = 4 lines each) ``passes``
    times, one load in flight (each waits for the add of the one before)."""
    sm = SM([_LD, _ADD], _P, ctas_per_sm=1, warps_per_cta=1, l1_lines=4096, dram_bpc=1e6, l2_bpc=1e6, **kw)
    s = []
    for _ in range(passes):
        for i in range(lines // 4):
            s += [(0, (("g", "load", 16, tuple((4 * i + j) * 16 + 15 for j in range(4))),)), (1, None)]
    return sm.run([[s]])


def test_an_sm_misses_on_its_first_touches_only():
    lat = _P.lat
    per = lat["global_dram"] - lat["global_l2"]
    uniform = _one_warp(4, 64, l2_hit=0.75)
    split = _one_warp(4, 64, l2_hit=1.0, l2_hit_first=0.0)
    # a quarter of the sectors are first touches, in the first pass
    assert split.l2_first_sectors == pytest.approx(16 * 16)
    assert uniform.l2_first_sectors == pytest.approx(16 * 16)
    # the same misses in all (one load in flight: the same total latency), but each pass of the
    # split replay is priced as it runs: the first at DRAM latency, the others at L2's
    one = _one_warp(1, 64, l2_hit=1.0, l2_hit_first=0.0)
    assert one.cycles == pytest.approx(16 * (lat["global_dram"] + 4.0), rel=0.05)
    assert split.cycles == pytest.approx(one.cycles + 3 * 16 * (lat["global_l2"] + 4.0), rel=0.05)
    assert split.cycles == pytest.approx(uniform.cycles, rel=0.02)
    assert per > 0


_READ_PASSES = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u32 n)
{
    .reg .f32 %f<8>; .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %p<2>;
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd2, %rd2;
    ld.param.u32 %r9, [n];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r5, 0;
LOOP:
    mul.wide.u32 %rd3, %r4, 16;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.cg.v4.f32 {%f2, %f3, %f4, %f5}, [%rd4];
    add.f32 %f1, %f1, %f2;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p1, %r5, %r9;
    @%p1 bra LOOP;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    ret;
}
"""


def test_a_launch_reading_its_data_again_misses_in_the_first_pass():
    """Each thread reads its own 16 bytes 8 times (.cg): the launch's L2 misses are its first
    touches; the replay prices them there (``replay_l2_hit``: first touches 0, re-touches 1)."""
    grid, block, passes = 8, 128, 8
    src = np.ones(grid * block * 4, np.float32)
    out = np.zeros(grid * block, np.float32)
    r = sim.run_kernel(isa.loads(_READ_PASSES), "k", grid, block, [src, out, np.uint32(passes)], timing="h200",
                       sample="all")
    hit = r.timing["memory"]["replay_l2_hit"]
    assert hit["first_touch"] == pytest.approx(0.0, abs=1e-9)
    assert hit["re_touch"] == pytest.approx(1.0, abs=1e-9)
    assert r.timing["memory"]["dram_bytes_read"] == pytest.approx(src.nbytes, rel=0.01)
