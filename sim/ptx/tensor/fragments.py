"""Fragment layouts of ``mma.sync`` as index arrays, and packing of elements into registers.

A fragment is what one warp holds of a matrix: lane ``t`` holds ``E`` elements, packed low-first
into ``R = E * bits / 32`` registers (element ``i`` sits in register ``i // (32 // bits)`` at bit
``(i % (32 // bits)) * bits``; "a0 in bits 15:0" in the ISA).  :func:`mma_fragment_map` returns,
for every lane and element, the (row, col) of the logical matrix it holds, e.g. for::

    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};

``mma_fragment_map("m16n8k16", "a", "f16")`` gives ``rows[32, 8]`` and ``cols[32, 8]`` with
``rows[t, i] = t//4 + 8*((i>>1)&1)`` and ``cols[t, i] = 2*(t%4) + (i&1) + 8*(i>=4)`` (ISA 9.7.14.5.8,
verified bit-exactly on H200).  Logical matrices: A is M x K (row ``m``, col ``k``), B is K x N
(row ``k``, col ``n``), C/D are M x N.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from isa.errors import SimulationError

from .elements import element_type


@dataclass(frozen=True)
class FragmentMap:
    """Where each (lane, element) of a fragment lives in its logical matrix.

    ``rows``/``cols`` are int arrays shaped [32, E]; ``bits`` is the element width in a register;
    ``shape`` is the (rows, cols) of the logical matrix; ``nregs`` the registers per lane.
    """

    rows: np.ndarray
    cols: np.ndarray
    bits: int
    shape: tuple[int, int]

    @property
    def elements(self) -> int:
        return self.rows.shape[1]

    @property
    def reg_bits(self) -> int:
        """Width of the registers that hold the fragment: 64 for f64 elements, else 32."""
        return 64 if self.bits == 64 else 32

    @property
    def nregs(self) -> int:
        return self.elements * self.bits // self.reg_bits

    def gather(self, mat: np.ndarray) -> np.ndarray:
        """Matrix [W, rows, cols] (bit patterns) -> fragment elements [W, 32, E]."""
        return mat[:, self.rows, self.cols]

    def scatter(self, elems: np.ndarray, dtype=np.uint32) -> np.ndarray:
        """Fragment elements [W, 32, E] -> matrix [W, rows, cols] (every entry is covered)."""
        out = np.zeros((elems.shape[0],) + self.shape, dtype=dtype)
        out[:, self.rows, self.cols] = elems
        return out


_LANE = np.arange(32)[:, None]
_G = _LANE >> 2          # groupID
_T = _LANE & 3           # thread in group


def _map(rows, cols, bits, shape) -> FragmentMap:
    r = np.broadcast_to(rows, np.broadcast(rows, cols).shape).astype(np.int64)
    c = np.broadcast_to(cols, r.shape).astype(np.int64)
    r.setflags(write=False)
    c.setflags(write=False)
    return FragmentMap(r, c, bits, shape)


def parse_shape(shape: str) -> tuple[int, int, int]:
    """``'m16n8k16'`` -> (16, 8, 16)."""
    try:
        m, rest = shape[1:].split("n")
        n, k = rest.split("k")
        return int(m), int(n), int(k)
    except ValueError:
        raise SimulationError(f"bad matrix shape .{shape}") from None


#: the quad-pairs of ``mma.m8n8k4`` with .f16 (ISA 9.7.14.5.1): lanes 4q..4q+3 ("low group") and
#: 4q+16..4q+19 ("high group") compute MMA number q
_Q = (_LANE % 16) >> 2
_HI = (_LANE >= 16).astype(np.int64)
_R4 = _LANE & 3


def _tiled(m: int, n: int, k: int, operand: str, bits: int) -> FragmentMap:
    """The layout family of every ``mma`` shape but m8n8k4 .f16 (ISA 9.7.14.5.2-14).

    A lane holds 32-bit words of ``per = 32 // bits`` consecutive K-elements (one element per
    register for tf32 and f64).  A (M x K): lane (groupID g, threadID_in_group t) holds word r of
    rows ``g + 8*(r % (M/8))`` at columns ``per*t + 4*per*(r // (M/8))``; B (K x N, N = 8) the same
    with rows and columns swapped (rows ``per*t + 4*per*r``, column g); C/D (M x N) element i at
    row ``g + 8*(i // 2)``, column ``2*t + i % 2``.  E.g. m16n8k16 .f16 A: ``row = g + 8*((i>>1)&1)``,
    ``col = 2*t + (i&1) + 8*(i>=4)``; m16n8k64 .s4 A: ``row = g + 8*((i>>3)&1)``,
    ``col = 8*t + (i&7) + 32*(i>=16)``; m8n8k128 .b1 B: ``row = 32*t + i``, ``col = g``.
    """
    per = max(1, 32 // bits)
    if operand in ("c", "d"):
        i = np.arange(m * n // 32)[None, :]
        return _map(_G + 8 * (i // 2), 2 * _T + i % 2, bits, (m, n))
    rows_k = (m if operand == "a" else n)
    i = np.arange(rows_k * k // 32)[None, :]
    r, j = i // per, i % per
    if operand == "a":
        mb = m // 8
        return _map(_G + 8 * (r % mb), per * _T + j + 4 * per * (r // mb), bits, (m, k))
    return _map(per * _T + j + 4 * per * r, _G + 0 * i, bits, (k, n))


def _quad_pairs(operand: str, bits: int, layout: str | None) -> FragmentMap:
    """``mma.m8n8k4`` with .f16 A/B (ISA 9.7.14.5.1): four independent 8x8x4 products, one per
    quad-pair.  They are laid out block-diagonally in one 32x16 A, 16x32 B and 32x32 C/D (MMA q
    at rows/columns 8q of C, columns 4q of A, rows 4q of B); the zero blocks add nothing to any
    product, so the one fragment core computes all four.

    Per MMA (hi = lane >= 16): A row-major ``row = lane%4 + 4*hi, col = i``, column-major
    ``row = i + 4*hi, col = lane%4``; B row-major ``row = lane%4, col = i + 4*hi``, column-major
    ``row = i, col = lane%4 + 4*hi``; C/D .f16 ``row = lane%4 + 4*hi, col = i``; C/D .f32
    ``row = (lane&1) + (i&2) + 4*hi, col = (i&4) + (lane&2) + (i&1)``.
    """
    if operand in ("a", "b"):
        i = np.arange(4)[None, :]
        row_major = (layout or "row") == "row"
        if operand == "a":
            r, c = (_R4 + 4 * _HI + 0 * i, i + 0 * _LANE) if row_major else (i + 4 * _HI, _R4 + 0 * i)
            return _map(r + 8 * _Q, c + 4 * _Q, bits, (32, 16))
        r, c = (_R4 + 0 * i, i + 4 * _HI) if row_major else (i + 0 * _LANE, _R4 + 4 * _HI + 0 * i)
        return _map(r + 4 * _Q, c + 8 * _Q, bits, (16, 32))
    i = np.arange(8)[None, :]
    if bits == 16:
        r, c = _R4 + 4 * _HI + 0 * i, i + 0 * _LANE
    else:
        r, c = (_LANE & 1) + (i & 2) + 4 * _HI, (i & 4) + (_LANE & 2) + (i & 1)
    return _map(r + 8 * _Q, c + 8 * _Q, bits, (32, 32))


@lru_cache(maxsize=None)
def mma_fragment_map(shape: str, operand: str, etype: str, layout: str | None = None) -> FragmentMap:
    """Index map of an ``mma.sync`` fragment (operand ``'a'``, ``'b'``, ``'c'`` or ``'d'``).

    Shapes m16n8kK and m8n8kK follow one family (:func:`_tiled`); m8n8k4 with .f16 A/B (and its
    .f16/.f32 accumulators) the quad-pair layout (:func:`_quad_pairs`, where ``layout`` .row/.col
    of A and B matters).  Which (shape, type) forms exist is :data:`sim.ptx.tensor.mma.MMA_FORMS`.
    """
    m, n, k = parse_shape(shape)
    bits = element_type(etype).bits
    if (m, n, k) == (8, 8, 4) and (etype == "f16" or (operand in ("c", "d") and etype == "f32")):
        return _quad_pairs(operand, bits, layout)
    if (m, n) not in ((16, 8), (8, 8)) or (operand in ("a", "b") and (m if operand == "a" else n) * k % 32):
        raise SimulationError(f"mma fragment .{shape} operand {operand} of type .{etype} is not supported")
    return _tiled(m, n, k, operand, bits)


_NARROW = {8: np.uint8, 16: np.uint16}


def pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """Elements [..., E] (bit patterns) -> registers [..., E*bits/32] as uint32, low element first
    (64-bit elements: [..., E] uint64 registers).

    8/16-bit elements are narrowed (keeping their low bits) and the row reinterpreted as uint32:
    on a little-endian host that puts element 0 in the low bits, as the ISA packs them; 1- and
    4-bit elements are shifted into place (element i at bit ``(i % (32 // bits)) * bits``)."""
    e = np.asarray(elems)
    if bits == 64:
        return e.astype(np.uint64)
    if bits == 32:
        return e.astype(np.uint32)
    if bits < 8:
        return _pack_shift(e, bits)
    n = np.ascontiguousarray(e.astype(_NARROW[bits]))
    return n.view(np.uint32) if n.shape[-1] * bits % 32 == 0 else _pack_shift(e, bits)


def _pack_shift(e: np.ndarray, bits: int) -> np.ndarray:
    per = 32 // bits
    e = e.astype(np.uint32)
    e = e.reshape(e.shape[:-1] + (e.shape[-1] // per, per)) & np.uint32((1 << bits) - 1)
    shifts = (np.arange(per, dtype=np.uint32) * bits)
    return np.bitwise_or.reduce(e << shifts, axis=-1).astype(np.uint32)


def unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    """Registers [..., R] (uint32) -> elements [..., R*32/bits] as uint32, low element first
    (64-bit elements: uint64 registers, one element each)."""
    if bits == 64:
        return np.asarray(regs).astype(np.uint64)
    r = np.ascontiguousarray(np.asarray(regs).astype(np.uint32))
    if bits == 32:
        return r
    if r.ndim == 0:
        r = r.reshape(1)
    if bits < 8:
        per = 32 // bits
        shifts = np.arange(per, dtype=np.uint32) * np.uint32(bits)
        e = (r[..., None] >> shifts) & np.uint32((1 << bits) - 1)
        return e.reshape(r.shape[:-1] + (r.shape[-1] * per,))
    return r.view(_NARROW[bits]).astype(np.uint32)


def fragment_to_matrix(regs: np.ndarray, fmap: FragmentMap) -> np.ndarray:
    """Registers [W, 32, R] -> matrix of bit patterns [W, rows, cols] (uint32; uint64 for f64)."""
    _check_regs(regs, fmap.nregs)
    return fmap.scatter(unpack(regs, fmap.bits), np.uint64 if fmap.bits == 64 else np.uint32)


def matrix_to_fragment(mat: np.ndarray, fmap: FragmentMap) -> np.ndarray:
    """Matrix of bit patterns [W, rows, cols] -> registers [W, 32, R] (uint32)."""
    return pack(fmap.gather(np.asarray(mat)), fmap.bits)


def _check_regs(regs: np.ndarray, nregs: int) -> None:
    if regs.ndim != 3 or regs.shape[1] != 32 or regs.shape[2] != nregs:
        raise SimulationError(f"fragment registers must be shaped [W, 32, {nregs}], got {list(regs.shape)}")
