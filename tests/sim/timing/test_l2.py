"""The L2 / DRAM side of the H200 timing model on small cases: DRAM granules, L2 hit accounting,
L2 capacity, the cost of writes at L2."""

import numpy as np
import pytest

import isa
import sim


def _grid_kernel(loads: str, *, preds: str = "") -> str:
    """The kernel both cases use: each thread (t = ctaid * ntid + tid, %r7 = all threads) runs ``loads``,
    which add into %f1 from ``src`` (%rd1), and stores %f1 to ``out[t]``."""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
    .reg .f32 %f<16>; .reg .b32 %r<16>; .reg .b64 %rd<16>;{preds}
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
{loads}
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    ret;
}}
"""


def _loads(count: int, stride_bytes: int, op: str) -> str:
    """``count`` loads, load k of thread t at src + (k * threads + t) * stride_bytes."""
    return "\n".join(f"""    mad.lo.s32 %r8, %r7, {k}, %r4;
    mul.wide.u32 %rd3, %r8, {stride_bytes};
    add.s64 %rd4, %rd1, %rd3;
    {op} %f2, [%rd4];
    add.f32 %f1, %f1, %f2;""" for k in range(count))


def _strided(stride_bytes: int, loads: int = 4) -> str:
    """Each thread loads ``loads`` floats ``stride_bytes`` apart (thread t starts at t * stride_bytes,
    load k at k * threads * stride_bytes) and stores their sum."""
    return _grid_kernel(_loads(loads, stride_bytes, "ld.global.f32"))


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


def test_a_line_read_one_granule_of_costs_dram_time_beside_its_bytes():
    # one sector per 128-byte line (128-byte stride) or two granules of each line (64-byte stride):
    # the same DRAM bytes (64 per sector), but a line fetched for one granule costs (64 + o) / (128 + o)
    # of a whole line's DRAM time (h200.toml hierarchy.dram_line_overhead o: strided_load_32 is 9.5 %
    # slower than strided_load_16 on the H200 for the same 34.6 MB); dense reads keep their time
    from sim.timing.sm import load_params

    o = load_params().hier["dram_line_overhead"]
    assert o > 0
    t32, t64, t128 = (_run_strided(s) for s in (32, 64, 128))
    assert t128["memory"]["dram_bytes_read"] == pytest.approx(t64["memory"]["dram_bytes_read"])
    assert t128["dram_cycles"] == pytest.approx(t64["dram_cycles"] * 2 * (64 + o) / (128 + o), rel=0.01)
    assert t64["dram_cycles"] == pytest.approx(2 * t32["dram_cycles"], rel=0.02)


def test_ncu_l2_hit_rate_counts_the_two_partitions():
    from sim.timing.h200 import ncu_l2_hit_rate

    H = {"l2_far_fraction": 0.5}
    # ncu_deep softmax_rows_warp perf: every load from DRAM, stores hit: 25.6 % measured
    # (a plain sectors count would say 1 - 6.29 / 8.39 = 25.0 % too: the partitions cancel here)
    assert 100 * ncu_l2_hit_rate(6.29e6, 2.10e6, 6.29e6, H) == pytest.approx(25.0, abs=0.3)
    # examples/h200/l2_sweep read_cg_16m: 4.19 M load sectors, 0.52 M from DRAM, 33.8 k stored:
    # ncu 82.66 %; counting each sector once would give 87.5 %
    assert 100 * ncu_l2_hit_rate(4.194e6, 33792, 524288, H) == pytest.approx(82.7, abs=0.3)
    assert ncu_l2_hit_rate(0, 0, 0, H) is None


def test_stack_distances_are_distinct_bytes_between_touches():
    from sim.timing.h200 import stack_distances

    seq = [("a", 100, 1), ("b", 10, 1), ("b", 10, 2), ("c", 1, 1), (None, 5, 0), ("a", 100, 3)]
    dist, wts, keyed, keyless = stack_distances(seq)
    # b after b: nothing between; a after a: b and c once each (b's two touches count once) and the store
    assert dist == [0.0, 16.0] and wts == [2, 3]
    assert keyed == 111 and keyless == 5


def _reread(passes: int, floats_per_thread: int, grid: int = 132, block: int = 256) -> str:
    """Every thread reads its ``floats_per_thread`` floats (grid-stride, ld.global.cg) ``passes`` times."""
    return _grid_kernel(f"""    mov.u32 %r9, 0;
