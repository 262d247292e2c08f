"""Tensor-core and matrix data-movement semantics of the PTX simulator, as pure numpy functions.

The SIMT engine calls these from its opcode dispatch; nothing here knows about the IR.

Conventions
===========
* **Registers** are numpy ``uint32`` bit patterns shaped ``[W, 32, R]``: W warps executed together,
  32 lanes, the R registers of one fragment operand in the order they are written in braces
  (``{%r1, %r2, %r3, %r4}`` -> ``[..., 0:4]``).  f32 values travel as their bits
  (``x.view(np.uint32)``); packed f16/bf16/8-bit elements sit low element first ("a0 in bits 15:0").
* **Shared memory** is a flat ``uint8`` array, ``[S]`` for one CTA (all W warps in it) or ``[W, S]``;
  addresses are byte offsets into it (the engine subtracts its shared window base).  Stores
  modify the array in place.  Out-of-range addresses raise ``SimulationError``: the engine should
  validate them first with the ``*_addresses`` helpers and report undefined behaviour itself.
* **Logical matrices**: A is M x K, B is K x N, C/D are M x N, whatever the memory layout.
* A **warpgroup** (``wgmma``) is 4 consecutive warps; W must be a multiple of 4.
* **Errors**: unsupported shapes/types or malformed operands raise ``isa.errors.SimulationError``
  without a span; the engine re-raises with the instruction's span.
* **Numerics**: see :mod:`.accumulate` (a fused, truncating model that reproduces the H200
  outputs bit for bit for f16/bf16; integers wrap or saturate exactly).

Functions
=========
``mma_sync(shape, a_type, b_type, c_type, d_type, layout_a, layout_b, A, B, C, satfinite=False) -> D``
    ``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d}, {a}, {b}, {c};`` ->
    ``mma_sync("m16n8k16", "bf16", "bf16", "f32", "f32", "row", "col", A, B, C)``.  Note the PTX
    order of the type modifiers is ``.dtype.atype.btype.ctype``.  ``A``/``B``/``C`` are
    ``[W, 32, R]`` uint32, the result ``D`` is ``[W, 32, Rd]`` uint32.  Forms: see ``MMA_FORMS``
    (m8n8k4/m16n8k8/m16n8k16 f16 -> f32|f16, bf16 -> f32, tf32 -> f32, the four f64 shapes,
    s8/u8 and s4/u4 -> s32 with ``satfinite``, b1 with ``bitop='and'|'xor'``, m16n8k16/k32
    e4m3/e5m2 -> f32|f16).  f64 fragments are ``[W, 32, R]`` uint64.
``mma_fragment_map(shape, operand, etype, layout=None) -> FragmentMap``
    ``.rows``/``.cols`` ``[32, E]`` int arrays: the (row, col) of element i of lane t;
    ``.nregs``, ``.bits``; ``fragment_to_matrix(regs, fmap)`` / ``matrix_to_fragment(mat, fmap)``
    convert between ``[W, 32, R]`` registers and ``[W, rows, cols]`` bit-pattern matrices.
``ldmatrix(num, trans, smem, addresses) -> regs [W, 32, num]``
    ``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1,%r2,%r3,%r4}, [%r5];`` ->
    ``ldmatrix(4, True, smem, addr)`` with ``addr`` ``[W, 32]`` the per-lane byte addresses (the
    ``[%r5]`` operand of every lane; lanes 8j..8j+7 give the rows of matrix j).
``stmatrix(num, trans, smem, addresses, regs) -> None``  (writes ``smem`` in place)
``movmatrix(regs [W, 32]) -> regs [W, 32]``  (``movmatrix.sync.aligned.m8n8.trans.b16``)
``ldmatrix_addresses(num, addresses) -> (addr [W, 32], used [W, 32] bool)``
    The 16-byte rows each lane makes the instruction read/write (for bank-conflict events,
    bounds, alignment and initialisation checks); each row is ``ROW_BYTES = 16`` bytes.
``wmma_load(operand, layout, etype, mem, base, stride, shape="m16n16k16") -> regs [W, 32, R]``
    ``wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {8 regs}, [%rd22], %r50;`` ->
    ``wmma_load("a", "row", "f16", mem, base, 50)``: ``mem`` a flat uint8 array (global or shared),
    ``base`` ``[W]`` byte addresses (the warp-uniform address operand), ``stride`` in elements (int
    or ``[W]``; the leading dimension when the PTX omits it).  Register layout: the H200 probe
    (:mod:`.wmma`).  ``wmma_addresses(operand, layout, etype, base, stride)`` gives the per-lane,
    per-element byte addresses ``[W, 32, E]`` (for an engine that gathers from its own memory, then
    ``pack(elements, bits)``; for events and bounds checks).
``wmma_store(layout, etype, mem, base, stride, regs) -> None`` (``wmma.store.d``; writes in place)
``wmma_mma(a_type, b_type, c_type, d_type, A, B, C, satfinite=False) -> D``
    ``wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32`` (a/b f16 implied) ->
    ``wmma_mma("f16", "f16", "f32", "f32", A, B, C)``; ``.bf16``/``.s8``/``.u8`` forms name a/b.
``wgmma_mma_async(shape, d_type, a_type, b_type, D, a, desc_b, smem, scale_d, imm_scale_a=1,
imm_scale_b=1, trans_a=0, trans_b=0, satfinite=False) -> D``
    ``wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {32 regs}, %rd17, %rd18, %p13, 1, 1, 0, 1;``
    -> ``wgmma_mma_async("m64n64k16", "f32", "f16", "f16", D, desc_a, desc_b, smem, p13, 1, 1, 0, 1)``.
    ``D`` ``[W, 32, N/2]`` (W a multiple of 4; warp w of a group owns rows 16*(w%4)..), ``a`` the A
    descriptors ``[W]`` (uint64) or A registers ``[W, 32, 4]``, ``desc_b`` ``[W]``.  The engine
    applies the result at the covering ``wgmma.wait_group`` (or at once: the corpus waits before
    reading D).  Descriptor decoding and canonical/swizzled layouts: :mod:`.wgmma`
    (``Descriptor.decode``, ``matrix_addresses``, ``swizzle_address``, ``wgmma_d_map``).
``wgmma_smem_addresses(shape, a_type, b_type, a, desc_b, trans_a=0, trans_b=0) -> (a_addr|None, b_addr)``
    Byte addresses of every element the instruction reads (bounds/initialisation checks).
"""

