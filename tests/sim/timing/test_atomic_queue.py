"""Same-address atomics from the whole chip queue at their L2 slice, and an ``.acquire`` waits for
its atomic (sim.timing.h200.predict, sim.timing.sm): a reduction's last step, one thread per CTA
adding its partial to one address, as Triton writes it (``atom.global.gpu.acq_rel.add.f32`` between
two ``bar.sync``)."""

import numpy as np
import pytest

import isa
import sim

SRC = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 acc)
{
    .reg .pred %p<2>; .reg .f32 %f<4>; .reg .b32 %r<4>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [acc];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    mov.f32 %f1, 0f3F800000;
    bar.sync 0;
    @%p1 atom.global.gpu.SEM.add.f32 %f2, [%rd2], %f1;
    bar.sync 0;
    ret;
}
"""
CTAS = 132 * 16          # 16 CTAs of 4 warps per SM: one wave, 2,112 atomics to one address


def _timing(sem: str) -> dict:
    acc = np.zeros(1, np.float32)
    r = sim.run_kernel(isa.loads(SRC.replace("SEM", sem)), "k", CTAS, 128, [acc], timing="h200")
    return r.timing


def test_acquire_atomics_wait_their_turn_at_the_slice_and_the_cta_waits_at_the_barrier():
    tm = _timing("acq_rel")
    # 2,112 atomics one after the other at 3.47 cycles (h200.toml atomic_same_address) = 7,329
    # cycles, far more than one wave of these CTAs takes on its own: each atomic waits in the
    # slice's queue until the SMs' time is the serial time
    assert tm["atomic_cycles"] == pytest.approx(CTAS * 3.47, rel=1e-3)
    assert tm["atomic_wait"] > 0.5 * tm["atomic_cycles"]
    assert tm["sm_cycles"] == pytest.approx(tm["atomic_cycles"], rel=0.1)
    # the acquiring warp waits for its atomic (long_scoreboard), its CTA's three other warps for it
    # at the barrier: three warps' barrier wait for each one's scoreboard wait
    st = tm["stalls"]
    assert st["barrier"] == pytest.approx(3 * st["long_scoreboard"], rel=0.25)
    assert tm["top_stall"] == "barrier"


def test_a_relaxed_atomic_whose_result_is_unused_is_waited_for_only_at_exit():
    """Nothing after it waits for a relaxed atomic: no barrier wait; but the warp's exit waits until
    it is performed at L2 (ncu's drain: examples/h200/microbench.json atomic_same, 7,511 warps per
    issue), so the launch's SM time is still the slice's serial time."""
    tm = _timing("relaxed")
    assert tm["atomic_wait"] > 0.0
    assert tm["sm_cycles"] == pytest.approx(tm["atomic_cycles"], rel=0.1)
    assert tm["stalls"].get("barrier", 0.0) < 0.1 * _timing("acq_rel")["stalls"]["barrier"]
    assert tm["top_stall"] == "drain"
