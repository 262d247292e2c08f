"""Divergence, reconvergence, exits, barriers, state spaces and launch plumbing."""

from __future__ import annotations

import numpy as np

import isa
import sim

from .kernels import ptx, run_body


def test_if_else_divergence_reconverges():
    body = """and.b32 %r3, %r1, 1; setp.eq.u32 %p1, %r3, 0;
              @%p1 bra EVEN;
              mul.lo.s32 %r2, %r1, 3; bra.uni JOIN;
              EVEN: mul.lo.s32 %r2, %r1, 5;
              JOIN: add.s32 %r2, %r2, 1000;"""
    out, res = run_body(body, threads=64)
    t = np.arange(64)
    assert out.tolist() == list(np.where(t % 2 == 0, 5 * t, 3 * t) + 1000)
    # the join point ran once per warp, not once per path
    assert res.stats["opcodes"]["add.s32"] == 2


def test_loop_with_per_thread_trip_count():
    body = """mov.u32 %r3, 0; mov.u32 %r2, 0;
              LOOP: setp.ge.u32 %p1, %r3, %r1; @%p1 bra DONE;
              add.s32 %r2, %r2, %r3; add.s32 %r3, %r3, 1; bra.uni LOOP;
              DONE:"""
    out, res = run_body(body, threads=96, ctas=2)
    t = np.arange(96)
    assert out[:96].tolist() == list(t * (t - 1) // 2)


def test_exit_inside_divergent_code_and_thread_counts():
    body = """setp.lt.u32 %p1, %r1, 8; @%p1 bra EARLY; add.s32 %r2, %r1, 1; bra.uni END;
              EARLY: mov.u32 %r2, 77; st.global.u32 [%rd10], %r2; ret;
              END:"""
    out, res = run_body(body, threads=40)
    assert out.tolist() == [77] * 8 + list(range(9, 41))
    st = res.stats
    # 40 threads = 2 warps (the second has 8 live lanes). The early ret runs once (warp 0, 8 threads),
    # the final ret twice (rest of warp 0, warp 1): 3 warp-instructions, 40 thread-instructions.
    assert st["opcode_threads"]["ret"] == 40
    assert st["opcodes"]["ret"] == 3


def test_block_not_multiple_of_32_and_2d_ids():
    src = ptx("""mov.u32 %r3, %tid.y; mov.u32 %r4, %ntid.x; mad.lo.s32 %r5, %r3, %r4, %r1;
                 mov.u32 %r6, %ctaid.x; mov.u32 %r7, %nctaid.x; mul.lo.s32 %r8, %r6, 1000;
                 add.s32 %r2, %r8, %r5; mul.wide.u32 %rd5, %r5, 4; add.s64 %rd10, %rd1, %rd5;
                 mov.u32 %r9, %laneid; mov.u32 %r10, %warpid;""")
    out = np.zeros(7 * 3, np.uint32)
    module = isa.loads(src)
    res = sim.run_kernel(module, "k", (1, 1, 1), (7, 3, 1), [out, np.zeros(1, np.uint32), np.int32(0)])
    assert out.tolist() == list(range(21))
    n = len(module.kernels[0].instructions)          # straight-line code: every thread runs all of it
    assert res.stats["thread_instructions"] == 21 * n
    assert res.stats["warp_instructions"] == n


def test_shared_memory_across_warps_with_barrier():
    body = """shl.b32 %r3, %r1, 2; mov.u32 %r4, smem; add.s32 %r5, %r4, %r3;
              st.shared.u32 [%r5], %r1; bar.sync 0;
              xor.b32 %r6, %r3, 128; add.s32 %r7, %r4, %r6; ld.shared.u32 %r2, [%r7];"""
    out, res = run_body(body, threads=64)
    assert out.tolist() == [t ^ 32 for t in range(64)]
    assert not res.problems
    assert res.stats["shared_load_wavefronts"] == 2 and res.stats["shared_store_wavefronts"] == 2


def test_generic_addressing_of_shared_memory():
    body = """shl.b32 %r3, %r1, 2; mov.u32 %r4, smem; add.s32 %r5, %r4, %r3;
              cvt.u64.u32 %rd5, %r5; cvta.shared.u64 %rd6, %rd5;
              add.s32 %r8, %r1, 100; st.u32 [%rd6], %r8; ld.shared.u32 %r2, [%r5];"""
    out, res = run_body(body)
    assert out.tolist() == [t + 100 for t in range(32)]
    assert res.stats["bytes_by_space"]["shared"] == 2 * 32 * 4


def test_vector_loads_and_stores():
    x = np.arange(128, dtype=np.float32)
    body = """mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd2, %rd5;
              ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd6];
              add.f32 %f5, %f1, %f2; add.f32 %f5, %f5, %f3; add.f32 %f5, %f5, %f4; mov.b32 %r2, %f5;"""
    out, _ = run_body(body, x.view(np.uint32))
    assert out.view(np.float32).tolist() == [float(16 * t + 6) for t in range(32)]


def test_struct_param_by_value_and_addressable():
    src = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_out, .param .align 8 .b8 k_s[16])
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_out];
    ld.param.u32 %r1, [k_s+4];
    mov.b64 %rd2, k_s;
    ld.param.v2.u32 {%r2, %r3}, [%rd2+8];
    add.s32 %r4, %r1, %r2;
    add.s32 %r4, %r4, %r3;
    st.global.u32 [%rd1], %r4;
    ret;
}
"""
    out = np.zeros(1, np.uint32)
    s = np.array([1, 20, 300, 4000], np.uint32)
    sim.run_kernel(isa.loads(src), "k", 1, 1, [out, s])
    assert out[0] == 4320


def test_const_initialiser_little_endian():
    src = """
