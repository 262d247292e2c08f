"""The L2 / DRAM side of the H200 timing model on small cases: DRAM granules, L2 hit accounting,
L2 capacity, the cost of writes at L2."""

import numpy as np
import pytest

import isa
import sim


def _strided(stride_bytes: int, loads: int = 4) -> str:
    """Each thread loads ``loads`` floats ``stride_bytes`` apart (thread t starts at t * stride_bytes,
    load k at k * threads * stride_bytes) and stores their sum."""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
    .reg .f32 %f<16>; .reg .b32 %r<16>; .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r5, %nctaid.x;
    mul.lo.s32 %r7, %r5, %r3;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mov.f32 %f1, 0f00000000;
{chr(10).join(f'''    mad.lo.s32 %r8, %r7, {k}, %r4;
    mul.wide.u32 %rd3, %r8, {stride_bytes};
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f2, [%rd4];
    add.f32 %f1, %f1, %f2;''' for k in range(loads))}
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    ret;
}}
"""


def _run_strided(stride_bytes: int, grid: int = 8, block: int = 128, loads: int = 4):
    n = grid * block * loads * stride_bytes // 4
    src = np.ones(n, np.float32)
    out = np.zeros(grid * block, np.float32)
    r = sim.run_kernel(isa.loads(_strided(stride_bytes, loads)), "k", grid, block, [src, out], timing="h200",
                       sample="all")
    assert np.all(out == loads)
    return r.timing


def test_dram_moves_64_byte_granules():
    # one 4-byte load per 32-byte sector: every sector read is whole in DRAM terms (32 B each) at a
    # 32-byte stride, alone in its 64-byte granule at a 64- or 128-byte stride (64 B each)
    t32, t64, t128 = (_run_strided(s) for s in (32, 64, 128))
    sectors = 8 * 128 * 4
    assert t32["memory"]["dram_bytes_read"] == pytest.approx(32 * sectors)
    assert t64["memory"]["dram_bytes_read"] == pytest.approx(64 * sectors)
    assert t128["memory"]["dram_bytes_read"] == pytest.approx(64 * sectors)
    assert t64["dram_cycles"] == pytest.approx(2 * t32["dram_cycles"], rel=0.02)
