"""Register packing: element i of a register sits at bit i * bits ("a0 in bits 15:0")."""

import numpy as np
import pytest

from sim.ptx.tensor.fragments import pack, unpack


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_pack_and_unpack_follow_the_shift_formula(bits):
    rng = np.random.default_rng(bits)
    per = 32 // bits
    e = rng.integers(0, 2**32, (3, 32, 4 * per), dtype=np.uint64).astype(np.uint32)
    for elems in (e, e[:, :, ::-1], e.transpose(1, 0, 2)):        # contiguous and strided
        want = np.zeros(elems.shape[:-1] + (elems.shape[-1] // per,), np.uint64)
        for i in range(per):
            want |= (elems[..., i::per].astype(np.uint64) & ((1 << bits) - 1)) << (i * bits)
        regs = pack(elems, bits)
        assert regs.dtype == np.uint32 and np.array_equal(regs, want.astype(np.uint32))
        back = unpack(regs, bits)
        assert np.array_equal(back, elems & np.uint32((1 << bits) - 1 if bits < 32 else 0xFFFFFFFF))
        assert np.array_equal(unpack(regs[:, :, ::-1], bits).reshape(back.shape[:-1] + (-1, per))[..., ::-1, :],
                              back.reshape(back.shape[:-1] + (-1, per)))


def test_16_bit_example_from_the_isa():
    assert pack(np.array([[0x1111, 0x2222]], np.uint32), 16)[0, 0] == 0x22221111
    assert list(unpack(np.array([0x44332211], np.uint32), 8)) == [0x11, 0x22, 0x33, 0x44]
