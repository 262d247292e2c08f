"""``wgmma.mma_async`` (sm_90a): warpgroup MMA with shared-memory matrix descriptors.

::

    wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r188,...,%r219}, %rd17, %rd18, %p13, 1, 1, 0, 1;
    wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%r195,...,%r226}, %rd19, %rd20, %p10;
    wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%r232,...,%r263}, %rd21, %rd22, %p9, 1, 1;

maps to ``wgmma_mma_async("m64n64k16", "f32", "f16", "f16", D, a, desc_b, smem, scale_d,
imm_scale_a=1, imm_scale_b=1, trans_a=0, trans_b=1)``.

**Descriptor** (64 bits, PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4,
16-29 leading-dimension byte offset (LBO) >> 4, 32-45 stride-dimension byte offset (SBO) >> 4,
49-51 base offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).  Triton's ``or.b64`` immediates
decode as: ``-9223371899415822336`` = 64B swizzle, SBO 512; ``4611686293305294848`` = 128B
swizzle, SBO 1024; nvcc's hand-built ``68720001024`` = no swizzle, LBO 128, SBO 256.

**Canonical layouts** (the CUTLASS ``make_gmma_desc`` forms, in bytes; ``e`` = element bytes;
``r`` = M/N index, ``k`` = K index; a core matrix is 8 rows x 16 bytes):

* K-major (``trans = 0``; rows of K contiguous).  ``kb = k*e``:
  none: ``(r%8)*16 + (r//8)*SBO + (kb//16)*LBO + kb%16``;
  swizzle of width ``S`` (32/64/128 B): ``(r%8)*S + (r//8)*SBO + kb`` (LBO unused).
* MN-major (``trans = 1``, f16/bf16 only; M/N contiguous).  ``nb = r*e``:
  none: ``(nb//16)*SBO + (k%8)*16 + (k//8)*LBO + nb%16``;
  swizzle ``S``: ``(nb//S)*LBO + (k%8)*S + (k//8)*SBO + nb%S``.
* The byte address is ``start + offset``, then swizzled on its absolute value: 128B XORs address
  bits 4-6 with bits 7-9, 64B bits 4-5 with bits 7-8, 32B bit 4 with bit 7 (CUTLASS
  ``Swizzle<3|2|1, 4, 3>``).  The base-offset field is decoded but not applied (the corpus
  leaves it 0 and aligns its tiles).

**Register fragments** (warp ``w`` = warp index mod 4 of its warpgroup, lane ``t``, g = t//4,
q = t%4): D register ``i`` (N/2 f32/s32 per lane) is ``D[16w + g + 8*((i>>1)&1), 8*(i>>2) + 2q + (i&1)]``;
f16 D packs elements 2i, 2i+1 of that order into register i.  A from registers is the mma
m16n8k16 (16-bit) / m16n8k32 (8-bit) A fragment of rows 16w..16w+15.

**Semantics**: D = scale_d ? A*B + D : A*B, with A negated for ``imm_scale_a = -1`` and B for
``imm_scale_b = -1``; each instruction is one fused accumulation (:mod:`.accumulate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from isa.errors import SimulationError

from .accumulate import float_accumulate, int_accumulate
from .elements import decode, element_type, encode
from .fragments import FragmentMap, fragment_to_matrix, mma_fragment_map, pack, parse_shape, unpack
from .smem import gather_bytes

#: swizzle field value -> swizzle width in bytes (0 = none)
SWIZZLE_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}


@dataclass(frozen=True)
class Descriptor:
    """A decoded wgmma shared-memory matrix descriptor (byte values)."""

    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: int          # width in bytes: 0, 32, 64, 128

    @classmethod
    def decode(cls, value: int) -> "Descriptor":
        v = int(value) & 0xFFFF_FFFF_FFFF_FFFF
        return cls(start=(v & 0x3FFF) << 4, lbo=((v >> 16) & 0x3FFF) << 4, sbo=((v >> 32) & 0x3FFF) << 4,
                   base_offset=(v >> 49) & 7, swizzle=SWIZZLE_BYTES[v >> 62])

    def encode(self) -> int:
        field = {b: f for f, b in SWIZZLE_BYTES.items()}[self.swizzle]
        return ((self.start >> 4) & 0x3FFF) | ((self.lbo >> 4) & 0x3FFF) << 16 | \
            ((self.sbo >> 4) & 0x3FFF) << 32 | (self.base_offset & 7) << 49 | field << 62


def decode_descriptors(desc: np.ndarray) -> dict[str, np.ndarray]:
    """Vectorised :meth:`Descriptor.decode`: uint64/int64 array -> dict of int64 arrays."""
    v = np.asarray(desc).astype(np.int64).view(np.uint64) if np.asarray(desc).dtype.kind == "i" \
        else np.asarray(desc, dtype=np.uint64)
    f = lambda shift, mask: ((v >> np.uint64(shift)) & np.uint64(mask)).astype(np.int64)  # noqa: E731
    sw = f(62, 3)
    return {"start": f(0, 0x3FFF) << 4, "lbo": f(16, 0x3FFF) << 4, "sbo": f(32, 0x3FFF) << 4,
            "base_offset": f(49, 7), "swizzle": np.array([0, 128, 64, 32])[sw]}


def swizzle_address(addr: np.ndarray, swizzle: np.ndarray) -> np.ndarray:
    """Apply the 32/64/128-byte swizzle (XOR of address bits 4.. with bits 7..) to byte addresses."""
    addr = np.asarray(addr, dtype=np.int64)
    sw = np.asarray(swizzle, dtype=np.int64)
    mask = np.select([sw == 128, sw == 64, sw == 32], [7, 3, 1], 0)
    return addr ^ (((addr >> 7) & mask) << 4)


def matrix_addresses(desc: np.ndarray, rows: int, kcols: int, etype: str, mn_major) -> np.ndarray:
    """Byte address of every element of an operand tile read through descriptors.

    ``desc`` is ``[W]``; the tile is ``rows`` (M or N) x ``kcols`` (K).  ``mn_major`` (bool or
    ``[W]``) selects the transposed layout.  Returns ``[W, rows, kcols]`` int64.
    """
    d = decode_descriptors(np.asarray(desc).reshape(-1))
    e = element_type(etype).bits // 8
    r = np.arange(rows)[None, :, None]
    k = np.arange(kcols)[None, None, :]
    start, lbo, sbo, sw = (d[x][:, None, None] for x in ("start", "lbo", "sbo", "swizzle"))
    width = np.where(sw == 0, 16, sw)
    kb = k * e
    k_none = (r % 8) * 16 + (r // 8) * sbo + (kb // 16) * lbo + kb % 16
    k_swz = (r % 8) * width + (r // 8) * sbo + kb
    kmaj = np.where(sw == 0, k_none, k_swz)
    nb = r * e
    m_none = (nb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo + nb % 16
    m_swz = (nb // width) * lbo + (k % 8) * width + (k // 8) * sbo + nb % width
    mnmaj = np.where(sw == 0, m_none, m_swz)
    mn = np.asarray(mn_major, dtype=bool).reshape(-1, 1, 1)
    off = np.where(mn, mnmaj, kmaj)
    return swizzle_address(start + off, sw)


@lru_cache(maxsize=None)
def wgmma_d_map(n: int, etype: str) -> FragmentMap:
    """D fragment of one warp (rows 0..15 of its 16-row slice) for ``m64nNk*``: [32, N/2] elements."""
    t = np.arange(32)[:, None]
    i = np.arange(n // 2)[None, :]
    rows = (t >> 2) + 8 * ((i >> 1) & 1)
    cols = 8 * (i >> 2) + 2 * (t & 3) + (i & 1)
    rows, cols = np.broadcast_arrays(rows, cols)
    rows, cols = rows.copy(), cols.copy()
    rows.setflags(write=False)
    cols.setflags(write=False)
    return FragmentMap(rows, cols, element_type(etype).bits, (16, n))


def wgmma_a_map(etype: str) -> FragmentMap:
    """A fragment of one warp (its 16 rows) when A comes from registers."""
    k = {16: "m16n8k16", 8: "m16n8k32"}.get(element_type(etype).bits)
    if etype == "tf32":
        k = "m16n8k8"
    if k is None:
        raise SimulationError(f"wgmma A of type .{etype} is not supported")
    return mma_fragment_map(k, "a", etype)


WGMMA_TYPES = {("f32", "f16"), ("f16", "f16"), ("f32", "bf16"), ("f32", "tf32"), ("f32", "e4m3"),
               ("f32", "e5m2"), ("f16", "e4m3"), ("f16", "e5m2"), ("s32", "s8"), ("s32", "u8")}


def wgmma_mma_async(shape: str, d_type: str, a_type: str, b_type: str, D: np.ndarray, a: np.ndarray,
                    desc_b: np.ndarray, smem: np.ndarray, scale_d, imm_scale_a: int = 1,
                    imm_scale_b: int = 1, trans_a: int = 0, trans_b: int = 0,
                    satfinite: bool = False, operands=None) -> np.ndarray:
    """Run one ``wgmma.mma_async`` for W warps (W a multiple of 4); returns the new D ``[W, 32, R]``.

    ``a`` is either the A descriptors ``[W]`` (uint64/int64; one per warp, equal within a
    warpgroup) or A registers ``[W, 32, 4]``; ``desc_b`` is ``[W]``; ``scale_d`` a bool/int or
    ``[W]``.  ``smem`` as in :mod:`.smem`.  The result is what the engine commits when the
    ``wgmma.wait_group`` that covers this instruction completes.

    ``operands`` = ``(A bits [W, 16, K] or None, B bits [W, N, K])``: the shared-memory elements
    at :func:`wgmma_smem_addresses`, already read by the caller (an engine that keeps those
    addresses per descriptor); ``smem`` and the descriptors are then not read.
    """
    m, n, k = parse_shape(shape)
    et_a = element_type(a_type)
    if m != 64 or n % 8 or not 8 <= n <= 256 or k * et_a.bits != 256:
        raise SimulationError(f"wgmma shape .{shape} does not fit .{a_type} (m64nNk{256 // et_a.bits}, N = 8..256 step 8)")
    if (d_type, a_type) not in WGMMA_TYPES or (d_type, b_type) not in WGMMA_TYPES:
        raise SimulationError(f"wgmma .{d_type}.{a_type}.{b_type} is not supported")
    if (trans_a or trans_b) and et_a.bits != 16:
        raise SimulationError("wgmma transpose is only defined for .f16/.bf16")
    D = np.asarray(D, dtype=np.uint32)
    W = D.shape[0]
    dmap = wgmma_d_map(n, d_type)
    if W % 4 or D.shape[1:] != (32, dmap.nregs):
        raise SimulationError(f"wgmma D must be shaped [4*G, 32, {dmap.nregs}], got {list(D.shape)}")
    slot = np.arange(W) % 4                                   # warp within its warpgroup
    a = np.asarray(a)
    if a.ndim == 3:                                            # A in registers
        amap = wgmma_a_map(a_type)
        amat = decode(fragment_to_matrix(a.astype(np.uint32), amap), a_type)
    elif operands is not None:
        amat = decode(operands[0], a_type)
    else:
        addr = matrix_addresses(a.reshape(-1), 64, k, a_type, bool(trans_a))        # [W, 64, k]
        addr = addr[np.arange(W)[:, None], (16 * slot)[:, None] + np.arange(16)]     # [W, 16, k]
        amat = decode(_elements(smem, addr, et_a.bits // 8), a_type)
    if operands is not None:
        bbits = operands[1]
    else:
        baddr = matrix_addresses(np.asarray(desc_b).reshape(-1), n, k, b_type, bool(trans_b))  # [W, n, k]
        bbits = _elements(smem, baddr, element_type(b_type).bits // 8)
    bmat = decode(bbits, b_type).transpose(0, 2, 1)
    if imm_scale_a == -1:
        amat = -amat
    if imm_scale_b == -1:
        bmat = -bmat
    c = decode(dmap.scatter(unpack(D, dmap.bits)), d_type)
    keep = np.broadcast_to(np.asarray(scale_d).astype(bool).reshape(-1, 1, 1), c.shape)
    c = np.where(keep, c, 0)
    if element_type(d_type).integer:
        d = int_accumulate(amat, bmat, c, satfinite)
    else:
        d = float_accumulate(amat, bmat, c, a_type, b_type, d_type)
    return pack(dmap.gather(encode(d, d_type)), dmap.bits)


def _elements(smem: np.ndarray, addr: np.ndarray, size: int) -> np.ndarray:
    raw = np.ascontiguousarray(gather_bytes(smem, addr, size, "wgmma.mma_async"))
    return raw.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[size])[..., 0]


def wgmma_smem_addresses(shape: str, a_type: str, b_type: str, a: np.ndarray | None, desc_b: np.ndarray,
                         trans_a: int = 0, trans_b: int = 0) -> tuple[np.ndarray | None, np.ndarray]:
    """Byte addresses a ``wgmma`` reads from shared memory, for bounds and initialisation checks.

    Returns ``(a_addr [W, 16, K] or None when A is in registers, b_addr [W, N, K])``; element size
    is that of the type.  Warp w of a warpgroup reads A rows ``16*(w%4) ..``; every warp reads all of B.
    """
    m, n, k = parse_shape(shape)
    a_addr = None
    if a is not None and np.asarray(a).ndim == 1:
        full = matrix_addresses(np.asarray(a), 64, k, a_type, bool(trans_a))
        W = full.shape[0]
        slot = np.arange(W) % 4
        a_addr = full[np.arange(W)[:, None], (16 * slot)[:, None] + np.arange(16)]
    return a_addr, matrix_addresses(np.asarray(desc_b).reshape(-1), n, k, b_type, bool(trans_b))
