"""Asynchronous copies, mbarrier phases and their completion (sim.ptx.completion).

Each body runs with the prologue of :mod:`tests.sim.ptx.kernels` (``%r1`` = tid.x, ``%rd11`` =
&in[tid], ``%rd2`` = in, ``%r2`` stored to out[tid] at the end)."""

from __future__ import annotations

import numpy as np

import isa
import sim

from .kernels import ptx, run_body

# smem word of thread t: %r10 = smem + 4*t ... cp.async wants 4/8/16 bytes: 4 here
SETUP = """mov.u32 %r9, smem; shl.b32 %r8, %r1, 2; add.s32 %r10, %r9, %r8;"""


def kinds(res):
    return sorted({p.kind for p in res.problems})


def test_cp_async_lands_at_wait_group_not_at_issue():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + """
        st.shared.u32 [%r10], 7;
        bar.sync 0;
        cp.async.ca.shared.global [%r10], [%rd11], 4;
        cp.async.commit_group;
        cp.async.wait_group 0;
        ld.shared.u32 %r2, [%r10];"""
    out, res = run_body(body, inp)
    assert out.tolist() == inp.tolist() and not res.problems


def test_reading_the_destination_before_the_wait_sees_old_bytes_and_is_an_async_race():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + """
        st.shared.u32 [%r10], 7;
        bar.sync 0;
        cp.async.ca.shared.global [%r10], [%rd11], 4;
        cp.async.commit_group;
        ld.shared.u32 %r2, [%r10];
        cp.async.wait_group 0;"""
    out, res = run_body(body, inp)
    assert out.tolist() == [7] * 32                     # the copy has not landed yet
    assert kinds(res) == ["async_race"]
    p = res.problems[0]
    assert p.instruction.startswith("ld.shared.u32") and p.thread == (0, 0, 0) and "cp.async" in p.message


def test_wait_group_one_leaves_the_newest_group_in_flight():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + """
        add.s32 %r11, %r10, 128;
        st.shared.u32 [%r10], 7;
        st.shared.u32 [%r11], 8;
        bar.sync 0;
        cp.async.ca.shared.global [%r10], [%rd11], 4;
        cp.async.commit_group;
        cp.async.ca.shared.global [%r11], [%rd11], 4;
        cp.async.commit_group;
        cp.async.wait_group 1;
        ld.shared.u32 %r3, [%r10];
        cp.async.wait_all;
        ld.shared.u32 %r4, [%r11];
        add.s32 %r2, %r3, %r4;"""
    out, res = run_body(body, inp)
    assert out.tolist() == (2 * inp).tolist() and not res.problems


def test_cp_async_mbarrier_arrive_noinc_completes_the_phase():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + """
        .shared .align 8 .b64 bar;
        mov.u32 %r20, bar;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 mbarrier.init.shared.b64 [%r20], 32;
        bar.sync 0;
        cp.async.ca.shared.global [%r10], [%rd11], 4;
        cp.async.mbarrier.arrive.noinc.shared.b64 [%r20];
    WAIT:
        mbarrier.try_wait.parity.shared.b64 %p2, [%r20], 0;
        @!%p2 bra WAIT;
        ld.shared.u32 %r2, [%r10];"""
    out, res = run_body(body, inp)
    assert out.tolist() == inp.tolist() and not res.problems


MBAR = """
        .shared .align 8 .b64 bar;
        .reg .b64 %rdb<4>;
        mov.u32 %r20, bar;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 mbarrier.init.shared::cta.b64 [%r20], 1;
        bar.sync 0;
"""


def test_bulk_copy_completes_tx_on_the_mbarrier_at_the_wait():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + MBAR + """
        @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rdb1, [%r20], 128;
        @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd2], 128, [%r20];
    WAIT:
        mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;
        @!%p2 bra WAIT;
        ld.shared.u32 %r2, [%r10];"""
    out, res = run_body(body.replace("sm_80", "sm_90"), inp)
    assert out.tolist() == inp.tolist() and not res.problems


