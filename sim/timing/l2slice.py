"""The L2 atomic unit a 128-byte line is homed in, as far as the H200 measurements pin it down
(examples/h200/atomic_slice, bench/device/atomic_slice_truth.sh; issue #10).

Same-address atomics from the whole chip (``red.global.add.f32 [%rd6], %f1;`` by every warp to one of a
few hot words) run one after the other per hot sector; two hot lines are faster together than one only
if they are homed in different units. Measured with every warp of 132 CTAs adding to one of two words
``d`` lines apart (line 0 of a 2 MiB-aligned buffer and line ``d``, d = 1..1023): the pair takes 1.34 x
less time than one hot line when both share a unit, 1.95 x when they do not, and the lines of the first
128 KiB that share line 0's unit are exactly the 16 XOR-combinations of 1, 4, 314 and 666 (a linear
subspace: the unit is a GF(2)-linear hash of the line's address bits 7-16). So lines ``a`` and ``b``
share a unit iff ``a ^ b`` is in the span of that basis (``l2_atomic_unit_kernel``); lines whose bits
above the measured span (``l2_atomic_unit_span`` lines, 128 KiB) differ are taken to be in different
units (above 2 MiB the physical address is not the virtual one; 3 of 244 pairs 2^10-2^24 lines apart
measured shared a unit, about the 1 in 64 of a random pairing).
"""

from __future__ import annotations


def echelon(basis) -> tuple[int, ...]:
    """The basis reduced so that each vector's top bit is set in no other (largest first)."""
    out: list[int] = []
    for v in sorted((int(x) for x in basis), reverse=True):
        for b in out:
            v = min(v, v ^ b)
        if v:
            out = [min(b, b ^ v) for b in out] + [v]
            out.sort(reverse=True)
    return tuple(out)


def unit_of_line(line: int, kernel: tuple[int, ...], span: int) -> int:
    """A key equal for two 128-byte lines (address >> 7) exactly when the model homes them in one L2
    atomic unit: the line with its bits below ``span`` (a power of two) reduced modulo the span of
    ``kernel`` (:func:`echelon` form). Lines 0, 1, 4 and 5 share a unit; 0 and 2 do not."""
    hi, lo = line & ~(span - 1), line & (span - 1)
    for b in kernel:
        lo = min(lo, lo ^ b)
    return hi | lo
