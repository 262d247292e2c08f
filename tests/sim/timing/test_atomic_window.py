"""The L2 atomics of an SM sub-partition go a few at a time, in issue order (sim.timing.h200
atomic_window_cycles): hot lines in different units run in parallel only as far as the sub-partitions
feeding them keep them busy (examples/h200/atomic_slice hot_lines: 4 lines 4.0 x one line, 8 lines
about 6 x, not 8 x)."""

from sim.timing import h200
from sim.timing.sm import load_params


def test_requests_one_per_shared_address_per_line():
    # 32 lanes on one word: 32 requests of one operation; 32 lanes on 32 words of one line (4 sectors
    # of 8 words): one request of 4 operations (one per sector)
    assert h200._requests(((40, 32),)) == [(10, 32, 1.0)]
    assert h200._requests(((40, 1), (41, 1), (42, 1), (43, 1))) == [(10, 1, 4.0)]


def test_window_by_hand():
    # one sub-partition, requests to lines 0 (unit A) and 1 (unit B), 1 cycle each, round trip 10:
    # with one slot the second leaves when the first is back (11) and is done at 11 + 5 + 1 = 17, 12
    # after the first arrival (5); with two slots both arrive at 5 and are done at 6
    wins = [[(0, 1, 1.0), (1, 1, 1.0)]]
    units = {0: "A", 1: "B"}
    assert h200.atomic_window_cycles(wins, units, {"A": 1.0, "B": 1.0}, 1, 10.0) == 12.0
    assert h200.atomic_window_cycles(wins, units, {"A": 1.0, "B": 1.0}, 2, 10.0) == 1.0


def _hot_lines(n):
    """132 CTAs x 8 warps, warp w 4 x 32 lanes on word 0 of line w % n (lines 64 apart: own units)."""
    seq, counts = {}, {}
    for w in range(132 * 8):
        sector = (w % n) * 64 * 4
        seq[w] = [((sector, 32),)] * 4
        c = counts.setdefault(sector, [0, 0, True, set()])
        c[0] += 128
    return counts, h200.atomic_windows(seq, 132, 132, 1, 8)


def test_sub_partitions_on_two_units_leave_units_idle():
    P = load_params("h200")
    lat, hier = dict(P.lat), dict(P.hier)
    one = 135168 * lat["atomic_same_address"]
    counts, wins = _hot_lines(4)
    # 4 lines, a sub-partition's 2 warps on one line: every unit busy, a quarter of one line's time
    assert abs(h200.atomic_serial_cycles(counts, 1.0, lat, hier, wins) / (one / 4) - 1.0) < 0.01
    counts, wins = _hot_lines(8)
    without = h200.atomic_serial_cycles(counts, 1.0, lat, hier)
    assert abs(without / (one / 8) - 1.0) < 1e-9
    # 8 lines, a sub-partition's 2 warps on 2 lines: well short of 8 x (measured 4.6-6.6 x)
    speedup = one / h200.atomic_serial_cycles(counts, 1.0, lat, hier, wins)
    assert 5.5 < speedup < 6.8