LOOP:
{_loads(floats_per_thread, 4, "ld.global.cg.f32")}
    add.s32 %r9, %r9, 1;
    setp.lt.s32 %p1, %r9, {passes};
    @%p1 bra LOOP;""", preds=" .reg .pred %p<2>;")


def _reread_timing(passes, floats_per_thread, grid=132, block=256):
    n = grid * block * floats_per_thread
    src = np.ones(n, np.float32)
    out = np.zeros(grid * block, np.float32)
    r = sim.run_kernel(isa.loads(_reread(passes, floats_per_thread)), "k", grid, block, [src, out], timing="h200",
                       sample="auto")
    assert np.all(out == passes * floats_per_thread)
    return r.timing


def test_l2_capacity_misses_from_reuse_distance(monkeypatch):
    # 132 x 256 threads x 16 floats = 2.06 MiB read 3 times: the re-reads are 2 MiB apart chip-wide
    # and hit. Shrinking the L2's reuse window below that (h200.toml l2_reuse_*) turns them into DRAM
    # reads: 3x the bytes; halfway through the window, half of them
    import dataclasses

    import sim.timing.h200 as T

    small = _reread_timing(3, 16)
    mib = 2 ** 20
    foot = 132 * 256 * 16 * 4
    assert small["memory"]["dram_bytes_read"] == pytest.approx(foot, rel=0.01)
    base = T.load_params("h200")
    for full, none, want in ((0.25 * mib, 0.5 * mib, 3.0), (1.0 * mib, 3.0 * mib, 2.0)):
        P = dataclasses.replace(base, hier={**base.hier, "l2_reuse_full": full, "l2_reuse_none": none})
        monkeypatch.setattr(T, "load_params", lambda name="h200", P=P: P)
        t = _reread_timing(3, 16)
        assert t["memory"]["dram_bytes_read"] == pytest.approx(want * foot, rel=0.03)
        assert t["memory"]["l2_hit_rate"] < small["memory"]["l2_hit_rate"]


def test_the_replay_prices_capacity_misses_at_dram(monkeypatch):
    # the same 2.06 MiB read 3 times: with the whole footprint in the L2 the re-reads are priced as L2
    # hits; with the reuse window shrunk below their distance they are read from DRAM (l2_capacity), and
    # the replay prices them so (sim.timing.h200.predict: its miss rate is the first touches plus the
    # capacity misses, not the footprint's): each of the two re-read passes waits a DRAM latency
    import dataclasses

    import sim.timing.h200 as T

    small = _reread_timing(3, 16)
    assert small["memory"]["replay_l2_hit"] == pytest.approx({"first_touch": 0.0, "re_touch": 1.0}, abs=0.01)
    mib = 2 ** 20
    base = T.load_params("h200")
    P = dataclasses.replace(base, hier={**base.hier, "l2_reuse_full": 0.25 * mib, "l2_reuse_none": 0.5 * mib})
    monkeypatch.setattr(T, "load_params", lambda name="h200", P=P: P)
    t = _reread_timing(3, 16)
    assert t["memory"]["replay_l2_hit"]["re_touch"] == pytest.approx(0.0, abs=0.01)
    # 16 dependent-free loads per pass, one pass after the other: each re-read pass waits about one
    # DRAM latency instead of one L2 latency
    extra = t["sm_cycles"] - small["sm_cycles"]
    assert extra > 2 * 0.8 * (base.lat["global_dram"] - base.lat["global_l2"])


def _stores(stride_words: int, per_thread: int = 4) -> str:
    body = "\n".join(f"""    mad.lo.s32 %r8, %r7, {k}, %r4;
    mul.wide.u32 %rd3, %r8, {4 * stride_words};
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;""" for k in range(per_thread))
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .f32 %f<4>; .reg .b32 %r<16>; .reg .b64 %rd<8>;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r5, %nctaid.x;
    mul.lo.s32 %r7, %r5, %r3;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mov.f32 %f1, 0f3F800000;
{body}
    ret;
}}
"""