.version 8.0
.target sm_80
.address_size 64
.const .align 4 .b8 cvals[16] = {0, 0, 128, 63, 0, 0, 32, 64, 0, 0, 64, 192, 205, 204, 204, 61};
.visible .entry k(.param .u64 k_out)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_out];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, cvals;
    add.s32 %r4, %r3, %r2;
    ld.const.f32 %f1, [%r4];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f1;
    ret;
}
"""
    out = np.zeros(4, np.float32)
    sim.run_kernel(isa.loads(src), "k", 1, 4, [out])
    assert out.tolist() == [1.0, 2.5, -3.0, np.float32(0.1)]


def test_events_reach_listeners_only_when_registered():
    seen = []

    def listener(ev):
        seen.append(ev)

    body = "ld.global.u32 %r2, [%rd11]; add.s32 %r2, %r2, 1;"
    out, _ = run_body(body, np.arange(64, dtype=np.uint32), threads=64, listeners=[listener])
    mem = [e for e in seen if e.kind == "load" and e.space == "global"]
    assert len(mem) == 1 and mem[0].addresses.shape == (2, 32) and mem[0].width == 4
    warps = list(mem[0].per_warp())
    assert [w.warp for w in warps] == [0, 1] and warps[1].addresses[1] - warps[1].addresses[0] == 4
    assert any(e.opcode == "add.s32" for e in seen)
    assert out.tolist() == list(range(1, 65))


def test_kernel_args_are_updated_in_place_and_scalars_typed():
    body = "ld.param.u32 %r3, [k_n]; ld.global.f32 %f1, [%rd11]; cvt.rn.f32.s32 %f2, %r3; " \
           "mul.f32 %f3, %f1, %f2; mov.b32 %r2, %f3;"
    x = np.linspace(0, 1, 32).astype(np.float32)
    out, _ = run_body(body, x.view(np.uint32), n=-3)
    assert out.view(np.float32).tolist() == (x * np.float32(-3)).tolist()


def test_max_steps_stops_an_endless_loop():
    out, res = run_body("LOOP: add.s32 %r2, %r2, 1; bra.uni LOOP;", max_steps=500)
    assert [p.kind for p in res.problems] == ["max_steps"]



SPLIT_BARRIER = """
    shr.u32 %r3, %r1, 5;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r9, smem;
    add.u32 %r8, %r9, %r4;
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra W0;
    add.u32 %r5, %r1, 1000;
    st.shared.u32 [%r8], %r5;
    bar.sync {b1};
    ld.shared.u32 %r2, [%r8+-128];
    bra.uni END;
W0:
    add.u32 %r5, %r1, 2000;
    st.shared.u32 [%r8], %r5;
    bar.sync {b0};
    ld.shared.u32 %r2, [%r8+128];
END:
"""


def test_warps_meeting_at_different_bar_sync_instructions_synchronise():
    # warp 1 reaches its bar.sync first (the fall-through path runs first), waits for warp 0 at
    # another bar.sync with the same id; each then reads what the other warp stored before it
    out, res = run_body(SPLIT_BARRIER.format(b0=0, b1=0), threads=64)
    assert res.problems == []
    t = np.arange(64)
    assert out.tolist() == np.where(t < 32, t + 32 + 1000, t - 32 + 2000).tolist()


def test_different_barrier_ids_are_a_divergence():
    _, res = run_body(SPLIT_BARRIER.format(b0=1, b1=0), threads=64)
    kinds = {p.kind for p in res.problems}
    assert "barrier_divergence" in kinds


def test_bar_sync_with_a_thread_count():
    # bar.sync 1, 64 over all 64 threads: each warp reads what the other stored before it
    body = """mul.lo.u32 %r5, %r1, 4; mov.u32 %r6, smem; add.u32 %r5, %r5, %r6;
              st.shared.u32 [%r5], %r1; bar.sync 1, 64;
              xor.b32 %r7, %r1, 32; mul.lo.u32 %r7, %r7, 4; add.u32 %r7, %r7, %r6;
              ld.shared.u32 %r2, [%r7];"""
    out, res = run_body(body, threads=64)
    assert res.problems == []
    assert np.array_equal(out, np.arange(64) ^ 32)


def test_bar_red_popc_counts_the_predicate_over_the_cta():
    body = """setp.lt.u32 %p1, %r1, 40; bar.red.popc.u32 %r2, 0, %p1;"""
    out, res = run_body(body, threads=64)
    assert res.problems == []
    assert np.array_equal(out, np.full(64, 40))


def test_counted_barrier_reached_by_part_of_the_cta_is_not_a_divergence():
    # warps 0-1 meet at named barrier 1 with a count of 64; warp 2 never comes, legally
    body = """setp.lt.u32 %p1, %r1, 64; @%p1 bar.sync 1, 64; mov.u32 %r2, %r1;"""
    out, res = run_body(body, threads=96)
    assert res.problems == []
    assert np.array_equal(out, np.arange(96))
