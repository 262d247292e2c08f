"""Scalar arguments that do not fit their parameter's PTX type are errors, never silent
conversions (issue 15: ``np.float16(1.5)`` for a ``.param .u16`` became the integer 1)."""

from __future__ import annotations

import numpy as np
import pytest

import isa
import sim
from isa.errors import InputError

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_out, .param .u16 k_h, .param .f16 k_f, .param .s32 k_n, .param .f32 k_a)
{
    .reg .b16 %rs<4>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [k_out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u16 %rs1, [k_h];
    ld.param.b16 %rs2, [k_f];
    ld.param.u32 %r3, [k_n];
    ld.param.f32 %f1, [k_a];
    cvt.u32.u16 %r1, %rs1;
    cvt.u32.u16 %r2, %rs2;
    mov.b32 %r4, %f1;
    st.global.u32 [%rd1], %r1;
    st.global.u32 [%rd1+4], %r2;
    st.global.u32 [%rd1+8], %r3;
    st.global.u32 [%rd1+12], %r4;
    ret;
}
"""


def _run(h, f=np.float16(0.0), n=np.int32(0), a=np.float32(0.0)):
    out = np.zeros(4, np.uint32)
    sim.run_kernel(isa.loads(PTX), "k", (1, 1, 1), (1, 1, 1), [out, h, f, n, a])
    return out


def test_float16_for_u16_parameter_is_an_error_naming_it():
    with pytest.raises(InputError) as e:
        _run(np.float16(1.5))
    msg = str(e.value)
    assert "parameter 1 (k_h, .param .u16)" in msg
    assert "bit pattern" in msg and "np.float16(1.5).view(np.uint16) = 15872" in msg
    assert "or an integer" in msg


def test_bit_pattern_and_integers_pass_exactly():
    out = _run(np.float16(1.5).view(np.uint16), np.float16(-2.0), np.int32(-3), np.float32(0.75))
    assert out.tolist() == [15872, 0xC000, 0xFFFFFFFD, 0x3F400000]
    assert _run(7, 1.5, -1, 2)[:4].tolist() == [7, 0x3E00, 0xFFFFFFFF, 0x40000000]
    # an .f16 parameter takes its bit pattern as np.uint16
    assert _run(0, np.uint16(0x3C00))[1] == 0x3C00


def test_out_of_range_and_floats_for_integers_are_errors():
    with pytest.raises(InputError, match=r"parameter 1 \(k_h, .param .u16\).*70000 is outside the 16-bit range"):
        _run(70000)
    with pytest.raises(InputError, match=r"parameter 3 \(k_n, .param .s32\).*a float is not converted"):
        _run(0, n=2.0)
    with pytest.raises(InputError, match=r"parameter 2 \(k_f, .param .f16\).*bit pattern as np.uint16"):
        _run(0, f=np.int32(1))


def test_the_bit_pattern_offered_has_the_parameters_width():
    """np.float32(2.0) for a .u16 was told to pass np.float32(2.0).view(np.uint32) = 1073741824, a
    value that does not fit 16 bits; the hint is now the 16-bit float's pattern, for Python floats too."""
    for a in (np.float32(2.0), 2.0, np.float64(2.0)):
        with pytest.raises(InputError) as e:
            _run(a)
        msg = str(e.value)
        assert "np.float16(2.0).view(np.uint16) = 16384" in msg and "1073741824" not in msg, msg
    with pytest.raises(InputError) as e:
        _run(0, n=np.float32(1.5))                        # .s32: the float32's own pattern
    assert "np.float32(1.5).view(np.uint32) = 1069547520" in str(e.value)
