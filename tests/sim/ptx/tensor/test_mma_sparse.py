"""``mma.sp`` in every family of the ISA (9.7.14.6): f16/bf16, tf32, s8/u8, s4/u4, e4m3/e5m2.

The expected values are built the other way round from the simulator: a dense 2:4 (tf32 1:2,
s4/u4 4:8 in pairs) sparse A is compressed here by the ISA's rules ("Sparse matrix storage": the
kept elements in column order, one 4-bit metadata field per chunk, ``0b0100``/``0b1110`` for tf32
elements 0/1, two 2-bit pair indices for s4/u4) and its fields dealt to the lanes the sparsity
selector names, as the H200 programs ``examples/ptx/isa/mma_spl_*`` show them (16-bit types: one
word holds 4 fields of row g low and of row g + 8 high; 8-bit and 4-bit types: one word holds 8
fields of one row).  D must equal the dense product A x B + C, exactly (small integers).
"""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import SimulationError
from sim.ptx.tensor import decode, encode, fragment_to_matrix, matrix_to_fragment, mma_fragment_map
from sim.ptx.tensor.fragments import parse_shape
from sim.ptx.tensor.mma import MMA_SP_FORMS, mma_sp

RNG = np.random.default_rng(7)

#: (chunk width in elements, kept per chunk, 16-bit metadata family) per A type, from the ISA text
FAMILY = {"f16": (4, 2, True), "bf16": (4, 2, True), "tf32": (2, 1, True), "s8": (4, 2, False),
          "u8": (4, 2, False), "e4m3": (4, 2, False), "e5m2": (4, 2, False), "s4": (8, 4, False),
          "u4": (8, 4, False)}


def _field(kept: list[int], atype: str) -> int:
    """The ISA's 4-bit metadata field of one chunk from the positions of its non-zeros."""
    if atype == "tf32":
        return 0b0100 if kept == [0] else 0b1110
    if atype in ("s4", "u4"):                      # pairs: the two kept 2-wide sub-chunks
        kept = sorted({p // 2 for p in kept})
    lo, hi = kept
    return lo | hi << 2


def compress(dense: np.ndarray, atype: str, selector: int, threads: int):
    """Dense sparse A [16, K] -> (packed [16, K/2], metadata words [32]) by the ISA's rules."""
    cw, keep, wide = FAMILY[atype]
    m, k = dense.shape
    packed = np.zeros((m, k // 2), dense.dtype)
    fields = np.zeros((m, k // cw), np.int64)
    for r in range(m):
        kept_cols = []
        for c in range(k // cw):
            pos = [p for p in range(cw) if dense[r, c * cw + p] != 0]
            fields[r, c] = _field(pos, atype)
            kept_cols += [c * cw + p for p in pos]
        packed[r] = dense[r, kept_cols]
    meta = RNG.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32)  # lanes that supply nothing
    per = 4 if wide else 8                                                    # fields of a row per word
    for g in range(8):
        for i in range(threads):
            if wide:
                rows, first = ((g, 0), (g + 8, 16)), 4 * i
            else:
                rows, first = ((g + 8 * (i % 2), 0),), per * (i // 2)
            word = 0
            for r, base in rows:
                for f in range(per):
                    word |= int(fields[r, first + f]) << (base + 4 * f)
            meta[4 * g + threads * selector + i] = word
    return packed, meta


def sparse_dense_a(k: int, atype: str) -> np.ndarray:
    cw, keep, _ = FAMILY[atype]
    lo, hi = {"u8": (1, 6), "u4": (1, 6), "s4": (-4, 4), "e4m3": (-6, 7), "e5m2": (-6, 7)}.get(atype, (-8, 9))
    dense = np.zeros((16, k), np.int64)
    for r in range(16):
        for c in range(k // cw):
            if atype in ("s4", "u4"):
                pairs = sorted(RNG.choice(4, 2, replace=False))
                pos = [2 * q + e for q in pairs for e in (0, 1)]
            else:
                pos = sorted(RNG.choice(cw, keep, replace=False))
            vals = RNG.integers(lo, hi, len(pos))
            vals[vals == 0] = 1                    # the kept elements are the non-zeros
            dense[r, [c * cw + p for p in pos]] = vals
    return dense


SP = sorted(MMA_SP_FORMS)


def test_every_isa_sparse_form_is_simulated():
    # ISA 9.7.14.6 (sm_80+; fp8 sm_89+): 20 forms, none left
    assert len(SP) == 20


@pytest.mark.parametrize("shape,atype,acc", SP)
def test_sparse_form_equals_the_dense_product(shape, atype, acc):
    m, n, k = parse_shape(shape)
    cw = FAMILY[atype][0]
    threads = 2 * (k // cw) * 4 // 32
    for selector in range(4 // threads):
        dense = sparse_dense_a(k, atype)
        packed, meta = compress(dense, atype, selector, threads)
        lo, hi = (0, 6) if atype in ("u8", "u4") else (-4, 5)
        b = RNG.integers(lo, hi, (k, n))
        c = RNG.integers(-20, 21, (m, n))
        amap = mma_fragment_map(f"m{m}n{n}k{k // 2}", "a", atype)
        A = matrix_to_fragment(encode(packed[None], atype), amap)
        B = matrix_to_fragment(encode(b[None], atype), mma_fragment_map(shape, "b", atype))
        C = matrix_to_fragment(encode(c[None], acc), mma_fragment_map(shape, "c", acc))
        D = mma_sp(shape, atype, atype, acc, acc, A, B, C, meta[None], selector)
        got = decode(fragment_to_matrix(D, mma_fragment_map(shape, "d", acc)), acc)[0]
        assert np.array_equal(got.astype(np.float64), (dense @ b + c).astype(np.float64)), selector


def test_sparsity_selector_range_follows_the_threads_that_hold_metadata():
    z = np.zeros((1, 32, 4), np.uint32)
    meta = np.zeros((1, 32), np.uint32)
    # all four threads hold metadata for m16n8k64 .s8 and m16n8k128 .u4: only selector 0
    with pytest.raises(SimulationError, match="must be 0, got 1"):
        mma_sp("m16n8k64", "s8", "s8", "s32", "s32", z, z, z, meta, 1)
    with pytest.raises(SimulationError, match="must be 0, got 2"):
        mma_sp("m16n8k128", "u4", "u4", "s32", "s32", z, z, z, meta, 2)
    # a pair for m16n8k16 .tf32: 0 or 1; one thread for m16n8k8 .tf32: 0 to 3
    with pytest.raises(SimulationError, match="0 to 1, got 2"):
        mma_sp("m16n8k16", "tf32", "tf32", "f32", "f32", z, z, z, meta, 2)
    mma_sp("m16n8k8", "tf32", "tf32", "f32", "f32", z[..., :2], z[..., :2], z, meta, 3)
