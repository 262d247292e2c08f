"""The H200 shared-memory wavefront model against every case measured with Nsight Compute
(../shared/facts/ptx.md section 11, h200.md), plus global-memory sectors."""

from __future__ import annotations

import numpy as np
import pytest

from sim.memory.banks import bank_conflicts, global_sectors, shared_access, shared_wavefronts

L = np.arange(32)

# (name, width bytes, is_load, lane addresses, measured wavefronts, measured ncu conflicts or None)
MEASURED = [
    ("LDS.32 4l", 4, True, 4 * L, 1, 0),
    ("LDS.32 8l", 4, True, 8 * L, 2, 1),
    ("LDS.32 128l", 4, True, 128 * L, 32, 31),
    ("LDS.32 broadcast", 4, True, 0 * L, 1, 0),
    ("LDS.32 4(l/2)", 4, True, 4 * (L // 2), 1, 0),
    ("LDS.32 4(l/2)+512(l&1)", 4, True, 4 * (L // 2) + 512 * (L & 1), 2, 1),
    ("LDS.U16 2l", 2, True, 2 * L, 1, 0),
    ("LDS.U8 l", 1, True, L, 1, 0),
    ("LDS.U16 64l", 2, True, 64 * L, 16, 15),
    ("LDS.U8 128l", 1, True, 128 * L, 32, 31),
    ("LDS.64 8l", 8, True, 8 * L, 2, 0),
    ("LDS.64 16l", 8, True, 16 * L, 4, 2),
    ("LDS.64 halves same banks other rows", 8, True, 8 * (L % 16) + 256 * (L // 16), 2, 0),
    ("LDS.64 conflict inside a half", 8, True, 8 * (L % 8) + 256 * (L // 8), 4, 2),
    ("LDS.64 broadcast", 8, True, 0 * L, 1, 0),
    ("LDS.64 8(l%16)", 8, True, 8 * (L % 16), 2, 0),
    ("LDS.64 8(l/2)", 8, True, 8 * (L // 2), 1, 0),
    ("LDS.64 Tn=Tn^2", 8, True, 8 * ((L >> 2) * 2 + (L & 1)), 1, 0),
    ("LDS.64 8(l%8)+64(l/16)", 8, True, 8 * (L % 8) + 64 * (L // 16), 2, 0),
    ("LDS.128 16l", 16, True, 16 * L, 4, 0),
    ("LDS.128 32l", 16, True, 32 * L, 8, 4),
    ("LDS.128 quarters same banks", 16, True, 16 * (L % 8) + 512 * (L // 8), 4, 0),
    ("LDS.128 16(l%8)", 16, True, 16 * (L % 8), 4, 0),
    ("LDS.128 16(l%4)+128(l/4)", 16, True, 16 * (L % 4) + 128 * (L // 4), 8, 4),
    ("LDS.128 broadcast", 16, True, 0 * L, 2, 0),
    ("LDS.128 16(l/2)", 16, True, 16 * (L // 2), 2, 0),
    ("LDS.128 Tn=Tn^2", 16, True, 16 * ((L >> 2) * 2 + (L & 1)), 2, 0),
    ("STS.32 4l", 4, False, 4 * L, 1, None),
    ("STS.32 broadcast", 4, False, 0 * L, 1, None),
    ("STS.32 128l", 4, False, 128 * L, 32, None),
    ("STS.64 8l", 8, False, 8 * L, 2, None),
    ("STS.64 broadcast", 8, False, 0 * L, 2, None),
    ("STS.64 8(l/2)", 8, False, 8 * (L // 2), 2, None),
    ("STS.128 16l", 16, False, 16 * L, 4, None),
    ("STS.128 broadcast", 16, False, 0 * L, 4, None),
    ("STS.128 16(l/2)", 16, False, 16 * (L // 2), 4, None),
]


@pytest.mark.parametrize("name,width,is_load,addr,wavefronts,conflicts", MEASURED, ids=[m[0] for m in MEASURED])
def test_measured_case(name, width, is_load, addr, wavefronts, conflicts):
    assert shared_wavefronts(addr, width, is_load) == wavefronts
    if conflicts is not None:
        assert bank_conflicts(addr, width, is_load) == conflicts


def test_tn_tn2_pattern_really_pairs_lanes_n_and_n_xor_2():
    addr = 8 * ((L >> 2) * 2 + (L & 1))
    assert (addr == addr[L ^ 2]).all() and not (addr == addr[L ^ 1]).all()


def test_batched_warps_match_one_at_a_time():
    rng = np.random.default_rng(3)
    for width in (1, 2, 4, 8, 16):
        for is_load in (True, False):
            addr = rng.integers(0, 64, size=(40, 32)) * width
            addr[::5] = addr[::5, L // 2]           # some warps with the pair pattern
            active = rng.random((40, 32)) < 0.8
            active[::7] = True
            batch = shared_wavefronts(addr, width, is_load, active)
            single = [shared_wavefronts(addr[w], width, is_load, active[w]) for w in range(40)]
            assert batch.tolist() == single


def test_inactive_lanes_take_no_part():
    addr = 128 * L                                   # 32-way conflict with all lanes
    active = L < 4
    assert shared_wavefronts(addr, 4, True, active) == 4
    assert shared_wavefronts(addr, 4, True, 0xF) == 4  # integer lane mask
    assert shared_wavefronts(addr, 4, True, np.zeros(32, bool)) == 0


def test_single_active_lane_of_wide_load_costs_one_wavefront():
    # pair rule holds vacuously (partners inactive); the halving rounds up, never to 0
    acc = shared_access(16 * L, 16, True, L == 0)
    assert (acc.wavefronts, acc.ideal, acc.pair_rule, acc.conflicts) == (1, 1, True, 0)


def test_rows_of_other_groups_never_conflict_but_inside_a_group_they_do():
    # 128-bit: lanes 0..7 on banks 0..31 of row 0; lanes 8..15 same banks, row 1
    assert shared_wavefronts(16 * (L % 8) + 128 * (L // 8), 16, False) == 4
    # the same two rows inside one 32-bit group
    assert shared_wavefronts(4 * (L % 16) + 128 * (L // 16), 4, False) == 2


def test_bad_width_is_rejected():
    with pytest.raises(ValueError):
        shared_wavefronts(4 * L, 12, True)


@pytest.mark.parametrize("addr,width,sectors", [
    (4 * L, 4, 4),            # coalesced fp32: 128 bytes
    (16 * L, 16, 16),         # float4: 512 bytes
    (0 * L, 4, 1),            # broadcast
    (128 * L, 4, 32),         # strided: one sector per lane
    (2 * L, 2, 2),            # fp16
    (4 * L + 28, 8, 5),       # misaligned 8-byte straddles
])
def test_global_sectors(addr, width, sectors):
    assert global_sectors(addr, width) == sectors


def test_global_sectors_batched_and_masked():
    addr = np.stack([4 * L, 128 * L])
    assert global_sectors(addr, 4).tolist() == [4, 32]
    assert global_sectors(addr, 4, np.stack([L < 8, L < 8])).tolist() == [1, 8]


# ---- the per-instruction heat listener -------------------------------------------------------

def _event(pc, space, kind, width, addresses, active=None):
    from types import SimpleNamespace
    addresses = np.asarray(addresses, dtype=np.uint64)
    if active is None:
        active = np.ones(addresses.shape, dtype=bool)
    return SimpleNamespace(pc=pc, space=space, kind=kind, width=width, addresses=addresses, active=active)


def test_heat_accumulates_per_instruction_and_per_line():
    from types import SimpleNamespace

    from sim.memory.heat import MemoryHeat
    heat = MemoryHeat()
    two_warps = np.stack([128 * L, 4 * L])              # a 32-way conflict and a clean access
    heat(_event(3, "shared", "load", 4, two_warps))
    heat(_event(3, "shared", "load", 4, two_warps[:1]))
    heat(_event(5, "shared", "store", 16, np.stack([16 * L])))
    heat(_event(7, "global", "load", 4, np.stack([0x7F0000000000 + 128 * L])))
    heat(_event(8, "global", "store", 4, np.stack([4 * L]), np.stack([L < 8])))
    heat(_event(9, "shared", "atomic", 4, np.stack([0 * L])))
    heat(_event(4, "shared", "load", 4, np.stack([4 * L]), np.zeros((1, 32), bool)))   # nobody active
    s3, s5, s7, s8, s9 = (heat.sites[k] for k in (3, 5, 7, 8, 9))
    assert (s3.executions, s3.shared_load_wavefronts, s3.shared_ideal, s3.bank_conflicts) == (3, 65, 3, 62)
    assert s3.replay == pytest.approx(65 / 3)
    assert (s5.shared_store_wavefronts, s5.shared_ideal, s5.replay) == (4, 4, 1.0)
    assert (s7.global_load_sectors, s7.global_ideal_sectors, s7.replay) == (32, 4, 8.0)
    assert (s8.global_store_sectors, s8.global_ideal_sectors) == (1, 1)
    assert (s9.shared_load_wavefronts, s9.shared_store_wavefronts, s9.shared_atomic_wavefronts) == (0, 0, 1)
    assert 4 not in heat.sites
    tot = heat.totals()
    assert tot.shared_load_wavefronts == 65 and tot.shared_atomic_wavefronts == 1 and tot.global_sectors == 33
    fn = SimpleNamespace(instructions=[SimpleNamespace(span=SimpleNamespace(line=100 + pc // 2)) for pc in range(10)])
    lines = heat.by_line(fn)
    assert lines[101].shared_load_wavefronts == 65 and lines[102].shared_store_wavefronts == 4
    assert lines[103].global_sectors == 32
    assert lines[104].global_sectors == 1 and lines[104].shared_wavefronts == 1   # pcs 8 and 9
    assert lines[104].to_dict()["bank_conflicts"] == 0 and lines[104].executions == 2


def test_heat_follows_a_shared_plan():
    from types import SimpleNamespace

    from sim.memory.heat import MemoryHeat
    rows = 128 * L                                  # lane l reads row l of a 32x32 f32 tile: 32-way conflict
    heat = MemoryHeat(shared_plan={10: ((0, 16),), 11: (), 12: (), 13: (), 20: ((0, 8), (8, 8))})
    for line, off in ((10, 0), (11, 4), (12, 8), (13, 12)):  # four ld.shared.f32 ptxas merged into one LDS.128
        ev = _event(line, "shared", "load", 4, np.stack([rows + off]))
        heat(SimpleNamespace(**vars(ev), line=line))
    ev = _event(20, "shared", "store", 16, np.stack([16 * L]))   # st.shared.v4 emitted as two STS.64
    heat(SimpleNamespace(**vars(ev), line=20))
    t = heat.totals()
    # one LDS.128 of 32 rows: 4 quarter-warps x 8 distinct words per bank = 32 wavefronts, one request
    assert (t.shared_load_wavefronts, t.shared_load_requests) == (32, 1)
    assert (t.shared_store_wavefronts, t.shared_store_requests) == (8, 2)
    plain = MemoryHeat()
    plain(_event(10, "shared", "load", 4, np.stack([rows])))
    assert plain.totals().shared_load_wavefronts == 32          # each scalar load alone costs 32 too


def test_heat_skips_cp_async_shared_writes_and_counts_global_atomics_apart():
    from sim.memory.heat import MemoryHeat
    heat = MemoryHeat()
    heat(_event(1, "shared", "async_store", 16, np.stack([16 * L])))          # cp.async into shared
    heat(_event(2, "global", "atomic", 4, np.stack([0x7F0000000000 + 0 * L])))  # 32 lanes, one word
    heat(_event(2, "global", "atomic", 4, np.stack([0x7F0000000000 + 4 * L])))
    assert 1 not in heat.sites
    s2 = heat.sites[2]
    assert (s2.global_atomic_sectors, s2.global_atomic_requests, s2.global_store_sectors) == (5, 2, 0)
    st = heat.as_stats()
    assert st["global_atomic_sectors"] == 5 and st["global_sectors"] == 5 and st["global_store_sectors"] == 0
    assert heat.by_pc() == {2: {"wavefronts": 0, "sectors": 5, "requests": 2}}


def test_one_heat_listener_serves_run_kernel_stats(monkeypatch):
    import sim
    import sim.memory.heat as H
    from sim.memory.heat import MemoryHeat
    from tests.sim.ptx.kernels import ptx

    import sim.memory.banks as B

    calls = []
    real = B.shared_costs
    monkeypatch.setattr(B, "shared_costs", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert H.event_shared_costs is B.event_shared_costs
    body = """
    mul.wide.u32 %rd4, %r1, 8;
    cvt.u32.u64 %r3, %rd4;
    st.shared.u32 [%r3], %r1;
    bar.sync 0;
    ld.shared.u32 %r2, [%r3];
    """
    import isa
    module = isa.loads(ptx(body))
    args = lambda: [np.zeros(64, np.uint32), np.zeros(64, np.uint32), np.int32(0)]   # noqa: E731
    plain = sim.run_kernel(module, "k", 1, 64, args())
    n_plain = len(calls)
    heat = MemoryHeat()
    res = sim.run_kernel(module, "k", 1, 64, args(), listeners=[heat])
    assert len(calls) == 2 * n_plain == 2 * 2 * 1      # one store + one load per launch, 2 warps at once
    assert res.stats["shared_store_wavefronts"] == plain.stats["shared_store_wavefronts"] == 2 * 2   # 8-byte stride
    assert heat.as_stats()["shared_load_wavefronts"] == res.stats["shared_load_wavefronts"] == 4
    assert res.stats["memory_by_pc"] == heat.by_pc()
    # the timing model's streams take the same access events: their costs are not computed again
    calls.clear()
    timed = sim.run_kernel(module, "k", 1, 64, args(), timing="h200")
    assert len(calls) == 2                      # one store + one load, for the heat and the timing streams
    assert timed.timing["memory"]["shared_wavefronts"] == 4 + 4
    assert timed.stats["shared_store_wavefronts"] == 4