def test_stores_cost_the_l2_per_line_whole_sector_and_partial_sector():
    # the same 4-byte stores, coalesced (one line of 4 whole sectors per warp), 32 bytes apart (8 lines
    # of 4 sectors with 4 of their 32 bytes written) or 128 bytes apart (32 lines of one such sector):
    # h200.toml l2_write_line_cycles a, l2_write_sector_cycles b (whole), l2_write_partial_cycles c
    from sim.timing.sm import load_params

    H = load_params().hier
    grid, block, per = 132, 256, 4
    out = {}
    for stride in (1, 8, 32):
        buf = np.zeros(grid * block * per * stride, np.float32)
        r = sim.run_kernel(isa.loads(_stores(stride, per)), "k", grid, block, [buf], timing="h200", sample="all")
        assert np.count_nonzero(buf) == grid * block * per
        out[stride] = r.timing["l2_cycles"]
    warps = grid * block // 32 * per
    a, b, c = H["l2_write_line_cycles"], H["l2_write_sector_cycles"], H["l2_write_partial_cycles"]
    assert c > 1.4 * b                       # a partial sector costs the L2 more than a whole one
    assert out[1] == pytest.approx(warps * (a + 4 * b), rel=0.01)
    assert out[8] == pytest.approx(warps * 8 * (a + 4 * c), rel=0.01)
    assert out[32] == pytest.approx(warps * 32 * (a + c), rel=0.01)
    # write_strided_8 (examples/h200/mem_sweep, a check row: a, b, c come from write_f4_16m,
    # write_strided_16 and _32) measured 46,018 cycles (median of 21 launches, examples/h200/repeat): its L2 time +
    # launch is within 5 %
    assert (67584 * 8 * (a + 4 * c) + H["launch_overhead"]) == pytest.approx(46018, rel=0.05)


def test_partial_sectors_count_the_bytes_each_sector_gets():
    from sim.timing.streams import _partial_sectors

    lanes = np.arange(32, dtype=np.int64)
    act = np.ones((1, 32), bool)
    assert _partial_sectors(4096 + 4 * lanes[None], act, 4).tolist() == [0]         # 128 B: 4 whole sectors
    assert _partial_sectors(4096 + 32 * lanes[None], act, 4).tolist() == [32]       # 4 of 32 bytes each
    assert _partial_sectors(4096 + 16 * lanes[None], act, 16).tolist() == [0]       # st.v4: 2 lanes a sector
    assert _partial_sectors(4096 + 8 * lanes[None], act, 4).tolist() == [8]         # 16 of 32 bytes
    same = np.full((1, 32), 4096, np.int64)
    assert _partial_sectors(same, act, 4).tolist() == [1]                           # one address, once
    half = act.copy()
    half[0, 16:] = False                                                            # 16 lanes x 4 B: 2 whole
    assert _partial_sectors(np.stack([4096 + 4 * lanes, 4096 + 4 * lanes]), np.vstack([half, act]), 4).tolist() == [0, 0]


def test_dirty_write_backs_on_a_hand_made_sequence():
    # (key, bytes, load sectors, bytes stored): the L2 keeps everything re-touched within 100 bytes,
    # nothing beyond 200 (linear between)
    from sim.timing.h200 import dirty_write_backs

    full, none = 100.0, 200.0
    # a line stored, 150 bytes of other lines, stored again: half the time it was evicted (written
    # back) in between; at the end 0 bytes follow it: it stays dirty
    seq = [("a", 32, 0, 32), ("b", 150, 1, 0), ("a", 32, 0, 32)]
    wb, left = dirty_write_backs(seq, 1.0, full, none)
    assert wb == pytest.approx(16.0) and left == pytest.approx(32.0 + 150.0 * 0.0)
    # scaled to the chip (ratio 2: 300 bytes between) the first copy is always written back, and
    # the last one stays (nothing after it)
    wb, left = dirty_write_backs(seq, 2.0, full, none)
    assert wb == pytest.approx(32.0) and left == pytest.approx(32.0)
    # a load does not dirty its line; a stored line followed by 150 bytes to the end: half written back
    wb, left = dirty_write_backs([("a", 32, 0, 32), ("b", 150, 1, 0)], 1.0, full, none)
    assert wb == pytest.approx(16.0) and left == pytest.approx(16.0)
    # a load of a dirty line keeps it dirty (no write-back) when it is still there
    wb, left = dirty_write_backs([("a", 32, 0, 32), ("a", 32, 1, 0), ("c", 250, 1, 0)], 1.0, full, none)
    assert wb == pytest.approx(32.0) and left == pytest.approx(0.0)
    # a store without a key is a new dirty line never touched again
    wb, left = dirty_write_backs([(None, 64, 0, 64), ("b", 150, 1, 0)], 1.0, full, none)
    assert wb == pytest.approx(32.0) and left == pytest.approx(32.0)


def _rewrite(passes: int, floats_per_thread: int) -> str:
    """Every thread stores its ``floats_per_thread`` floats (grid-stride, coalesced) ``passes`` times."""
    body = "\n".join(f"""    mad.lo.s32 %r8, %r7, {k}, %r4;
    mul.wide.u32 %rd3, %r8, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;""" for k in range(floats_per_thread))
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .f32 %f<4>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<2>;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r5, %nctaid.x;
    mul.lo.s32 %r7, %r5, %r3;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mov.f32 %f1, 0f3F800000;
    mov.u32 %r9, 0;