from __future__ import annotations

from .accumulate import ALIGN_BITS, float_accumulate, int_accumulate
from .elements import ELEMENT_TYPES, ElementType, decode, element_type, encode
from .fragments import (FragmentMap, fragment_to_matrix, matrix_to_fragment, mma_fragment_map, pack,
                        parse_shape, unpack)
from .ldmatrix import ROW_BYTES, ldmatrix, ldmatrix_addresses, movmatrix, stmatrix
from .mma import MMA_FORMS, mma_sync
from .wgmma import (Descriptor, decode_descriptors, matrix_addresses, swizzle_address, wgmma_a_map,
                    wgmma_d_map, wgmma_mma_async, wgmma_smem_addresses)
from .wmma import wmma_addresses, wmma_fragment_map, wmma_load, wmma_mma, wmma_store

__all__ = [
    "ALIGN_BITS", "ELEMENT_TYPES", "ElementType", "FragmentMap", "MMA_FORMS", "ROW_BYTES",
    "decode", "element_type", "encode", "float_accumulate", "fragment_to_matrix", "int_accumulate",
    "ldmatrix", "ldmatrix_addresses", "matrix_to_fragment", "movmatrix", "mma_fragment_map", "mma_sync", "pack",
    "parse_shape", "stmatrix", "unpack",
    "Descriptor", "decode_descriptors", "matrix_addresses", "swizzle_address", "wgmma_a_map", "wgmma_d_map",
    "wgmma_mma_async", "wgmma_smem_addresses",
    "wmma_addresses", "wmma_fragment_map", "wmma_load", "wmma_mma", "wmma_store",
]
