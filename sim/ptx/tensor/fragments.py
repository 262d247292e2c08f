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
    def nregs(self) -> int:
        return self.elements * self.bits // 32

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


@lru_cache(maxsize=None)
def mma_fragment_map(shape: str, operand: str, etype: str) -> FragmentMap:
    """Index map of an ``mma.sync`` fragment (operand ``'a'``, ``'b'``, ``'c'`` or ``'d'``).

    Supported: m16n8k16 (f16/bf16 A/B; s8/u8 A/B), m16n8k8 (f16/bf16; tf32), m16n8k4 (tf32),
    m16n8k32 (s8/u8/e4m3/e5m2), with f32/f16/s32 accumulators (ISA 9.7.14.5.7-10).
    """
    m, n, k = parse_shape(shape)
    et = element_type(etype)
    bits = et.bits
    if (m, n, k) == (8, 8, 16) and bits == 8 and operand in ("a", "b"):    # ISA 9.7.14.5.x, m8n8k16 .s8/.u8
        i = np.arange(4)[None, :]
        if operand == "a":
            return _map(_G + 0 * i, 4 * _T + i, bits, (8, 16))
        return _map(4 * _T + i, _G + 0 * i, bits, (16, 8))
    if operand in ("c", "d") and (m, n) == (8, 8) and bits == 32:          # m8n8 s32 accumulators
        i = np.arange(2)[None, :]
        return _map(_G + 0 * i, 2 * _T + i, bits, (8, 8))
    if operand in ("c", "d"):
        if (m, n) != (16, 8):
            raise SimulationError(f"mma shape .{shape} is not supported")
        i = np.arange(4)[None, :]
        return _map(_G + 8 * (i >> 1), 2 * _T + (i & 1), bits, (16, 8))
    if (m, n) != (16, 8):
        raise SimulationError(f"mma shape .{shape} is not supported")
    if operand == "a":
        if bits == 16 and k == 16:
            i = np.arange(8)[None, :]
            return _map(_G + 8 * ((i >> 1) & 1), 2 * _T + (i & 1) + 8 * (i >= 4), bits, (16, 16))
        if bits == 16 and k == 8:
            i = np.arange(4)[None, :]
            return _map(_G + 8 * (i >= 2), 2 * _T + (i & 1), bits, (16, 8))
        if bits == 8 and k == 32:
            i = np.arange(16)[None, :]
            return _map(_G + 8 * ((i >> 2) & 1), 4 * _T + (i & 3) + 16 * (i >= 8), bits, (16, 32))
        if bits == 8 and k == 16:
            i = np.arange(8)[None, :]
            return _map(_G + 8 * (i >= 4), 4 * _T + (i & 3), bits, (16, 16))
        if etype == "tf32" and k == 8:
            i = np.arange(4)[None, :]
            return _map(_G + 8 * (i & 1), _T + 4 * (i >= 2), bits, (16, 8))
        if etype == "tf32" and k == 4:
            i = np.arange(2)[None, :]
            return _map(_G + 8 * i, _T + 0 * i, bits, (16, 4))
    elif operand == "b":
        if bits == 16 and k == 16:
            i = np.arange(4)[None, :]
            return _map(2 * _T + (i & 1) + 8 * (i >= 2), _G + 0 * i, bits, (16, 8))
        if bits == 16 and k == 8:
            i = np.arange(2)[None, :]
            return _map(2 * _T + i, _G + 0 * i, bits, (8, 8))
        if bits == 8 and k == 32:
            i = np.arange(8)[None, :]
            return _map(4 * _T + (i & 3) + 16 * (i >= 4), _G + 0 * i, bits, (32, 8))
        if bits == 8 and k == 16:
            i = np.arange(4)[None, :]
            return _map(4 * _T + i, _G + 0 * i, bits, (16, 8))
        if etype == "tf32" and k == 8:
            i = np.arange(2)[None, :]
            return _map(_T + 4 * i, _G + 0 * i, bits, (8, 8))
        if etype == "tf32" and k == 4:
            i = np.arange(1)[None, :]
            return _map(_T + 0 * i, _G + 0 * i, bits, (4, 8))
    raise SimulationError(f"mma fragment .{shape} operand {operand} of type .{etype} is not supported")


_NARROW = {8: np.uint8, 16: np.uint16}


def pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """Elements [..., E] (bit patterns) -> registers [..., E*bits/32] as uint32, low element first.

    8/16-bit elements are narrowed (keeping their low bits) and the row reinterpreted as uint32:
    on a little-endian host that puts element 0 in the low bits, as the ISA packs them."""
    e = np.asarray(elems)
    if bits == 32:
        return e.astype(np.uint32)
    n = np.ascontiguousarray(e.astype(_NARROW[bits]))
    return n.view(np.uint32) if n.shape[-1] * bits % 32 == 0 else _pack_shift(e, bits)


def _pack_shift(e: np.ndarray, bits: int) -> np.ndarray:
    per = 32 // bits
    e = e.astype(np.uint32)
    e = e.reshape(e.shape[:-1] + (e.shape[-1] // per, per)) & np.uint32((1 << bits) - 1)
    shifts = (np.arange(per, dtype=np.uint32) * bits)
    return np.bitwise_or.reduce(e << shifts, axis=-1).astype(np.uint32)


def unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    """Registers [..., R] (uint32) -> elements [..., R*32/bits] as uint32, low element first."""
    r = np.ascontiguousarray(np.asarray(regs).astype(np.uint32))
    if bits == 32:
        return r
    if r.ndim == 0:
        r = r.reshape(1)
    return r.view(_NARROW[bits]).astype(np.uint32)


def fragment_to_matrix(regs: np.ndarray, fmap: FragmentMap) -> np.ndarray:
    """Registers [W, 32, R] -> matrix of bit patterns [W, rows, cols] (uint32)."""
    _check_regs(regs, fmap.nregs)
    return fmap.scatter(unpack(regs, fmap.bits))


def matrix_to_fragment(mat: np.ndarray, fmap: FragmentMap) -> np.ndarray:
    """Matrix of bit patterns [W, rows, cols] -> registers [W, 32, R] (uint32)."""
    return pack(fmap.gather(np.asarray(mat)), fmap.bits)


def _check_regs(regs: np.ndarray, nregs: int) -> None:
    if regs.ndim != 3 or regs.shape[1] != 32 or regs.shape[2] != nregs:
        raise SimulationError(f"fragment registers must be shaped [W, 32, {nregs}], got {list(regs.shape)}")
