"""``wmma``: fragment loads/stores from memory and the warp-level multiply-accumulate, every shape
of the ISA (:data:`WMMA_SHAPES`; the register rule is :func:`wmma_fragment_map`).

::

    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, [%rd22], %r50;
    wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%f1,...,%f8}, {%r1,...,%r8}, {%r9,...,%r16}, {%f1,...,%f8};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd30], {%f1,...,%f8}, %r51;

The PTX spec leaves the fragment distribution unspecified; for m16n16k16 this module uses the
layout probed on H200 (sm_90, facts/ptx.md 10.3), which reduces wmma to two ``mma.m16n8k16``
(the other shapes follow the same tiling rule):

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
from .fragments import FragmentMap, mma_fragment_map, pack, parse_shape, unpack
from .mma import fragment_mma
from .smem import gather_bytes, scatter_bytes

_INT_BY_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _concat(maps, row_offsets, col_offsets, shape) -> FragmentMap:
    rows = np.concatenate([m.rows + o for m, o in zip(maps, row_offsets)], axis=1)
    cols = np.concatenate([m.cols + o for m, o in zip(maps, col_offsets)], axis=1)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return FragmentMap(rows, cols, maps[0].bits, shape)


def wmma_unit(etype: str) -> tuple[int, int]:
    """(bytes, bits) of the unit a wmma load/store moves per register slot: the element, or for
    the sub-byte .s4/.u4/.b1 the whole 32-bit register (its 8 or 32 elements are consecutive in
    memory: A is .row and B .col for these types, ISA 9.7.14.4.3)."""
    bits = element_type(etype).bits
    return (4, 32) if bits < 8 else (bits // 8, bits)


#: wmma shapes (ISA 9.7.14.4.1) and the a/b element types each takes
WMMA_SHAPES: dict[str, tuple[str, ...]] = {
    "m16n16k16": ("f16", "bf16", "s8", "u8"), "m32n8k16": ("f16", "bf16", "s8", "u8"),
    "m8n32k16": ("f16", "bf16", "s8", "u8"), "m16n16k8": ("tf32",), "m8n8k4": ("f64",),
    "m8n8k32": ("s4", "u4"), "m8n8k128": ("b1",),
}

#: accumulator types of each a/b type
WMMA_ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "s8": ("s32",), "u8": ("s32",), "tf32": ("f32",),
    "f64": ("f64",), "s4": ("s32",), "u4": ("s32",), "b1": ("s32",),
}


@lru_cache(maxsize=None)
def wmma_fragment_map(operand: str, etype: str, shape: str = "m16n16k16") -> FragmentMap:
    """Index map of a wmma fragment (operand ``'a'``, ``'b'``, ``'c'`` or ``'d'``).

    One rule for every shape: a wmma M x N x K is tiled by the ``mma`` fragments of its 8- or
    16-row blocks (:func:`.fragments.mma_fragment_map` of ``m{16|8}n8k{K}``): A is the A fragments
    of its row blocks in order, B the B fragments of its 8-column blocks, C/D the C fragments of
    its (row block, column block) tiles, row blocks outermost.  .f16 A and B then repeat those
    registers up to the ISA's 8 (9.7.14.4.2: "a/b .f16: 8 x .f16x2").  For m16n16k16 this is the
    layout probed on the H200 (facts/ptx.md 10.3); for the other shapes, which no probe pins down
    (the ISA leaves the distribution unspecified), it is the same rule.
    """
    m, n, k = parse_shape(shape)
    ab = WMMA_SHAPES.get(shape)
    if ab is None:
        raise SimulationError(f"wmma .{shape} is not a wmma shape (ISA: {', '.join(WMMA_SHAPES)})")
    if operand in ("a", "b") and etype not in ab or operand in ("c", "d") and \
            etype not in {acc for t in ab for acc in WMMA_ACCUMULATORS[t]}:
        raise SimulationError(f"wmma fragment {operand} of type .{etype} is not supported for .{shape}")
    mb = 16 if m >= 16 else 8
    tile = f"m{mb}n8k{k}"
    if operand == "a":
        blocks = [(mma_fragment_map(tile, "a", etype), i * mb, 0) for i in range(m // mb)]
        shp = (m, k)
    elif operand == "b":
        blocks = [(mma_fragment_map(tile, "b", etype), 0, j * 8) for j in range(n // 8)]
        shp = (k, n)
    else:
        blocks = [(mma_fragment_map(tile, "c", etype), i * mb, j * 8) for i in range(m // mb) for j in range(n // 8)]
        shp = (m, n)
    fmap = _concat([b for b, _, _ in blocks], [r for _, r, _ in blocks], [c for _, _, c in blocks], shp)
    if operand in ("a", "b") and etype == "f16":
        fmap = _concat([fmap] * (8 // fmap.nregs), [0] * (8 // fmap.nregs), [0] * (8 // fmap.nregs), shp)
    return fmap


def _nregs(fmap: FragmentMap) -> int:
    return fmap.nregs


def wmma_addresses(operand: str, layout: str, etype: str, base: np.ndarray, stride,
                   shape: str = "m16n16k16") -> np.ndarray:
    """Byte address of every fragment element, ``[W, 32, E]`` int64 (``E`` as in the map); for
    .s4/.u4/.b1 of every register (``[W, 32, R]``, see :func:`wmma_unit`).

    ``base`` is ``[W]`` (the warp-uniform address operand), ``stride`` an int or ``[W]`` in elements.
    """
    if layout not in ("row", "col"):
        raise SimulationError(f"wmma layout must be .row or .col, got .{layout}")
    fmap = wmma_fragment_map(operand, etype, shape)
    bits = element_type(etype).bits
    base = np.asarray(base, dtype=np.int64).reshape(-1, 1, 1)
    stride = np.asarray(stride, dtype=np.int64).reshape(-1, 1, 1)
    r, c = fmap.rows[None], fmap.cols[None]
    if bits < 8:
        need = "row" if operand == "a" else "col"
        if layout != need:
            raise SimulationError(f"wmma.load.{operand} of .{etype} requires .{need}, got .{layout}")
        per = 32 // bits
        r, c = r[..., ::per], c[..., ::per]                   # the first element of each register
    idx = r * stride + c if layout == "row" else c * stride + r
    return base + idx * bits // 8


def wmma_load(operand: str, layout: str, etype: str, mem: np.ndarray, base: np.ndarray, stride,
              shape: str = "m16n16k16") -> np.ndarray:
    """``wmma.load.{a,b,c}``: registers ``[W, 32, R]`` from the flat byte array ``mem``."""
    addr = wmma_addresses(operand, layout, etype, base, stride, shape)
    size, bits = wmma_unit(etype)
    raw = gather_bytes(mem, addr, size, "wmma.load")                 # [W, 32, E, size]
    elems = np.ascontiguousarray(raw).view(_INT_BY_SIZE[size])[..., 0]
    return pack(elems, bits)


def wmma_store(layout: str, etype: str, mem: np.ndarray, base: np.ndarray, stride, regs: np.ndarray,
               shape: str = "m16n16k16") -> None:
    """``wmma.store.d``: write the D fragment ``[W, 32, R]`` into ``mem`` in place."""
    addr = wmma_addresses("d", layout, etype, base, stride, shape)
    size, bits = wmma_unit(etype)
    regs = np.asarray(regs, dtype=np.uint64 if bits == 64 else np.uint32)
    elems = unpack(regs, bits).astype(_INT_BY_SIZE[size])
    data = np.ascontiguousarray(elems[..., None]).view(np.uint8)      # [W, 32, E, size]
    scatter_bytes(mem, addr, data, "wmma.store")


def wmma_mma(a_type: str, b_type: str, c_type: str, d_type: str, A: np.ndarray, B: np.ndarray,
             C: np.ndarray, satfinite: bool = False, shape: str = "m16n16k16", bitop: str | None = None) -> np.ndarray:
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
    if (a_type == "b1") != (bitop in ("and", "xor")):
        raise SimulationError("wmma.mma with .b1 needs .and.popc or .xor.popc (and only .b1 takes them)")
    return fragment_mma(A, B, C, (amap, bmap, cmap, dmap), (a_type, b_type, c_type, d_type), satfinite,
                        bitop=bitop)
