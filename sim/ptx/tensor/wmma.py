"""``wmma`` m16n16k16: fragment loads/stores from memory and the warp-level multiply-accumulate.

::

    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, [%rd22], %r50;
    wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%f1,...,%f8}, {%r1,...,%r8}, {%r9,...,%r16}, {%f1,...,%f8};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd30], {%f1,...,%f8}, %r51;

The PTX spec leaves the fragment distribution unspecified; this module uses the layout probed on
H200 (sm_90, facts/ptx.md 10.3), which reduces wmma to two ``mma.m16n8k16``:

* A f16/bf16: registers 0-3 hold the m16n8k16 A fragment; f16 registers 4-7 repeat 0-3
  (bf16 A has only 4 registers).  B f16: registers 0-1 the m16n8k16 B fragment of columns 0-7,
  2-3 the same for columns 8-15, 4-7 repeat 0-3 (bf16 B has 4 registers).
* C/D f32 or s32 (8 registers): 0-3 the m16n8 C fragment of columns 0-7, 4-7 of columns 8-15;
  C/D f16 (4 registers): 0-1 columns 0-7, 2-3 columns 8-15 (by analogy; not probed).
* A s8/u8 (2 registers): the m16n8k16 integer A fragment; B s8/u8 (2 registers): register 0 is the
  integer B fragment of columns 0-7, register 1 of columns 8-15.

The layout (``row``/``col``) and ``stride`` (in elements) only decide where the elements are in
memory: element (r, c) of the logical matrix (A: M x K, B: K x N, C/D: M x N) is at byte
``base + (r*stride + c)*size`` for ``row`` and ``base + (c*stride + r)*size`` for ``col``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.errors import SimulationError

from .elements import element_type
from .fragments import FragmentMap, mma_fragment_map, pack, unpack
from .mma import fragment_mma
from .smem import gather_bytes, scatter_bytes

_INT_BY_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _concat(*maps: FragmentMap, col_offsets=None, shape=(16, 16)) -> FragmentMap:
    offs = col_offsets or [0] * len(maps)
    rows = np.concatenate([m.rows for m in maps], axis=1)
    cols = np.concatenate([m.cols + o for m, o in zip(maps, offs)], axis=1)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return FragmentMap(rows, cols, maps[0].bits, shape)


@lru_cache(maxsize=None)
def wmma_fragment_map(operand: str, etype: str, shape: str = "m16n16k16") -> FragmentMap:
    """Index map of a wmma fragment (operand ``'a'``, ``'b'``, ``'c'`` or ``'d'``), H200 layout.

    Unlike mma maps, f16 A/B maps hold every matrix element twice (registers 4-7 repeat 0-3).
    """
    if shape != "m16n16k16":
        raise SimulationError(f"wmma .{shape} is not supported (only .m16n16k16, the shape probed on H200)")
    if operand == "a" and etype in ("f16", "bf16"):
        a = mma_fragment_map("m16n8k16", "a", etype)
        return _concat(a, a) if etype == "f16" else a
    if operand == "b" and etype in ("f16", "bf16"):
        b = mma_fragment_map("m16n8k16", "b", etype)
        half = _concat(b, b, col_offsets=[0, 8])
        return _concat(half, half) if etype == "f16" else half
    if operand == "a" and etype in ("s8", "u8"):
        return mma_fragment_map("m16n8k16", "a", etype)
    if operand == "b" and etype in ("s8", "u8"):
        b = mma_fragment_map("m16n8k16", "b", etype)
        return _concat(b, b, col_offsets=[0, 8])
    if operand in ("c", "d") and etype in ("f32", "s32", "f16"):
        c = mma_fragment_map("m16n8k16", "c", etype)
        return _concat(c, c, col_offsets=[0, 8])
    raise SimulationError(f"wmma fragment {operand} of type .{etype} is not supported")


def _nregs(fmap: FragmentMap) -> int:
    return fmap.elements * fmap.bits // 32


def wmma_addresses(operand: str, layout: str, etype: str, base: np.ndarray, stride,
                   shape: str = "m16n16k16") -> np.ndarray:
    """Byte address of every fragment element, ``[W, 32, E]`` int64 (``E`` as in the map).

    ``base`` is ``[W]`` (the warp-uniform address operand), ``stride`` an int or ``[W]`` in elements.
    """
    if layout not in ("row", "col"):
        raise SimulationError(f"wmma layout must be .row or .col, got .{layout}")
    fmap = wmma_fragment_map(operand, etype, shape)
    size = element_type(etype).bits // 8
    base = np.asarray(base, dtype=np.int64).reshape(-1, 1, 1)
    stride = np.asarray(stride, dtype=np.int64).reshape(-1, 1, 1)
    r, c = fmap.rows[None], fmap.cols[None]
    idx = r * stride + c if layout == "row" else c * stride + r
    return base + idx * size


def wmma_load(operand: str, layout: str, etype: str, mem: np.ndarray, base: np.ndarray, stride,
              shape: str = "m16n16k16") -> np.ndarray:
    """``wmma.load.{a,b,c}``: registers ``[W, 32, R]`` from the flat byte array ``mem``."""
    addr = wmma_addresses(operand, layout, etype, base, stride, shape)
    size = element_type(etype).bits // 8
    raw = gather_bytes(mem, addr, size, "wmma.load")                 # [W, 32, E, size]
    elems = np.ascontiguousarray(raw).view(_INT_BY_SIZE[size])[..., 0]
    return pack(elems, element_type(etype).bits)


def wmma_store(layout: str, etype: str, mem: np.ndarray, base: np.ndarray, stride, regs: np.ndarray,
               shape: str = "m16n16k16") -> None:
    """``wmma.store.d``: write the D fragment ``[W, 32, R]`` into ``mem`` in place."""
    addr = wmma_addresses("d", layout, etype, base, stride, shape)
    fmap = wmma_fragment_map("d", etype, shape)
    size = element_type(etype).bits // 8
    elems = unpack(np.asarray(regs, dtype=np.uint32), fmap.bits).astype(_INT_BY_SIZE[size])
    data = np.ascontiguousarray(elems[..., None]).view(np.uint8)      # [W, 32, E, size]
    scatter_bytes(mem, addr, data, "wmma.store")


def wmma_mma(a_type: str, b_type: str, c_type: str, d_type: str, A: np.ndarray, B: np.ndarray,
             C: np.ndarray, satfinite: bool = False, shape: str = "m16n16k16") -> np.ndarray:
    """``wmma.mma``: D = A x B + C; the ``.row.col`` layout modifiers do not change the registers.

    For ``wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32`` a/b are f16:
    ``wmma_mma("f16", "f16", "f32", "f32", A, B, C)``.
    """
    amap, bmap = wmma_fragment_map("a", a_type, shape), wmma_fragment_map("b", b_type, shape)
    cmap, dmap = wmma_fragment_map("c", c_type, shape), wmma_fragment_map("d", d_type, shape)
    for regs, fmap, name in ((A, amap, "A"), (B, bmap, "B"), (C, cmap, "C")):
        if regs.ndim != 3 or regs.shape[1:] != (32, _nregs(fmap)):
            raise SimulationError(f"wmma {name} fragment must be shaped [W, 32, {_nregs(fmap)}], "
                                  f"got {list(regs.shape)}")
    return fragment_mma(A, B, C, (amap, bmap, cmap, dmap), (a_type, b_type, c_type, d_type), satfinite)
