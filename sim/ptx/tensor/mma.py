"""``mma.sync``: one warp-level matrix multiply-accumulate on register fragments.

::

    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};
    mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r9,...}, {%r1,...}, {%r5,%r6}, {%r9,...};

maps to ``mma_sync("m16n8k16", "bf16", "bf16", "f32", "f32", "row", "col", A, B, C)`` with
``A`` [W, 32, 4], ``B`` [W, 32, 2], ``C`` [W, 32, 4] uint32 bit patterns; the result ``D`` is
[W, 32, 4] uint32.
"""

from __future__ import annotations

import numpy as np

from isa.errors import SimulationError

from .accumulate import MMA_FP8_ALIGN_BITS, f64_accumulate, float_accumulate, int_accumulate
from .elements import decode, element_type, encode
from .fragments import fragment_to_matrix, matrix_to_fragment, mma_fragment_map, parse_shape

#: (shape, a/b element types, accumulator types) combinations that ``mma_sync`` runs (ISA 9.7.14.5).
MMA_FORMS: frozenset[tuple[str, str, str]] = frozenset(
    [(s, t, acc) for s in ("m8n8k4", "m16n8k16", "m16n8k8") for t in ("f16",) for acc in ("f32", "f16")]
    + [(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k8")]
    + [(s, "tf32", "f32") for s in ("m16n8k8", "m16n8k4")]
    + [(s, "f64", "f64") for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")]
    + [(s, t, "s32") for s in ("m8n8k16", "m16n8k16", "m16n8k32") for t in ("s8", "u8")]
    + [(s, t, "s32") for s in ("m8n8k32", "m16n8k32", "m16n8k64") for t in ("s4", "u4")]
    + [(s, "b1", "s32") for s in ("m8n8k128", "m16n8k128", "m16n8k256")]
    + [(s, t, acc) for s in ("m16n8k16", "m16n8k32") for t in ("e4m3", "e5m2") for acc in ("f32", "f16")]
)

#: type families whose members may be mixed as A and B (s8 x u8, e4m3 x e5m2)
_MIXABLE = ({"s8", "u8"}, {"s4", "u4"}, {"e4m3", "e5m2"})

#: the .b1 operations (``.and.popc`` / ``.xor.popc``): d = c + popc(a op b) over K
BIT_OPS = ("and", "xor")


def mma_sync(shape: str, a_type: str, b_type: str, c_type: str, d_type: str,
             layout_a: str, layout_b: str, A: np.ndarray, B: np.ndarray, C: np.ndarray,
             satfinite: bool = False, bitop: str | None = None) -> np.ndarray:
    """D = A x B + C for every warp; fragments as in :mod:`.fragments`, numerics as in :mod:`.accumulate`.

    ``a_type``/``b_type`` may differ only in signedness (s8 x u8, s4 x u4) or fp8 flavour (e4m3 x
    e5m2).  Only ``.row.col`` exists for these shapes, except m8n8k4 .f16 (any of the four).
    ``bitop`` (``'and'``/``'xor'``) is required for .b1.
    """
    quad = shape == "m8n8k4" and a_type == "f16"
    if (layout_a, layout_b) != ("row", "col") and not quad:
        raise SimulationError(f"mma.sync .{shape} requires .row.col, got .{layout_a}.{layout_b}")
    ok = all((shape, t, d_type) in MMA_FORMS and (shape, t, c_type) in MMA_FORMS for t in (a_type, b_type))
    same = a_type == b_type or any({a_type, b_type} <= f for f in _MIXABLE)
    if not ok or not same:
        raise SimulationError(f"mma.sync.{shape}.{d_type}.{a_type}.{b_type}.{c_type} is not supported")
    if satfinite and d_type != "s32":
        raise SimulationError(".satfinite on mma.sync is defined for s32 accumulators only")
    if (a_type == "b1") != (bitop in BIT_OPS):
        raise SimulationError("mma.sync with .b1 needs .and.popc or .xor.popc (and only .b1 takes them)")
    lay = (layout_a, layout_b, None, None)
    maps = tuple(mma_fragment_map(shape, op, t, lo if quad else None)
                 for op, t, lo in zip("abcd", (a_type, b_type, c_type, d_type), lay))
    fp8 = a_type in ("e4m3", "e5m2")
    return fragment_mma(A, B, C, maps, (a_type, b_type, c_type, d_type), satfinite,
                        MMA_FP8_ALIGN_BITS if fp8 else None, bitop)


#: ``mma.sp`` forms (shape, a/b type, accumulator type): sparse A (ISA 9.7.14.6)
MMA_SP_FORMS: frozenset[tuple[str, str, str]] = frozenset(
    [(s, t, acc) for s in ("m16n8k16", "m16n8k32") for t in ("f16",) for acc in ("f32", "f16")]
    + [(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k32")]
    + [(s, "tf32", "f32") for s in ("m16n8k8", "m16n8k16")]
    + [(s, t, "s32") for s in ("m16n8k32", "m16n8k64") for t in ("s8", "u8")]
    + [(s, t, "s32") for s in ("m16n8k64", "m16n8k128") for t in ("s4", "u4")]
    + [("m16n8k64", t, acc) for t in ("e4m3", "e5m2") for acc in ("f32", "f16")]
)

#: the unit that the sparsity metadata indexes, in bits, per A element type (ISA 9.7.14.6.1,
#: "Sparse matrix storage"): every family is 2:4 sparse in these units, with two 2-bit indices
#: (0-3, the first one low) per chunk of four units.  f16/bf16: a unit is an element (2:4); tf32:
#: half an element (1:2 in elements, ``0b0100`` keeps element 0 and ``0b1110`` element 1, the ISA's
#: only meaningful values); s8/u8/e4m3/e5m2: an element (2:4); s4/u4: a pair of elements (4:8 in
#: pairs).  The unit width also fixes where the metadata sits (:func:`sparse_expand`).
SPARSE_UNIT_BITS: dict[str, int] = {"f16": 16, "bf16": 16, "tf32": 16,
                                    "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s4": 8, "u4": 8}


def sparse_threads(k: int, a_type: str) -> int:
    """How many threads of each group of four supply metadata: the group's rows g and g + 8 carry
    ``K * bits / unit`` units, a 2-bit index per stored unit, 32 bits per thread (ISA 9.7.14.6.1:
    one thread, selector 0-3, for m16n8k16 .f16/.bf16 and m16n8k8 .tf32; a pair, selector 0-1, for
    m16n8k32 .f16/.bf16/.s8/.u8, m16n8k16 .tf32 and m16n8k64 .s4/.u4; all four, selector 0, for
    m16n8k64 .s8/.u8/.e4m3/.e5m2 and m16n8k128 .s4/.u4)."""
    units = k * element_type(a_type).bits // SPARSE_UNIT_BITS[a_type]
    return 2 * (units // 2) * 2 // 32


def _to_units(x: np.ndarray, eb: int, ub: int) -> np.ndarray:
    """Element bit patterns [..., E] -> units of ``ub`` bits [..., E*eb/ub], low first."""
    x = x.astype(np.uint64)
    if eb >= ub:
        r = eb // ub
        parts = (x[..., None] >> (ub * np.arange(r, dtype=np.uint64))) & np.uint64((1 << ub) - 1)
        return parts.reshape(x.shape[:-1] + (x.shape[-1] * r,))
    r = ub // eb
    x = x.reshape(x.shape[:-1] + (x.shape[-1] // r, r))
    return np.bitwise_or.reduce(x << (eb * np.arange(r, dtype=np.uint64)), axis=-1)


def _from_units(u: np.ndarray, eb: int, ub: int) -> np.ndarray:
    """Inverse of :func:`_to_units`."""
    if eb >= ub:
        r = eb // ub
        u = u.reshape(u.shape[:-1] + (u.shape[-1] // r, r))
        return np.bitwise_or.reduce(u << (ub * np.arange(r, dtype=np.uint64)), axis=-1)
    r = ub // eb
    parts = (u[..., None] >> (eb * np.arange(r, dtype=np.uint64))) & np.uint64((1 << eb) - 1)
    return parts.reshape(u.shape[:-1] + (u.shape[-1] * r,))


def sparse_expand(a_bits: np.ndarray, meta: np.ndarray, selector: int, k: int, a_type: str) -> np.ndarray:
    """The packed M x K/2 A of ``mma.sp`` (bit patterns [W, 16, K/2]) -> the M x K matrix it stands
    for, zeros elsewhere: one description for every type family, in the units of
    :data:`SPARSE_UNIT_BITS` (a row of A is split into units; stored unit s of a row goes to unit
    ``4*(s // 2) + index_s`` of the dense row).

    ``meta`` is the metadata register of every lane, [W, 32] uint32.  The 2-bit index s of row
    g + 8h (h = 0, 1) of group g comes from lane ``4g + n*selector + i`` (n = :func:`sparse_threads`):
    16-bit units (f16, bf16, tf32): a word holds 8 indices of both rows, i = s // 8 at bit
    ``16h + 2*(s % 8)``; 8-bit units (s8, u8, fp8, s4, u4): a word holds 16 indices of one row,
    i = 2*(s // 16) + h at bit ``2*(s % 16)``.  The ISA shows this only in figures; it is measured on
    the H200 with a different metadata word in every lane of a group (``examples/ptx/isa/mma_spl_*``,
    bit for bit for f16, bf16, s8/u8, s4/u4, e4m3/e5m2).  Those words hold tf32 index pairs the
    ISA leaves undefined (only 0b0100 and 0b1110 mean something); there the units rule matches the
    H200 on some rows only (docs/ptx-coverage.md, "Known differences").
    """
    W, M, KH = a_bits.shape
    eb, ub = element_type(a_type).bits, SPARSE_UNIT_BITS[a_type]
    n = sparse_threads(k, a_type)
    units = _to_units(np.asarray(a_bits), eb, ub)                         # [W, M, U/2]
    s = np.arange(units.shape[-1])
    rows = np.arange(M)
    h = (rows // 8)[:, None]
    if ub == 16:
        i, bit = s[None, :] // 8 + 0 * h, 16 * h + 2 * (s % 8)[None, :]
    else:
        i, bit = 2 * (s // 16)[None, :] + h, 2 * (s % 16)[None, :] + 0 * h
    lanes = 4 * (rows % 8)[:, None] + n * selector + i                   # [M, U/2]
    m = np.asarray(meta, np.uint32)[:, lanes].astype(np.int64)          # [W, M, U/2]
    cols = 4 * (s // 2)[None, None, :] + ((m >> bit[None]) & 3)
    dense = np.zeros((W, M, 2 * units.shape[-1]), np.uint64)
    w_, r_ = np.meshgrid(np.arange(W), rows, indexing="ij")
    dense[w_[:, :, None], r_[:, :, None], cols] = units
    return _from_units(dense, eb, ub).astype(a_bits.dtype)


def mma_sp(shape: str, a_type: str, b_type: str, c_type: str, d_type: str, A: np.ndarray, B: np.ndarray,
           C: np.ndarray, meta: np.ndarray, selector: int, satfinite: bool = False) -> np.ndarray:
    """``mma.sp{::ordered_metadata}.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 d, a, b, c, e, sel``:
    A holds the stored half of a sparse M x K matrix in the layout of the dense M x K/2 A fragment
    (ISA 9.7.14.6.2: .m16n8k16 .f16 A as .m16n8k8, .m16n8k64 .s8 A as .m16n8k32, .m16n8k8 .tf32 A
    as .m16n8k4, .m16n8k128 .s4 A as .m16n8k64); B, C, D as for the dense shape; ``meta`` [W, 32]
    the metadata registers (:func:`sparse_expand`); the numerics are those of the dense form."""
    m, n, k = parse_shape(shape)
    ok = all((shape, t, acc) in MMA_SP_FORMS for t in (a_type, b_type) for acc in (c_type, d_type))
    if not ok or not (a_type == b_type or any({a_type, b_type} <= f for f in _MIXABLE)):
        raise SimulationError(f"mma.sp.{shape}.{d_type}.{a_type}.{b_type}.{c_type} is not supported")
    if satfinite and d_type != "s32":
        raise SimulationError(".satfinite on mma.sp is defined for s32 accumulators only")
    nsel = 4 // sparse_threads(k, a_type)
    if not 0 <= selector < nsel:
        raise SimulationError(f"mma.sp .{shape} .{a_type}: the sparsity selector must be "
                              f"{'0' if nsel == 1 else f'0 to {nsel - 1}'}, got {selector}")
    amap = mma_fragment_map(f"m{m}n{n}k{k // 2}", "a", a_type)
    maps = (amap,) + tuple(mma_fragment_map(shape, op, t) for op, t in zip("bcd", (b_type, c_type, d_type)))
    fp8 = a_type in ("e4m3", "e5m2")
    return fragment_mma(A, B, C, maps, (a_type, b_type, c_type, d_type), satfinite,
                        MMA_FP8_ALIGN_BITS if fp8 else None,
                        a_expand=lambda bits: sparse_expand(bits, meta, selector, k, a_type))


def fragment_mma(A: np.ndarray, B: np.ndarray, C: np.ndarray, maps, types, satfinite: bool = False,
                 align_bits: int | None = None, bitop: str | None = None, a_expand=None) -> np.ndarray:
    """D = A x B + C on register fragments laid out by ``maps`` (a, b, c, d :class:`FragmentMap`s)
    with element ``types`` (a, b, c, d): the common core of ``mma.sync`` and ``wmma.mma``.

    Integers: exact (``bitop`` 'xor' sums a ^ b = a + b - 2ab of the 0/1 elements, 'and' their
    products); f64: IEEE fma chain (:func:`.accumulate.f64_accumulate`); other floats:
    :func:`.accumulate.float_accumulate`.  ``a_expand`` maps A's bit-pattern matrix to the one
    multiplied (``mma.sp``: the packed non-zeros to the sparse M x K matrix)."""
    amap, bmap, cmap, dmap = maps
    a_type, b_type, c_type, d_type = types
    a_bits = fragment_to_matrix(A, amap)
    a = decode(a_bits if a_expand is None else a_expand(a_bits), a_type)
    b = decode(fragment_to_matrix(B, bmap), b_type)
    c = decode(fragment_to_matrix(C, cmap), c_type)
    if element_type(d_type).integer:
        if bitop == "xor":                          # popc(a ^ b) = popc(a) + popc(b) - 2 popc(a & b)
            a64, b64 = a.astype(np.int64), b.astype(np.int64)
            c = (c.astype(np.int64) + a64.sum(axis=2)[:, :, None] + b64.sum(axis=1)[:, None, :]
                 - 2 * np.einsum("wmk,wkn->wmn", a64, b64))
            d = int_accumulate(a64[:, :, :0], b64[:, :0, :], c, satfinite)
        else:
            d = int_accumulate(a, b, c, satfinite)
    elif d_type == "f64":
        d = f64_accumulate(a, b, c)
    else:
        d = float_accumulate(a, b, c, a_type, b_type, c_type, align_bits)
    return matrix_to_fragment(encode(d, d_type), dmap)
