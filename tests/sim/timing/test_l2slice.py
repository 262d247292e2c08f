"""Which 128-byte lines share an L2 atomic unit (sim/timing/l2slice.py, the kernel measured in
examples/h200/atomic_slice on the H200) and what that does to the time of same-address atomics."""

import pytest

from sim.timing.l2slice import echelon, unit_of_line
from sim.timing.sm import load_params
from tests.sim.timing.test_atomic_sector import N, _atomics

H = load_params("h200").hier
K = echelon(H["l2_atomic_unit_kernel"])
SPAN = H["l2_atomic_unit_span"]


def test_lines_of_line_zeros_unit_are_the_measured_sixteen():
    """examples/h200/atomic_slice/hot_lines.json: of lines 1..1023, exactly these pairs with line 0
    took 178-187 us (one unit) where the others took 125-130 us."""
    same = [d for d in range(SPAN) if unit_of_line(d, K, SPAN) == unit_of_line(0, K, SPAN)]
    assert same == [0, 1, 4, 5, 314, 315, 318, 319, 666, 667, 670, 671, 928, 929, 932, 933]
    assert len({unit_of_line(d, K, SPAN) for d in range(SPAN)}) == 64
    # the relation is one of XOR: lines 1 + 4 (measured from line 1: 178.4 us) and 1 + 2 (125.5 us)
    assert unit_of_line(1, K, SPAN) == unit_of_line(5, K, SPAN) != unit_of_line(3, K, SPAN)
    # beyond the measured 128 KiB lines are taken to be in different units
    assert unit_of_line(0, K, SPAN) != unit_of_line(SPAN, K, SPAN)


def test_echelon_is_canonical():
    assert echelon([1, 4, 314, 666]) == echelon([5, 4, 314 ^ 666, 666 ^ 1]) == (666, 314, 4, 1)


@pytest.mark.parametrize("lines, shared", [(314, True), (4, True), (2, False), (32, False)])
def test_two_hot_lines_of_one_unit_take_longer(lines, shared):
    """Every warp to one of 2 words ``lines`` x 128 bytes apart: in one unit (lines 0 and 314) the
    pair's operations alternate at random between two sectors of one unit, (atomic_same_address +
    atomic_unit_issue) / 2 each (measured 181 us against 245 for one line: 1.34 x),
    in two units (0 and 2) each unit takes its half (126 us)."""
    lat = load_params("h200").lat
    t = _atomics(2, lines * 128, floats=lines * 32 + 32)["atomic_cycles"]
    c = lat["atomic_same_address"]
    assert t == pytest.approx(N * (c + lat["atomic_unit_issue"]) / 2 if shared else N / 2 * c)


def test_a_slice_is_two_units_the_lines_0_to_7_of_the_sixteen_group_launches():
    """hierarchy.l2_atomic_slice_kernel: with the unit kernel, lines 0-7 (units {0, 1, 4, 5} and
    {2, 3, 6, 7}) are one slice (examples/h200/atomic_slice hot_lines: lines 0-7 3.02 x one line where
    two free units give 3.32 x), lines 0 and 8 are not (lines 0-15: 5.84 x, two slices)."""
    S = echelon(K + tuple(H["l2_atomic_slice_kernel"]))
    slices = {unit_of_line(d, S, SPAN) for d in range(SPAN)}
    assert len(slices) == 32
    assert len({unit_of_line(d, S, SPAN) for d in range(8)}) == 1
    assert unit_of_line(0, S, SPAN) != unit_of_line(8, S, SPAN)
    assert len({unit_of_line(d, K, SPAN) for d in range(8)}) == 2
