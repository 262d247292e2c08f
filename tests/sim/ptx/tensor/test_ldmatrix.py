"""ldmatrix / stmatrix: the H200-verified lane mapping, .x1/.x2 address use, and mma fragment agreement."""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import SimulationError
from sim.ptx.tensor import ldmatrix, ldmatrix_addresses, matrix_to_fragment, mma_fragment_map, stmatrix

RNG = np.random.default_rng(3)


def _smem_u16(n):
    vals = RNG.integers(0, 1 << 16, size=n, dtype=np.uint64).astype(np.uint16)
    return vals, vals.view(np.uint8).copy()


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_x4_matches_facts_formula(trans):
    vals, smem = _smem_u16(4096)
    # each lane points at a distinct, scattered 16-byte row
    rows = RNG.permutation(4096 // 8)[:64].reshape(2, 32)
    addr = rows * 16
    regs = ldmatrix(4, trans, smem, addr)
    assert regs.shape == (2, 32, 4)
    for w in range(2):
        for t in range(32):
            for j in range(4):
                def M(r, c):
                    return int(vals[rows[w, 8 * j + r] * 8 + c])
                if trans:
                    lo, hi = M(2 * (t % 4), t // 4), M(2 * (t % 4) + 1, t // 4)
                else:
                    lo, hi = M(t // 4, 2 * (t % 4)), M(t // 4, 2 * (t % 4) + 1)
                assert regs[w, t, j] == lo | (hi << 16)


@pytest.mark.parametrize("num", [1, 2])
def test_ldmatrix_x1_x2_ignore_upper_lanes(num):
    _, smem = _smem_u16(2048)
    addr = (RNG.permutation(256)[:32] * 16)[None, :]
    other = addr.copy()
    other[0, 8 * num:] = 0
    np.testing.assert_array_equal(ldmatrix(num, False, smem, addr), ldmatrix(num, False, smem, other))
    a, used = ldmatrix_addresses(num, addr)
    assert used[0].tolist() == [lane < 8 * num for lane in range(32)]
    np.testing.assert_array_equal(a, addr)


@pytest.mark.parametrize("num,trans", [(1, False), (2, True), (4, False), (4, True)])
def test_stmatrix_inverts_ldmatrix(num, trans):
    smem = np.zeros(4096, np.uint8)
    addr = (RNG.permutation(256)[:64] * 16).reshape(2, 32)
    regs = RNG.integers(0, 1 << 32, size=(2, 32, num), dtype=np.uint64).astype(np.uint32)
    stmatrix(num, trans, smem, addr, regs)
    np.testing.assert_array_equal(ldmatrix(num, trans, smem, addr), regs)
    written = np.zeros(4096, bool)
    for a in addr[:, : 8 * num].ravel():
        written[a:a + 16] = True
    assert not smem[~written].any()


def test_ldmatrix_x4_row_major_tile_gives_mma_a_fragment():
    """The usual pattern: lanes 0-15 -> rows 0-15 at col 0, lanes 16-31 -> rows 0-15 at col 8."""
    tile = RNG.integers(0, 1 << 16, size=(16, 24), dtype=np.uint64).astype(np.uint16)   # padded row of 24
    smem = tile.view(np.uint8).reshape(-1).copy()
    lane = np.arange(32)
    addr = ((lane % 16) * 24 + (lane // 16) * 8) * 2
    regs = ldmatrix(4, False, smem, addr[None, :])
    expect = matrix_to_fragment(tile[None, :, :16].astype(np.uint32), mma_fragment_map("m16n8k16", "a", "f16"))
    np.testing.assert_array_equal(regs, expect)


def test_ldmatrix_trans_of_k_major_b_gives_mma_b_fragment():
    """B stored as [K][N] row-major: .trans x2 over rows k=0..15 gives the col-major B fragment."""
    tile = RNG.integers(0, 1 << 16, size=(16, 8), dtype=np.uint64).astype(np.uint16)
    smem = tile.view(np.uint8).reshape(-1).copy()
    addr = (np.arange(32) % 16) * 16
    regs = ldmatrix(2, True, smem, addr[None, :])
    expect = matrix_to_fragment(tile[None].astype(np.uint32), mma_fragment_map("m16n8k16", "b", "f16"))
    np.testing.assert_array_equal(regs, expect)


def test_per_cta_shared_memory_and_bounds():
    _, s0 = _smem_u16(256)
    _, s1 = _smem_u16(256)
    smem = np.stack([s0, s1])
    addr = np.tile((np.arange(32) % 32) * 16, (2, 1))
    regs = ldmatrix(4, False, smem, addr)
    np.testing.assert_array_equal(regs[1], ldmatrix(4, False, s1, addr[:1])[0])
    with pytest.raises(SimulationError, match="outside"):
        ldmatrix(4, False, s0, addr[:1] + 16)
    with pytest.raises(SimulationError, match="1, 2 or 4"):
        ldmatrix(3, False, s0, addr[:1])


@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("align", [16, 8, 2])
def test_ldmatrix_word_gather_matches_formula_at_any_alignment(trans, align):
    """8-byte-aligned rows take the two-word gather, others the byte gather; per-CTA [W, S]
    shared memory always the byte gather: all give the facts formula."""
    vals, smem = _smem_u16(2048)
    addr = RNG.integers(0, (4096 - 16) // align, size=(3, 32)) * align
    want = np.zeros((3, 32, 4), np.uint64)
    for w in range(3):
        for t in range(32):
            for j in range(4):
                base = addr[w, 8 * j:8 * j + 8] // 2          # rows of matrix j, in elements
                r, c = (2 * (t % 4), t // 4) if trans else (t // 4, 2 * (t % 4))
                if trans:
                    lo, hi = vals[base[r] + c], vals[base[r + 1] + c]
                else:
                    lo, hi = vals[base[r] + c], vals[base[r] + c + 1]
                want[w, t, j] = int(lo) | int(hi) << 16
    assert np.array_equal(ldmatrix(4, trans, smem, addr), want.astype(np.uint32))
    per_cta = np.broadcast_to(smem, (3, smem.size)).copy()
    assert np.array_equal(ldmatrix(4, trans, per_cta, addr), want.astype(np.uint32))
