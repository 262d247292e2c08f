"""img2col (img2colv2_cbuf_to_ca) and the generated conv2d, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import isa
from isa.errors import InputError
from isa.generate.conv import ConvConfig, conv2d_kernel
from sim.ascend.check import compare, make_inputs, read_meta, reference
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")


@pytest.mark.parametrize("cfg,cores", [
    (ConvConfig(cin=16, h=16, w=16, cout=32, kh=3, kw=3, stride=1, pad=1), 1),
    (ConvConfig(cin=3, h=13, w=11, cout=20, kh=3, kw=3, stride=2, pad=0), 1),     # padded channels, odd sizes
    (ConvConfig(cin=24, h=40, w=40, cout=48, kh=3, kw=3, stride=1, pad=1), 24),   # 25 blocks over 24 cores
    (ConvConfig(cin=16, h=9, w=9, cout=16, kh=5, kw=5, stride=1, pad=2, tm=32), 2),
])
def test_conv2d_matches_numpy(cfg, cores):
    module = isa.loads(conv2d_kernel(cfg), "conv.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=4)
    res = run_module(module, M, cores=cores, inputs=inputs)
    assert res.reports == []
    ref = reference(meta, inputs)
    assert np.abs(ref["y"].astype(np.float64)).max() > 0.5
    verdict = compare(res.outputs, ref, meta)
    assert verdict["passed"], verdict
    assert res.outputs["y"].size == cfg.oh * cfg.ow * cfg.cout


def test_img2col_rows_and_padding():
    """One 16-row block of the im2col matrix of a 4x4 map, 2 channels, 3x3 kernel, pad 1: rows
    are output pixels, taps in the padding and channels 2..15 are 0."""
    cin, H, W = 2, 4, 4
    text = f""".kernel i .cube (.gm .f16 %x[{H * W * cin}], .gm .f16 %y[16])
{{
    copy_gm_to_cbuf_multi_nd2nz_b16 l1[0], gm[%x], 0, 1, {H * W}, {cin}, 0, {cin}, {H * W}, 1, 0
    set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    set_fmatrix {W | H << 16 | 1 << 32 | 1 << 40 | 1 << 48 | 1 << 56:#x}
    img2colv2_cbuf_to_ca.f16 l0a[0], l1[0], 144, 16, 0, 0, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0, {cin}
}}
"""
    x = np.arange(H * W * cin, dtype=np.float16)
    # expected: row m = (oh, ow), column k = ((c1*3 + kh)*3 + kw)*16 + c0
    xm = x.reshape(H, W, cin)
    want = np.zeros((16, 144), np.float16)
    for m in range(16):
        oh, ow = divmod(m, 4)
        for kh in range(3):
            for kw in range(3):
                ih, iw = oh - 1 + kh, ow - 1 + kw
                if 0 <= ih < H and 0 <= iw < W:
                    want[m, (kh * 3 + kw) * 16:(kh * 3 + kw) * 16 + cin] = xm[ih, iw]
    from sim.ascend.engine import Launch

    module = isa.loads(text, "i.asm")
    L = Launch(module, module.kernels[0], M, {"x": x}, 1, True)
    core = L.make_cores()[0]                           # run one core by hand to read its L0A
    assert L.run_core(core) == "done" and L.reports == []
    zz = core.buffers["l0a"][:16 * 144 * 2].view(np.float16).reshape(1, 9, 16, 16)   # (m1, k1, 16, c0)
    got = zz.transpose(0, 2, 1, 3).reshape(16, 144)
    np.testing.assert_array_equal(got, want)


def test_conv2d_that_does_not_fit_is_an_input_error():
    with pytest.raises(InputError, match="L0A needs"):
        conv2d_kernel(ConvConfig(cin=24, h=12, w=12, cout=48, kh=5, kw=5, stride=1, pad=2))
