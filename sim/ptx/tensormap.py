"""Tensor maps (``CUtensorMap``) and the box copies of ``cp.async.bulk.tensor`` (TMA, tile and im2col modes).

A kernel receives a tensor map as a 128-byte ``.param .align 64 .b8 p[128]`` (``__grid_constant__
CUtensorMap``, Triton's TMA descriptors) or finds it in global memory, and hands its address to::

    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd11, {%r72, %r37}], [%r5];
    cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd14, {%r36, %r37}], [%r7];

The driver's 128-byte encoding is not published, so the simulator writes its own (:meth:`TensorMap.encode`,
magic ``KLTM``) with the fields ``cuTensorMapEncodeTiled`` takes (CUDA driver API, "Tensor Map Object
Management"), in its order (dimension 0 is the contiguous one):

* ``dtype`` (``CUtensorMapDataType``), ``rank`` 1..5, ``address`` of the buffer;
* ``dims`` (``globalDim``, elements), ``strides`` (``globalStrides``, bytes, for dimensions 1..rank-1;
  multiples of 16);
* ``box`` (``boxDim``, at most 256 each), ``element_strides`` (``elementStrides``, 1..8);
* ``interleave`` (``none``, ``16B``, ``32B``: NC/8HWC8-style layouts whose dimension 0 is one
  16- or 32-byte channel slice, :func:`_check_interleave`), ``swizzle`` (none, 32B, 64B, 128B),
  ``oob_fill`` (``zero``, or ``nan``: ``CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA``).

A tile load reads, for box index ``j``, the element at ``coord[i] + j[i] * element_strides[i]`` in
each dimension ``i`` (``ceil(box[i] / element_strides[i])`` of them; ``element_strides[0]`` is ignored, taken
as 1, as cuTensorMapEncodeTiled documents); elements outside
``[0, dims[i])`` read as the fill (zero bits, or the canonical NaN of the type). The box lands in
shared memory densely, dimension 0 fastest, and its byte addresses are swizzled as the wgmma
descriptors read them (:func:`sim.ptx.tensor.wgmma.swizzle_address`: 16-byte chunk bits 4.. XOR
address bits 7..). The mbarrier's tx-count drops by the whole box (out-of-bound elements count).
A tile store writes the in-bound elements of the box and skips the others.

An im2col map (:meth:`TensorMap.im2col`, ``cuTensorMapEncodeIm2col``'s fields) is read by
``cp.async.bulk.tensor.Nd...im2col...`` with im2col offsets: one column of ``pixels_per_column`` pixels
of ``channels_per_pixel`` channels each, the filter base walking the pixel bounding box
(:meth:`TensorMap.im2col_pixels`), densely in shared memory pixel by pixel and swizzled as above.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from isa.errors import InputError

MAGIC = 0x4D544C4B          # "KLTM" little-endian
SIZE = 128

#: CUtensorMapDataType -> (name, bytes)
DTYPES = {0: ("u8", 1), 1: ("u16", 2), 2: ("u32", 4), 3: ("s32", 4), 4: ("u64", 8), 5: ("s64", 8),
          6: ("f16", 2), 7: ("f32", 4), 8: ("f64", 8), 9: ("bf16", 2), 10: ("f32", 4), 11: ("tf32", 4),
          12: ("tf32", 4)}
DTYPE_CODE = {"u8": 0, "s8": 0, "e4m3": 0, "u16": 1, "s16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5,
              "f16": 6, "f32": 7, "f64": 8, "bf16": 9, "tf32": 11}
SWIZZLE = {0: 0, 1: 32, 2: 64, 3: 128}          # CUtensorMapSwizzle -> bytes
SWIZZLE_CODE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
INTERLEAVE = {"none": 0, "16B": 1, "32B": 2}
FILL = {"zero": 0, "nan": 1}
#: the NaN a NaN-filled out-of-bound element holds, by element bytes (the canonical quiet NaN; guessed
#: until examples/h200/tma.json records the device's, which tests/sim/ptx/test_tma.py checks)
NAN_BITS = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}
_FLOAT = {6, 7, 8, 9, 10, 11, 12}
_LAYOUT = struct.Struct("<IBBBBBB3hQ5I4Q5I5I3h")    # 4+6+6+8+20+32+20+20+6 = 122 bytes
#: the box's traversal (``cp.async.bulk.tensor``'s load mode the map is encoded for)
TILE, IM2COL = 0, 1
#: im2col: the range of the bounding-box corners and of the instruction's im2col offsets, by rank (PTX ISA
#: 5.5.4.1: 16-, 8- and 5-bit fields for 3D, 4D and 5D)
CORNER_BITS = {3: 16, 4: 8, 5: 5}


#: interleave code -> bytes of one channel slice (PTX ISA 5.5.6 "Interleave layout": NC/8HWC8 with
#: C8 in 16 bytes, NC/16HWC16 with C16 in 32 bytes)
SLICE = {1: 16, 2: 32}


def _check_interleave(bad, interleave, swizzle, r, es, dims, strides, box, ests, address):
    """The rules an interleaved tiled map obeys.  Documented (CUDA driver API, cuTensorMapEncodeTiled; PTX
    ISA 5.5.6): rank 3..5; ``32B`` needs swizzle ``32B``, a 32-byte aligned address and strides that are
    multiples of 32.  Modelled (the ISA shows no other form, so the simulator refuses the others rather than
    guess): dimension 0 is one channel slice (``dims[0]`` x element size = 16 or 32 bytes) and the box takes
    the whole slice with element stride 1, so the box lands in shared memory as whole slices."""
    sl = SLICE[INTERLEAVE[interleave]]
    if r < 3:
        bad(f"interleave {interleave} needs a tensor of rank 3 to 5 (PTX ISA: interleaved layouts are 3D, 4D "
            f"and 5D), this one has rank {r}")
    if interleave == "32B" and swizzle != "32B":
        bad(f"interleave 32B needs swizzle 32B (cuTensorMapEncodeTiled), got swizzle {swizzle}")
    if interleave == "32B" and any(s % 32 for s in strides):
        bad(f"strides {list(strides)}: with interleave 32B they must be multiples of 32 bytes")
    if interleave == "32B" and address % 32:
        bad(f"address 0x{address:x}: with interleave 32B the tensor must be 32-byte aligned")
    if dims[0] * es != sl:
        bad(f"dims[0] is {dims[0]} elements of {es} bytes; with interleave {interleave} dimension 0 is one "
            f"{sl}-byte channel slice ({sl // es} elements; pad the last slice with zeros)")
    if box[0] != dims[0] or ests[0] != 1:
        bad(f"box[0] {box[0]} with element stride {ests[0]}: with interleave {interleave} the simulator copies "
            f"whole {sl}-byte slices (box[0] = {dims[0]}, element stride 1); partial slices are not simulated")


@dataclass(frozen=True)
class TensorMap:
    """The fields of one tiled tensor map (``cuTensorMapEncodeTiled``'s arguments)."""

    dtype: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int = 0
    swizzle: int = 0            # CUtensorMapSwizzle code
    oob_fill: int = 0
    address: int = 0
    mode: int = TILE
    lower: tuple[int, ...] = ()     # im2col: pixelBoxLowerCorner (W, H, D order: dimensions 1..rank-2)
    upper: tuple[int, ...] = ()     # im2col: pixelBoxUpperCorner

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def esize(self) -> int:
        return DTYPES[self.dtype][1]

    @property
    def counts(self) -> tuple[int, ...]:
        """Elements per dimension of the box in shared memory (im2col: channels per pixel, pixels)."""
        if self.mode == IM2COL:
            return self.box[0], self.box[1]
        return tuple(-(-b // e) for b, e in zip(self.box, self.traversal))

    @property
    def traversal(self) -> tuple[int, ...]:
        """The element strides the copy walks: ``elementStrides[0]`` is ignored (cuTensorMapEncodeTiled: "when
        interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, the first element of this array is ignored since TMA
        doesn't support the stride for dimension zero"; interleaved maps here have it 1)."""
        return (1,) + tuple(self.element_strides[1:])

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.counts)) * self.esize

    @classmethod
    def tiled(cls, dtype: str, dims, box, *, strides=None, element_strides=None, interleave="none",
              swizzle="none", oob_fill="zero", address: int = 0, where: str = "tensor map") -> "TensorMap":
        """From the launch-spec spelling (names for the enums; ``strides`` default to a dense tensor)."""
        def bad(msg):
            raise InputError(f"{where}: {msg}")

        if dtype not in DTYPE_CODE:
            bad(f"unknown element type {dtype!r} (known: {', '.join(sorted(DTYPE_CODE))})")
        code = DTYPE_CODE[dtype]
        es = DTYPES[code][1]
        dims = tuple(int(d) for d in dims)
        box = tuple(int(b) for b in box)
        r = len(dims)
        if not 1 <= r <= 5:
            bad(f"rank {r}: a tensor map has 1 to 5 dimensions")
        if len(box) != r:
            bad(f"box has {len(box)} dimensions, dims {r}")
        if strides is None:
            strides, acc = [], es
            for d in dims[:-1]:
                acc *= d
                strides.append(acc)
        strides = tuple(int(s) for s in strides)
        if len(strides) != r - 1:
            bad(f"strides gives {len(strides)} values; a rank-{r} map takes {r - 1} (bytes, dimensions 1..{r - 1})")
        if any(s % 16 for s in strides):
            bad(f"strides {list(strides)} must be multiples of 16 bytes")
        ests = tuple(int(e) for e in (element_strides or [1] * r))
        if len(ests) != r or not all(1 <= e <= 8 for e in ests):
            bad(f"element_strides {list(ests)}: {r} values in 1..8")
        if not all(1 <= b <= 256 for b in box):
            bad(f"box {list(box)}: each dimension 1..256")
        for k, tab in (("interleave", INTERLEAVE), ("swizzle", SWIZZLE_CODE), ("oob_fill", FILL)):
            v = {"interleave": interleave, "swizzle": swizzle, "oob_fill": oob_fill}[k]
            if v not in tab:
                bad(f"{k} {v!r} (known: {', '.join(tab)})")
        sw = SWIZZLE_CODE[swizzle]
        il = INTERLEAVE[interleave]
        if il == 0:
            if sw and box[0] * es > SWIZZLE[sw]:
                bad(f"box[0] is {box[0] * es} bytes, more than the {swizzle} swizzle span")
            if (box[0] * es) % 16:
                bad(f"box[0] is {box[0] * es} bytes: the inner box dimension must be a multiple of 16 bytes")
        else:
            _check_interleave(bad, interleave, swizzle, r, es, dims, strides, box, ests, int(address))
        if FILL[oob_fill] and code not in _FLOAT:
            bad("oob_fill 'nan' needs a floating-point element type")
        return cls(code, dims, strides, box, ests, INTERLEAVE[interleave], sw, FILL[oob_fill], int(address))

    @classmethod
    def im2col(cls, dtype: str, dims, *, lower, upper, channels_per_pixel: int, pixels_per_column: int,
               strides=None, element_strides=None, swizzle="none", oob_fill="zero", address: int = 0,
               where: str = "tensor map") -> "TensorMap":
        """``cuTensorMapEncodeIm2col``'s fields: ``dims`` in C, W(, H(, D)), N order, ``lower``/``upper`` the
        pixel box corners (``pixelBoxLowerCorner``/``pixelBoxUpperCorner``, W first), ``channels_per_pixel``
        (<= 256) and ``pixels_per_column`` (<= 1024); ``element_strides`` are the traversal strides (C and N
        must be 1 here).  Interleaved im2col maps are not simulated."""
        def bad(msg):
            raise InputError(f"{where}: {msg}")

        r = len(dims)
        if not 3 <= r <= 5:
            bad(f"rank {r}: im2col maps are 3D (NWC), 4D (NHWC) or 5D (NDHWC)")
        lower, upper = tuple(int(v) for v in lower), tuple(int(v) for v in upper)
        if len(lower) != r - 2 or len(upper) != r - 2:
            bad(f"lower/upper corners take {r - 2} values each (W{', H' if r > 3 else ''}{', D' if r > 4 else ''})")
        lim = 1 << (CORNER_BITS[r] - 1)
        for nm, v in (("lower", lower), ("upper", upper)):
            if not all(-lim <= x < lim for x in v):
                bad(f"{nm} corner {list(v)}: a rank-{r} map's corners lie in [{-lim}, {lim - 1}]")
        cpp, ppc = int(channels_per_pixel), int(pixels_per_column)
        if not 1 <= cpp <= 256 or not 1 <= ppc <= 1024:
            bad(f"channels_per_pixel {cpp} (1..256) / pixels_per_column {ppc} (1..1024)")
        ests = tuple(int(e) for e in (element_strides or [1] * r))
        if len(ests) != r or not all(1 <= e <= 8 for e in ests):
            bad(f"element_strides {list(ests)}: {r} values in 1..8")
        if ests[0] != 1 or ests[-1] != 1:
            bad(f"element_strides {list(ests)}: traversal strides in C or N are not simulated")
        # the tiled checks on dtype, strides, swizzle span and the 16-byte inner box, with the pixel box
        t = cls.tiled(dtype, dims, [cpp, min(ppc, 256)] + [1] * (r - 2), strides=strides, element_strides=ests,
                      swizzle=swizzle, oob_fill=oob_fill, address=address, where=where)
        return cls(t.dtype, t.dims, t.strides, (cpp, ppc) + (1,) * (r - 2), ests, 0, t.swizzle, t.oob_fill,
                   t.address, IM2COL, lower, upper)

    def extent_bytes(self) -> int:
        """Bytes from the base address to one past the last element."""
        return self.esize + sum((d - 1) * s for d, s in zip(self.dims[1:], self.strides)) + \
            (self.dims[0] - 1) * self.esize

    def encode(self) -> bytes:
        r = self.rank
        pad = lambda v, n: list(v) + [0] * (n - len(v))
        raw = _LAYOUT.pack(MAGIC, r, self.dtype, self.interleave, self.swizzle, self.oob_fill, self.mode,
                           *pad(self.lower, 3), self.address, *pad(self.dims, 5), *pad(self.strides, 4),
                           *pad(self.box, 5), *pad(self.element_strides, 5), *pad(self.upper, 3))
        return raw + bytes(SIZE - len(raw))

    @classmethod
    def decode(cls, raw: bytes) -> "TensorMap | None":
        """The map held in 128 bytes, or None where they hold no kernlens tensor map."""
        if len(raw) < _LAYOUT.size:
            return None
        v = _LAYOUT.unpack_from(raw)
        if v[0] != MAGIC or not 1 <= v[1] <= 5 or v[2] not in DTYPES:
            return None
        r = v[1]
        mode, lower, address = v[6], v[7:10], v[10]
        dims, strides, box, ests, upper = v[11:16], v[16:20], v[20:25], v[25:30], v[30:33]
        k = r - 2 if mode == IM2COL else 0
        return cls(v[2], tuple(dims[:r]), tuple(strides[:r - 1]), tuple(box[:r]), tuple(ests[:r]), v[3], v[4],
                   v[5], address, mode, tuple(lower[:k]), tuple(upper[:k]))

    # ------------------------------------------------------------------ the box
    def im2col_pixels(self, coord: np.ndarray, offsets) -> np.ndarray:
        """im2col (PTX ISA 5.5.4): the tensor coordinates [P, rank] (C at its start) of the pixels of one
        column, from the instruction's coordinates ``coord`` [rank] (C, W, H, D start, N start) and im2col
        ``offsets`` [rank-2].  The filter base walks the bounding box, W fastest, then H, D, then the next
        image N, each spatial dimension from its lower corner to dims-1+upper corner in steps of the
        traversal stride, starting at ``coord``; each pixel is the base plus the offsets.  Pixels past the
        last image are out of bounds (filled).  The ISA's text defines the corners, Pixels-per-Column,
        the traversal stride and the offsets; the walk order and the wrap are what its im2col examples
        (figures 13-15) show, so they are modelled here, not yet checked against the H200."""
        r = self.rank
        k = r - 2
        base = [int(coord[1 + i]) for i in range(k)]
        n = int(coord[r - 1])
        out = np.zeros((self.box[1], r), np.int64)
        for p in range(self.box[1]):
            out[p, 0] = int(coord[0])
            out[p, 1:1 + k] = [b + int(o) for b, o in zip(base, offsets)]
            out[p, r - 1] = n
            for i in range(k):              # advance W; on leaving the box wrap to its lower corner, carry to H...
                base[i] += self.element_strides[1 + i]
                if base[i] <= self.dims[1 + i] - 1 + self.upper[i]:
                    break
                base[i] = self.lower[i]
            else:
                n += 1
        return out

    def box_elements(self, coords: np.ndarray, offsets=None) -> tuple[np.ndarray, np.ndarray]:
        """For box origins ``coords`` [n, rank] (signed): the global byte offset of every box element
        from the base address [n, E] and whether it is in bounds [n, E]; E in box order (dim 0 fastest).
        An im2col map takes the instruction's im2col ``offsets`` [n, rank-2]: E is pixels x channels."""
        n = coords.shape[0]
        if self.mode == IM2COL:
            cpp, r = self.box[0], self.rank
            offs, inbs = [], []
            for q in range(n):
                px = self.im2col_pixels(coords[q], offsets[q])                  # [P, rank]
                x = np.repeat(px, cpp, axis=0)
                x[:, 0] += np.tile(np.arange(cpp, dtype=np.int64), px.shape[0])
                inb = np.ones(x.shape[0], bool)
                off = np.zeros(x.shape[0], np.int64)
                for i in range(r):
                    inb &= (x[:, i] >= 0) & (x[:, i] < self.dims[i])
                    off += x[:, i] * (self.esize if i == 0 else self.strides[i - 1])
                offs.append(off)
                inbs.append(inb)
            return np.stack(offs), np.stack(inbs)
        counts = self.counts
        grids = np.meshgrid(*[np.arange(c, dtype=np.int64) for c in reversed(counts)], indexing="ij")
        idx = [g.reshape(-1) for g in reversed(grids)]       # idx[i]: box index in dimension i, dim 0 fastest
        off = np.zeros((n, idx[0].size), np.int64)
        inb = np.ones((n, idx[0].size), bool)
        for i in range(self.rank):
            x = coords[:, i:i + 1].astype(np.int64) + idx[i][None, :] * self.traversal[i]
            inb &= (x >= 0) & (x < self.dims[i])
            off += x * (self.esize if i == 0 else self.strides[i - 1])
        return off, inb

    def fill_bytes(self) -> np.ndarray:
        """The bytes of one out-of-bound element."""
        v = NAN_BITS[self.esize] if self.oob_fill and self.dtype in _FLOAT else 0
        return np.frombuffer(int(v).to_bytes(self.esize, "little"), np.uint8)

    def shared_offsets(self, dst: np.ndarray) -> np.ndarray:
        """Shared byte addresses [n, box_bytes] of the box at ``dst`` [n], swizzled."""
        from .tensor.wgmma import swizzle_address

        lin = dst.astype(np.int64)[:, None] + np.arange(self.box_bytes, dtype=np.int64)[None, :]
        return swizzle_address(lin, SWIZZLE[self.swizzle]) if self.swizzle else lin

    def describe(self) -> str:
        sw = {0: "none", 1: "32B", 2: "64B", 3: "128B"}[self.swizzle]
        il = f" interleave {SLICE[self.interleave]}B" if self.interleave else ""
        if self.mode == IM2COL:
            il += f" im2col corners {list(self.lower)}..{list(self.upper)}"
        return (f"{DTYPES[self.dtype][0]} dims {list(self.dims)} box {list(self.box)} swizzle {sw}{il}"
                f"{' NaN fill' if self.oob_fill else ''}")


@dataclass(frozen=True, eq=False)
class TensorMapArg:
    """A ``CUtensorMap`` kernel argument for ``sim.run_kernel``: the map's fields over the host array
    ``array`` (its ``address`` is filled in at launch with the array's device address; an array that is
    also a buffer argument, by identity, is the same buffer, and writes through the map are copied back)."""

    array: np.ndarray
    map: TensorMap
    name: str = "tensor map"

    def __post_init__(self):
        if not isinstance(self.array, np.ndarray):
            raise InputError(f"{self.name}: a tensor map is over a numpy array, got {type(self.array).__name__}")
        if self.map.extent_bytes() > self.array.nbytes:
            raise InputError(f"{self.name}: {self.map.describe()} spans {self.map.extent_bytes()} bytes; its buffer "
                             f"has {self.array.nbytes}")
