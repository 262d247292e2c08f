"""A spin loop on a global flag that nothing will set does not hang the simulator: it is a
``deadlock`` problem (kernel, the loop's branch and line, CTA, thread, what the exit test reads),
the spinning threads stop and everything else computed is kept. A flag that another path of the
same batch sets (a sibling on the divergence stack) or a buffered relaxed store is waited for."""

from __future__ import annotations

import numpy as np
import pytest

import isa
import sim

# CTA 0's thread 0 writes out[0] = 7, then waits for flag != 0 and writes out[2] = flag;
# CTA 1's thread 0 writes out[1] = 9 and sets the flag (unless NOSET).
PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 spin_flag, .param .u64 spin_out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [spin_flag];
    ld.param.u64 %rd2, [spin_out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, %ctaid.x;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra CONSUMER;
    mov.u32 %r3, 9;
    st.global.u32 [%rd2+4], %r3;
    mov.u32 %r4, 1;
    SETFLAG
    bra DONE;
CONSUMER:
    mov.u32 %r5, 7;
    st.global.u32 [%rd2], %r5;
WAIT:
    ld.volatile.global.u32 %r6, [%rd1];
    setp.eq.u32 %p3, %r6, 0;
    @%p3 bra WAIT;
    st.global.u32 [%rd2+8], %r6;
DONE:
    ret;
}
"""
LINE_OF_BRANCH = PTX.splitlines().index("    @%p3 bra WAIT;") + 1


def _run(setflag="st.volatile.global.u32 [%rd1], %r4;", **kw):
    mod = isa.loads(PTX.replace("SETFLAG", setflag))
    flag = np.zeros(1, np.uint32)
    out = np.zeros(3, np.uint32)
    r = sim.run_kernel(mod, "spin", 2, 32, [flag, out], memory_stats=False, **kw)
    return out, r


def test_a_flag_a_later_cta_sets_is_a_deadlock_not_a_hang():
    # one CTA per batch: CTA 0 runs to the end before CTA 1 starts, so its flag never comes
    out, r = _run(batch_threads=32)
    dead = [p for p in r.problems if p.kind == "deadlock"]
    assert len(dead) == 1, r.problems
    p = dead[0]
    assert p.kernel == "spin" and p.ptx_line == LINE_OF_BRANCH and "bra" in p.instruction and "WAIT" in p.instruction
    assert p.cta == (0, 0, 0) and p.thread == (0, 0, 0)
    assert "spin loop never ends" in p.message and "a CTA that runs after it" in p.message
    assert "setp.eq.u32 %p3, %r6, 0" in p.message and "%r6 = 0" in p.message
    assert not [q for q in r.problems if q.kind == "max_steps"]
    assert r.stats["warp_instructions"] < 40_000          # stopped after a few thousand iterations
    # what was computed is kept: CTA 0's store before the loop, and CTA 1 (run after) set the flag
    assert out.tolist() == [7, 9, 0]


def test_a_sibling_path_of_the_same_batch_that_sets_the_flag_runs():
    out, r = _run()                                       # both CTAs in one batch
    assert [p for p in r.problems if p.kind in ("deadlock", "max_steps")] == []
    assert out.tolist() == [7, 9, 1]


def test_a_flag_that_is_never_set_is_a_deadlock_in_one_batch_too():
    out, r = _run(setflag="")
    (p,) = [p for p in r.problems if p.kind == "deadlock"]
    assert p.ptx_line == LINE_OF_BRANCH and "a CTA that runs after it" not in p.message
    assert out.tolist() == [7, 9, 0]


@pytest.mark.parametrize("seed", [0, 3])
def test_a_buffered_relaxed_flag_store_is_waited_for(seed):
    out, r = _run(setflag="st.relaxed.gpu.global.u32 [%rd1], %r4;", memory_model="relaxed", seed=seed)
    assert [p for p in r.problems if p.kind in ("deadlock", "max_steps")] == []
    assert out.tolist() == [7, 9, 1]
