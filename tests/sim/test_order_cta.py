"""Release/acquire between warps of one CTA orders their global accesses for the race detector
(``sim.ptx.order.Order._within_cta``): no ``global_race`` for data published through a released
flag, at ``.cta`` or ``.gpu`` scope, or through fences around relaxed flag accesses; a plain flag
still races."""

from __future__ import annotations

import numpy as np
import pytest

import isa
import sim

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_mem, .param .u64 k_out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_mem];
    ld.param.u64 %rd2, [k_out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    add.s64 %rd3, %rd1, 128;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    setp.lt.u32 %p2, %r1, 32;
    @%p2 bra PRODUCER;
WAIT:
    READFLAG
    setp.eq.u32 %p3, %r5, 0;
    @%p3 bra WAIT;
    ACQFENCE
    ld.global.u32 %r6, [%rd1];
    st.global.u32 [%rd2], %r6;
    bra DONE;
PRODUCER:
    mov.u32 %r4, 42;
    st.global.u32 [%rd1], %r4;
    RELFENCE
    WRITEFLAG
DONE:
    ret;
}
"""
FORMS = {   # name: (read flag, acquire fence, release fence, write flag, races)
    "release_acquire_cta": ("ld.acquire.cta.global.u32 %r5, [%rd3];", "", "", "st.release.cta.global.u32 [%rd3], 1;", False),
    "release_acquire_gpu": ("ld.acquire.gpu.global.u32 %r5, [%rd3];", "", "", "st.release.gpu.global.u32 [%rd3], 1;", False),
    "fences_cta": ("ld.relaxed.cta.global.u32 %r5, [%rd3];", "fence.acq_rel.cta;", "fence.acq_rel.cta;",
                   "st.relaxed.cta.global.u32 [%rd3], 1;", False),
    "no_release": ("ld.acquire.cta.global.u32 %r5, [%rd3];", "", "", "st.relaxed.cta.global.u32 [%rd3], 1;", True),
    "no_acquire": ("ld.relaxed.cta.global.u32 %r5, [%rd3];", "", "", "st.release.cta.global.u32 [%rd3], 1;", True),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_release_acquire_within_one_cta(name):
    rd, acq, rel, wr, races = FORMS[name]
    mod = isa.loads(PTX.replace("READFLAG", rd).replace("ACQFENCE", acq).replace("RELFENCE", rel)
                    .replace("WRITEFLAG", wr))
    mem = np.zeros(64, np.uint32)
    out = np.zeros(1, np.uint32)
    r = sim.run_kernel(mod, "k", 1, 64, [mem, out], memory_stats=False)
    got = [p for p in r.problems if p.kind == "global_race"]
    assert out[0] == 42
    if races:
        assert got and "ld.global.u32" in got[0].instruction and "st.global.u32" in got[0].message
    else:
        assert r.problems == []
