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

from .accumulate import MMA_FP8_ALIGN_BITS, float_accumulate, int_accumulate
from .elements import decode, element_type, encode
from .fragments import fragment_to_matrix, matrix_to_fragment, mma_fragment_map

#: (shape, a/b element types, accumulator types) combinations that ``mma_sync`` runs.
MMA_FORMS: frozenset[tuple[str, str, str]] = frozenset(
    [(s, t, acc) for s in ("m16n8k16", "m16n8k8") for t in ("f16",) for acc in ("f32", "f16")]
    + [(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k8")]
    + [(s, "tf32", "f32") for s in ("m16n8k8", "m16n8k4")]
    + [(s, t, "s32") for s in ("m8n8k16", "m16n8k16", "m16n8k32") for t in ("s8", "u8")]
    + [("m16n8k32", t, "f32") for t in ("e4m3", "e5m2")]
    + [("m16n8k32", t, "f16") for t in ("e4m3", "e5m2")]
)


def mma_sync(shape: str, a_type: str, b_type: str, c_type: str, d_type: str,
             layout_a: str, layout_b: str, A: np.ndarray, B: np.ndarray, C: np.ndarray,
             satfinite: bool = False) -> np.ndarray:
    """D = A x B + C for every warp; fragments as in :mod:`.fragments`, numerics as in :mod:`.accumulate`.

    ``a_type``/``b_type`` may differ only in signedness (s8 x u8) or fp8 flavour (e4m3 x e5m2).
    Only ``.row.col`` exists for these shapes.
    """
    if (layout_a, layout_b) != ("row", "col"):
        raise SimulationError(f"mma.sync .{shape} requires .row.col, got .{layout_a}.{layout_b}")
    ok = all((shape, t, d_type) in MMA_FORMS and (shape, t, c_type) in MMA_FORMS for t in (a_type, b_type))
    families = ({"s8", "u8"}, {"e4m3", "e5m2"})
    same = a_type == b_type or any({a_type, b_type} <= f for f in families)
    if not ok or not same:
        raise SimulationError(f"mma.sync.{shape}.{d_type}.{a_type}.{b_type}.{c_type} is not supported")
    if satfinite and d_type != "s32":
        raise SimulationError(".satfinite on mma.sync is defined for s32 accumulators only")
    maps = tuple(mma_fragment_map(shape, op, t) for op, t in zip("abcd", (a_type, b_type, c_type, d_type)))
    fp8 = a_type in ("e4m3", "e5m2")
    return fragment_mma(A, B, C, maps, (a_type, b_type, c_type, d_type), satfinite,
                        MMA_FP8_ALIGN_BITS if fp8 else None)


def fragment_mma(A: np.ndarray, B: np.ndarray, C: np.ndarray, maps, types, satfinite: bool = False,
                 align_bits: int | None = None) -> np.ndarray:
    """D = A x B + C on register fragments laid out by ``maps`` (a, b, c, d :class:`FragmentMap`s)
    with element ``types`` (a, b, c, d): the common core of ``mma.sync`` and ``wmma.mma``."""
    amap, bmap, cmap, dmap = maps
    a_type, b_type, c_type, d_type = types
    a = decode(fragment_to_matrix(A, amap), a_type)
    b = decode(fragment_to_matrix(B, bmap), b_type)
    c = decode(fragment_to_matrix(C, cmap), c_type)
    if element_type(d_type).integer:
        d = int_accumulate(a, b, c, satfinite)
    else:
        d = float_accumulate(a, b, c, a_type, b_type, c_type, align_bits)
    return matrix_to_fragment(encode(d, d_type), dmap)
