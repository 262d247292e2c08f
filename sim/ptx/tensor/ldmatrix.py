"""``ldmatrix`` / ``stmatrix``: 8x8 b16 matrices between shared memory and warp registers.

::

    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r110, %r111, %r112, %r113}, [%r182+512];
    ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
    stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r7], {%r1, %r2};

Matrix ``j`` (0 <= j < num) has its 8 rows (16 bytes each, 16-byte aligned) at the addresses
given by lanes ``8j .. 8j+7`` (ISA 9.7.14.5.15/16); lanes >= 8*num supply nothing.  Register ``j``
of lane ``t`` holds ``M_j[t//4][2*(t%4)]`` (bits 15:0) and ``M_j[t//4][2*(t%4)+1]`` (bits 31:16);
with ``.trans`` it holds ``M_j[2*(t%4)][t//4]`` and ``M_j[2*(t%4)+1][t//4]`` (verified on H200).
"""

from __future__ import annotations

import numpy as np

from isa.errors import SimulationError

from .smem import as_bytes, as_u16, gather_bytes, scatter_bytes

_T = np.arange(32)
_ROW = _T >> 2            # t // 4
_COL = 2 * (_T & 3)       # 2 * (t % 4)

#: bytes each row-address lane touches
ROW_BYTES = 16


def _check(num: int, addresses: np.ndarray) -> np.ndarray:
    if num not in (1, 2, 4):
        raise SimulationError(f"ldmatrix/stmatrix .x{num}: the count must be 1, 2 or 4")
    addr = np.asarray(addresses, dtype=np.int64)
    if addr.ndim != 2 or addr.shape[1] != 32:
        raise SimulationError(f"ldmatrix/stmatrix addresses must be shaped [W, 32], got {list(addr.shape)}")
    return addr


def ldmatrix_addresses(num: int, addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shared-memory rows an ``ldmatrix``/``stmatrix`` ``.x{num}`` touches, per lane.

    Returns ``(addr [W, 32] int64, used [W, 32] bool)``: lane ``l`` with ``used`` reads (or writes)
    the 16 bytes at ``addr[w, l]``; lanes ``>= 8*num`` are not used.  Each used address must be
    16-byte aligned (``addr % 16 == 0``), which the engine checks and reports.
    """
    addr = _check(num, addresses)
    used = np.broadcast_to(_T < 8 * num, addr.shape).copy()
    return addr, used


def _matrices(regs: np.ndarray, trans: bool) -> np.ndarray:
    """regs [W, 32, num] -> matrices M [W, num, 8, 8] of uint16 (row as addressed, col)."""
    W, _, num = regs.shape
    lo = (regs & 0xFFFF).astype(np.uint16)
    hi = (regs >> 16).astype(np.uint16)
    m = np.zeros((W, num, 8, 8), dtype=np.uint16)
    for j in range(num):
        if trans:
            m[:, j, _COL, _ROW] = lo[:, :, j]
            m[:, j, _COL + 1, _ROW] = hi[:, :, j]
        else:
            m[:, j, _ROW, _COL] = lo[:, :, j]
            m[:, j, _ROW, _COL + 1] = hi[:, :, j]
    return m


def ldmatrix(num: int, trans: bool, smem: np.ndarray, addresses: np.ndarray) -> np.ndarray:
    """Load ``num`` 8x8 b16 matrices; returns registers [W, 32, num] (uint32).

    Register ``j`` of lane ``t`` is the 32-bit word ``t % 4`` of row ``t // 4`` of matrix ``j``
    (of its transpose with ``.trans``): elements ``2*(t%4)`` and ``2*(t%4)+1``, low one first, are
    one little-endian word, so the registers are the matrices' words in order."""
    addr = _check(num, addresses)
    W = addr.shape[0]
    m = _rows_u16(smem, addr[:, : 8 * num]).reshape(W, num, 8, 8)            # [W, j, r, c]
    if trans:
        m = m.transpose(0, 1, 3, 2)
    words = np.ascontiguousarray(m).view(np.uint32).reshape(W, num, 32)      # [W, j, t]
    return words.transpose(0, 2, 1).copy()


def _rows_u16(smem: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """The 16-byte rows at ``addr`` [W, R] as uint16 [W, R, 8]: two 8-byte loads per row when
    every address is 8-byte aligned and inside a flat ``smem``, else a byte gather (which also
    reports addresses outside the window)."""
    size = smem.shape[-1]
    if smem.ndim == 1 and addr.size and not (addr & 7).any() and addr.min() >= 0 \
            and addr.max() + ROW_BYTES <= size:
        q = smem[: size - size % 8].view(np.uint64)[(addr >> 3)[..., None] + np.arange(2)]   # [W, R, 2]
        return q.view(np.uint16)
    return as_u16(gather_bytes(smem, addr, ROW_BYTES, "ldmatrix"))


def stmatrix(num: int, trans: bool, smem: np.ndarray, addresses: np.ndarray, regs: np.ndarray) -> None:
    """Store ``num`` 8x8 b16 matrices from registers [W, 32, num] into ``smem`` in place.

    The inverse of :func:`ldmatrix`: ``ldmatrix(num, trans, smem, a)`` after
    ``stmatrix(num, trans, smem, a, r)`` gives back ``r`` when the rows do not overlap.
    """
    addr = _check(num, addresses)
    regs = np.asarray(regs, dtype=np.uint32)
    if regs.shape != (addr.shape[0], 32, num):
        raise SimulationError(f"stmatrix .x{num} registers must be shaped [W, 32, {num}], got {list(regs.shape)}")
    m = _matrices(regs, trans)                                                # [W, num, 8, 8]
    data = as_bytes(m.reshape(addr.shape[0], 8 * num, 8))                     # [W, 8num, 16]
    scatter_bytes(smem, addr[:, : 8 * num], data, "stmatrix")


def movmatrix(regs: np.ndarray) -> np.ndarray:
    """``movmatrix.sync.aligned.m8n8.trans.b16 d, a;``: the 8x8 b16 matrix held by the warp in the
    ldmatrix fragment layout (lane ``t``: row ``t//4``, columns ``2*(t%4)``, ``+1``), transposed;
    registers [W, 32] uint32 in and out (ISA 9.7.14.5.17)."""
    regs = np.asarray(regs, dtype=np.uint32)
    m = _matrices(regs[..., None], False)[:, 0]                               # [W, 8, 8]
    words = np.ascontiguousarray(m.transpose(0, 2, 1)).view(np.uint32).reshape(-1, 32)
    return words