def test_bulk_copy_destination_read_before_the_wait_is_an_async_race():
    inp = np.arange(100, 132, dtype=np.uint32)
    body = SETUP + MBAR + """
        @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rdb1, [%r20], 128;
        @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd2], 128, [%r20];
        ld.shared.u32 %r2, [%r10];
    WAIT:
        mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;
        @!%p2 bra WAIT;"""
    out, res = run_body(body, inp)
    assert kinds(res) == ["async_race", "uninitialized_shared"] or kinds(res) == ["async_race"]
    assert out.tolist() == [0] * 32


def test_phase_parity_and_state_tokens():
    """Two phases: parity 0 completes first, then parity 1; a token from arrive names its phase."""
    body = MBAR + """
        .reg .b64 %rdt;
        @%p1 mbarrier.arrive.shared::cta.b64 %rdt, [%r20];
        mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r20], 0;   // phase 0 done
        mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r20], 1;   // phase 1 not yet
        @%p1 mbarrier.test_wait.shared::cta.b64 %p5, [%r20], %rdt;   // the token's phase is done
        selp.u32 %r3, 1, 0, %p3;
        selp.u32 %r4, 2, 0, %p4;
        selp.u32 %r5, 4, 0, %p5;
        add.s32 %r2, %r3, %r4;
        add.s32 %r2, %r2, %r5;"""
    out, res = run_body(body)
    assert out[0] == 5 and out[1:].tolist() == [1] * 31 and not res.problems


def test_try_wait_that_can_never_succeed_is_a_deadlock_not_a_hang():
    body = """
        .shared .align 8 .b64 bar;
        mov.u32 %r20, bar;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 mbarrier.init.shared::cta.b64 [%r20], 2;
        bar.sync 0;
        @%p1 mbarrier.arrive.shared::cta.b64 _, [%r20];
    WAIT:
        mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;
        @!%p2 bra WAIT;
        mov.u32 %r2, 9;"""
    out, res = run_body(body, ctas=2)
    dl = [p for p in res.problems if p.kind == "deadlock"]
    assert {p.cta for p in dl} == {(0, 0, 0), (1, 0, 0)}
    assert dl[0].instruction.startswith("mbarrier.try_wait") and dl[0].thread == (0, 0, 0)
    assert "1 pending arrival" in dl[0].message
    assert out.tolist() == [0] * 64                     # the waiting threads never got past it


def test_producer_and_consumer_warps_on_divergent_paths():
    """Warp 1 waits on the mbarrier before warp 0 (on the other path) issues the copy: the
    waiting path yields to its sibling instead of spinning forever."""
    inp = np.arange(100, 164, dtype=np.uint32)
    body = SETUP + MBAR + """
        setp.lt.u32 %p6, %r1, 32;
        @%p6 bra PRODUCER;
    WAIT:
        mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;
        @!%p2 bra WAIT;
        sub.s32 %r12, %r10, 128;
        ld.shared.u32 %r2, [%r12];
        bra DONE;
    PRODUCER:
        @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rdb1, [%r20], 128;
        @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd2], 128, [%r20];
        mov.u32 %r2, 1;
    DONE:"""
    out, res = run_body(body, inp, threads=64)
    assert not res.problems, res.problems
    assert out[:32].tolist() == [1] * 32 and out[32:].tolist() == inp[:32].tolist()


def test_async_events_for_listeners():
    inp = np.arange(100, 132, dtype=np.uint32)
    seen = []

    class L:
        memory_only = True

        def __call__(self, ev):
            pass

        def on_async(self, ev):
            seen.append((ev.kind, ev.op, len(ev.ctas), ev.bytes))

    body = SETUP + """
        cp.async.ca.shared.global [%r10], [%rd11], 4;
        cp.async.commit_group;
        cp.async.wait_group 0;
        ld.shared.u32 %r2, [%r10];"""
    module = isa.loads(ptx(body))
    out = np.zeros(32, np.uint32)
    sim.run_kernel(module, "k", 1, 32, [out, inp, np.int32(0)], listeners=[L()])
    assert seen == [("issue", "cp.async", 32, 128), ("complete", "cp.async", 32, 128)]
