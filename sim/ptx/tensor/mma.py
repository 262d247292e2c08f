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


#: ``mma.sp`` forms (shape, a/b type, accumulator type): 2:4 sparse A (ISA 9.7.14.6)
MMA_SP_FORMS: frozenset[tuple[str, str, str]] = frozenset(
    [(s, t, acc) for s in ("m16n8k16", "m16n8k32") for t in ("f16",) for acc in ("f32", "f16")]
    + [(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k32")]
    + [("m16n8k32", t, "s32") for t in ("s8", "u8")]
)


def sparse_expand(a_bits: np.ndarray, meta: np.ndarray, selector: int, k: int) -> np.ndarray:
    """The packed M x K/2 A of ``mma.sp`` (bit patterns [W, 16, K/2]) -> the M x K matrix it stands
    for, zeros elsewhere (ISA 9.7.14.6.1, 2:4 sparsity: every chunk of 4 consecutive elements of a
    row holds 2 non-zeros, and their positions 0-3 are 2-bit indices in the metadata).

    ``meta`` is the metadata register of every lane, [W, 32] uint32.  Rows g and g + 8 take theirs
    from lanes ``4g + 2*selector`` and ``4g + 2*selector + 1`` of the group (the thread pair the
    sparsity selector names); non-zero ``j`` of a row sits in chunk ``j // 2`` at the position in
    bits ``2j+1:2j`` (chunk c in bits ``4c+3:4c``, the first non-zero in the low half).  The H200
    programs (one metadata word in every lane) check the bit order, not which lane supplies a row.
    """
    W, M, KH = a_bits.shape
    rows = np.arange(M)
    lanes = 4 * (rows % 8) + 2 * selector + rows // 8                  # [M]
    m = np.asarray(meta, np.uint32)[:, lanes].astype(np.int64)         # [W, M]
    j = np.arange(KH)
    pos = (m[:, :, None] >> (2 * j)[None, None, :]) & 3                # [W, M, K/2]
    cols = 4 * (j // 2)[None, None, :] + pos
    dense = np.zeros((W, M, k), a_bits.dtype)
    w_, r_ = np.meshgrid(np.arange(W), rows, indexing="ij")
    dense[w_[:, :, None], r_[:, :, None], cols] = a_bits
    return dense


def mma_sp(shape: str, a_type: str, b_type: str, c_type: str, d_type: str, A: np.ndarray, B: np.ndarray,
           C: np.ndarray, meta: np.ndarray, selector: int, satfinite: bool = False) -> np.ndarray:
    """``mma.sp{::ordered_metadata}.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 d, a, b, c, e, sel``:
    A holds the non-zeros of a 2:4-sparse M x K matrix in the layout of the dense M x K/2 A
    fragment (ISA 9.7.14.6.2: .m16n8k16 .f16 A as .m16n8k8, .m16n8k32 .s8 A as .m16n8k16);
    B, C, D as for the dense shape; ``meta`` [W, 32] the metadata registers."""
    m, n, k = parse_shape(shape)
    ok = all((shape, t, acc) in MMA_SP_FORMS for t in (a_type, b_type) for acc in (c_type, d_type))
    if not ok or not (a_type == b_type or {a_type, b_type} <= {"s8", "u8"}):
        raise SimulationError(f"mma.sp.{shape}.{d_type}.{a_type}.{b_type}.{c_type} is not supported")
    if selector not in (0, 1):
        raise SimulationError(f"mma.sp .{shape} .{a_type}: the sparsity selector must be 0 or 1, got {selector}")
    amap = mma_fragment_map(f"m{m}n{n}k{k // 2}", "a", a_type)
    maps = (amap,) + tuple(mma_fragment_map(shape, op, t) for op, t in zip("bcd", (b_type, c_type, d_type)))
    return fragment_mma(A, B, C, maps, (a_type, b_type, c_type, d_type), satfinite,
                        a_expand=lambda bits: sparse_expand(bits, meta, selector, k))


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