LOOP:
{body}
    add.s32 %r9, %r9, 1;
    setp.lt.s32 %p1, %r9, {passes};
    @%p1 bra LOOP;
    ret;
}}
"""


def test_dram_writes_are_the_dirty_lines_the_l2_evicts(monkeypatch):
    # 132 x 256 threads x 16 floats = 2.06 MiB stored 3 times. The L2 (h200.toml l2_reuse_*: 30 MiB
    # and more) keeps every dirty line to the end: no DRAM write while the kernel runs (ncu
    # copy_cg_8m, 16 MiB footprint: 3.3 kB). With the L2's window shrunk below the buffer, every pass
    # but the last is evicted before the next one stores again (written back: 2 x the buffer) and of
    # the last pass what is touched within the window of the end stays dirty
    import dataclasses

    import sim.timing.h200 as T

    grid, block, per, passes = 132, 256, 16, 3
    foot = grid * block * per * 4

    def run():
        buf = np.zeros(grid * block * per, np.float32)
        r = sim.run_kernel(isa.loads(_rewrite(passes, per)), "k", grid, block, [buf], timing="h200", sample="auto")
        assert np.all(buf == 1.0)
        return r.timing

    base = run()
    assert base["memory"]["dram_bytes_write"] == pytest.approx(0.0, abs=1.0)
    mib = 2 ** 20
    P0 = T.load_params("h200")
    P = dataclasses.replace(P0, hier={**P0.hier, "l2_reuse_full": 0.25 * mib, "l2_reuse_none": 0.5 * mib})
    monkeypatch.setattr(T, "load_params", lambda name="h200", P=P: P)
    t = run()
    left = 0.25 * mib + 0.5 * 0.25 * mib        # the last 0.25 MiB, half of the 0.25 MiB before it
    assert t["memory"]["dram_bytes_write"] == pytest.approx(passes * foot - left, rel=0.03)
    assert t["dram_cycles"] > base["dram_cycles"]


def test_mixed_dram_traffic_pays_the_bus_turnaround():
    # hierarchy.dram_rw_turnaround, fitted on copy_dram_perf (268.4 MB read, 245.3 MB written back
    # in the model; 276,248 cycles of DRAM time on the H200): read-only or write-only traffic costs its bytes, a mix its
    # bytes and the turnaround per byte of the smaller stream
    from sim.timing.h200 import dram_bytes_time
    from sim.timing.sm import load_params

    H = load_params().hier
    t = H["dram_rw_turnaround"]
    assert t == pytest.approx(0.238)
    assert dram_bytes_time(201.3e6, 0.0, t) == pytest.approx(201.3e6)
    assert dram_bytes_time(0.0, 174.0e6, t) == pytest.approx(174.0e6)
    cycles = dram_bytes_time(268.44e6, 245.30e6, t) / (H["dram_bw"] / 1.98e9)
    assert cycles == pytest.approx(276_248, rel=0.005)


def test_a_sampled_launch_leaves_dirty_what_the_l2_window_holds_at_its_end(monkeypatch):
    # 4,224 CTAs (8 per SM; sampled: SM 0's first wave of 8) each store 4 KiB once: 17.3 MB of dirty
    # lines. With the L2's reuse window at 6-12 MiB, at the end the L2 holds dirty the written bytes
    # within the window of the end, on average 9 MiB (the launch only writes); the rest was written
    # back while it ran. The sample's own end (its 8 CTAs x 132 SMs: 4.3 MB) is no measure of that
    import dataclasses

    import sim.timing.h200 as T

    grid, block, per = 4224, 256, 4
    foot = grid * block * per * 4
    mib = 2 ** 20
    P0 = T.load_params("h200")
    P = dataclasses.replace(P0, hier={**P0.hier, "l2_reuse_full": 6.0 * mib, "l2_reuse_none": 12.0 * mib})
    monkeypatch.setattr(T, "load_params", lambda name="h200", P=P: P)
    buf = np.zeros(grid * block * per, np.float32)
    t = sim.run_kernel(isa.loads(_rewrite(1, per)), "k", grid, block, [buf], timing="h200", sample="auto").timing
    assert t["sampled"] and t["simulated_ctas"] == 8
    assert t["memory"]["dram_bytes_write"] == pytest.approx(foot - 9.0 * mib, rel=0.02)
