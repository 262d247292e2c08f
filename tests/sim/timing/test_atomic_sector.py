"""L2 atomics serialised per 32-byte sector (examples/h200/pipe_atomic, measured on the H200;
sim/timing/streams.py)."""

import numpy as np
import pytest

import isa
import sim
from sim.timing.sm import load_params


def _kernel(body: str) -> str:
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{{
    .reg .f32 %f<40>; .reg .b32 %r<40>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.f32 %f1, 0f3F800000;
    mov.b32 %r5, 0x3C003C00;
{body}
    ret;
}}
"""



def test_atomics_to_one_sector_serialise_like_one_address():
    """2-8 hot words of one 32-byte sector take the time of one hot word at the L2 (atomic_spacing_8x4:
    472,895 cycles, atomic_spacing_1: 472,913); 8 words 128 bytes apart do not share the sector."""
    lat = load_params("h200").lat["atomic_same_address"]
    body = """    shr.u32 %r6, %r4, 5;
    and.b32 %r6, %r6, 7;
    mul.wide.u32 %rd5, %r6, {s};
    add.s64 %rd6, %rd2, %rd5;
    red.global.add.f32 [%rd6], %f1;"""
    out = np.zeros(8 * 32, np.float32)
    n = 264 * 256
    t = {}
    for s in (4, 128):
        r = sim.run_kernel(isa.loads(_kernel(body.format(s=s))), "k", 264, 256, [out, np.uint32(0)], timing="h200",
                           sample="all")
        t[s] = r.timing
    assert t[4]["atomic_cycles"] == pytest.approx(n * lat)
    assert t[4]["bound"] == "atomics (same address)"
    assert t[128]["atomic_cycles"] == pytest.approx(n / 8 * lat)


def test_hot_sectors_of_one_line_share_its_unit():
    """4 hot words 32 bytes apart (4 sectors of one 128-byte line): the line's sectors share its
    slice's atomic unit at atomic_line_parallel (1.31) x one sector's rate (atomic_spacing_4x32:
    361,574 cycles, one word 472,913), not 4 x; words 128 bytes apart (one per line) do not share."""
    lat = load_params("h200").lat
    body = """    shr.u32 %r6, %r4, 5;
    and.b32 %r6, %r6, 3;
    mul.wide.u32 %rd5, %r6, {s};
    add.s64 %rd6, %rd2, %rd5;
    red.global.add.f32 [%rd6], %f1;"""
    out = np.zeros(4 * 32, np.float32)
    n = 264 * 256
    t = {}
    for s in (32, 128):
        r = sim.run_kernel(isa.loads(_kernel(body.format(s=s))), "k", 264, 256, [out, np.uint32(0)], timing="h200",
                           sample="all")
        t[s] = r.timing
    assert t[32]["atomic_cycles"] == pytest.approx(n * lat["atomic_same_address"] / lat["atomic_line_parallel"])
    assert t[128]["atomic_cycles"] == pytest.approx(n / 4 * lat["atomic_same_address"])
