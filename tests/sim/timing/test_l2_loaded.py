"""The L2 read latency under load on small cases: an SM's reads that miss L1 wait, beyond the unloaded
``global_l2``, as in an M/M/1 queue at the SM's share of the L2 slices' read rate
(``hierarchy.l2_read_bw``, ``l2_read_queue``, ``l2_read_window`` of sim/machines/h200.toml;
examples/h200/mem_sweep: 398 / 423 / 610 / 1,026 cycles per ld.global.cg.v4 at 8 / 16 / 32 / 64 warps
per SM)."""

import pytest

from sim.timing.sm import SM, OpFacts, load_params
from sim.timing.units import LoadedLatency


def test_wait_follows_the_offered_rate():
    # 512 B every 25.6 cycles on a 40 B/clk server: rho 0.5, so q rho / (1 - rho) = q
    ld = LoadedLatency("l2_read", capacity=40.0, q=100.0, window=4000.0, min_window=1000.0)
    waits = [ld.wait(i * 25.6, 512.0) for i in range(2000)]
    assert ld.rho() == pytest.approx(0.5, rel=0.02)
    assert waits[-1] == pytest.approx(100.0, rel=0.05)
    # the rate is measured over the time since the first arrival (weight-corrected), not over an
    # empty history: after 2,000 cycles the estimate is already the rate (an uncorrected sum over
    # a 4,000-cycle window would say rho 0.2 there)
    assert waits[int(2000 / 25.6)] == pytest.approx(100.0, rel=0.1)
    # light traffic waits little: 512 B every 256 cycles, rho 0.05
    quiet = LoadedLatency("l2_read", capacity=40.0, q=100.0, window=4000.0, min_window=1000.0)
    w = [quiet.wait(i * 256.0, 512.0) for i in range(200)][-1]
    assert w == pytest.approx(100.0 * 0.05 / 0.95, rel=0.1)


def test_utilisation_is_capped():
    ld = LoadedLatency("l2_read", capacity=1.0, q=10.0, window=100.0, max_rho=0.95)
    assert ld.wait(0.0, 1e6) == pytest.approx(10.0 * 0.95 / 0.05)


_P = load_params()
_LD = OpFacts("ld.global.cg.v4.f32", "lsu", 0.0, "long_scoreboard", (), (0,), l1_bypass=True)
_ADD = OpFacts("add.f32", "fma", 4.0, "wait", (0,), (1,))


def _per_load(warps: int, read_bpc: float | None, n: int = 200) -> tuple[float, object]:
    """Cycles per load of ``warps`` warps on one SM, each with ``n`` dependent 128-bit .cg loads
    (16 sectors in 4 lines, each line read once: L2 hits), as read_cg of examples/microbench."""
    sm = SM([_LD, _ADD], _P, ctas_per_sm=1, warps_per_cta=warps, l1_lines=4096, l2_hit=1.0, dram_bpc=64.0,
            l2_bpc=1e6, l2_read_bpc=read_bpc)
    streams = []
    for w in range(warps):
        s = []
        for i in range(n):
            base = (w * n + i) * 4
            s += [(0, (("g", "load", 16, tuple((base + j) * 16 + 15 for j in range(4))),)), (1, None)]
        streams.append(s)
    r = sm.run([streams])
    return r.cycles / n, r


def test_l2_read_latency_grows_with_the_sm_read_rate():
    q = _P.hier["l2_read_queue"]
    flat = {w: _per_load(w, None)[0] for w in (8, 32)}
    loaded = {w: _per_load(w, 40.0) for w in (8, 16, 32)}
    # without the queue the round trip is the unloaded L2 latency whatever the warps
    assert flat[8] == pytest.approx(_P.lat["global_l2"], abs=5)
    assert flat[32] == pytest.approx(flat[8], rel=0.01)
    # with it: the replay's steady state is the queue's, T = T0 + q rho / (1 - rho) with rho the
    # reads' own rate (warps x 512 B per T) over the 40 B/clk share
    for w, (t, r) in loaded.items():
        rho = w * 512 / t / 40.0
        assert t == pytest.approx(flat[8] + q * rho / (1 - rho), rel=0.05)
        assert r.stalls.top() == "long_scoreboard"       # the wait is the load's: ncu's long_scoreboard
    # and the latency climbs as on the H200 (398 -> 610 cycles per load from 8 to 32 warps: x1.53)
    assert loaded[32][0] > 1.4 * loaded[8][0]
