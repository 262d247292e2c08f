"""set_atomic_* accumulation in GM, and FixPipe NZ output (nz2ndEn=0) with and without channel split."""

from __future__ import annotations

import numpy as np
import pytest

import isa
from isa.generate.gemm import GemmConfig, gemm_kernel
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")

ATOMIC = """.mix acc acc_aic acc_aiv
.kernel acc_aic .cube (.gm .f32 %x[2048], .gm .f32 %out[256])
{{
    ret
}}
.kernel acc_aiv .vector (.gm .f32 %x[2048], .gm .f32 %out[256])
{{
    mul %t, block_idx, 1024
    add %t, %t, %x
    copy_gm_to_ubuf ub[0], gm[%t], 0, 1, 32, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    {atomic}
    copy_ubuf_to_gm gm[%out], ub[0], 0, 1, 32, 0, 0
    set_atomic_none
}}
"""


def test_atomic_add_accumulates_every_vector_core_into_gm():
    rng = np.random.default_rng(0)
    x = rng.integers(-8, 8, size=2048).astype(np.float32)
    out0 = rng.integers(-8, 8, size=256).astype(np.float32)
    res = run_module(isa.loads(ATOMIC.format(atomic="set_atomic_f32\n    set_atomic_add"), "a.asm"), M, cores=2,
                     inputs={"x": x, "out": out0})
    assert res.reports == []                         # concurrent atomic adds are not a race
    np.testing.assert_array_equal(res.outputs["out"], out0 + x[:1024].reshape(4, 256).sum(axis=0))


def test_atomic_max_and_plain_stores():
    rng = np.random.default_rng(1)
    x = rng.normal(size=2048).astype(np.float32)
    out0 = np.zeros(256, np.float32)
    res = run_module(isa.loads(ATOMIC.format(atomic="set_atomic_max"), "a.asm"), M, cores=2,
                     inputs={"x": x, "out": out0})
    assert res.reports == []
    np.testing.assert_array_equal(res.outputs["out"], np.maximum(out0, x[:1024].reshape(4, 256).max(axis=0)))
    # without atomics four vector cores overwrite one buffer with no flag between them: a race
    res = run_module(isa.loads(ATOMIC.format(atomic="mov %z, 0"), "a.asm"), M, cores=2,
                     inputs={"x": x, "out": out0})
    assert any("with no cross-core flag" in r.message and "writes %out" in r.message for r in res.reports)


def _gemm_nz(quant: str, out: str, dst_stride: int, split: int) -> str:
    text = gemm_kernel(GemmConfig(m=32, n=32, k=32, l1_tile=(32, 32, 32), l0_tile=(32, 32, 32), stages=1))
    old = "copy_matrix_cc_to_gm.f32 gm[%t0], l0c[0], 0, %nact, %mact, 32, %t1, 0, F322F16, 0, 0, 1"
    assert old in text
    text = text.replace(old, f"copy_matrix_cc_to_gm.f32 gm[%c], l0c[0], 0, 32, 32, {dst_stride}, 32, 0, {quant}, 0, "
                             f"{split}, 0")
    return text.replace(".gm .f16 %c[1024]", f".gm .{out} %c[1024]")


@pytest.mark.parametrize("quant,out,width,split", [("NoQuant", "f32", 16, 0), ("NoQuant", "f32", 8, 1),
                                                   ("F322F16", "f16", 16, 0)])
def test_fixpipe_nz_output_and_channel_split(quant, out, width, split):
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    osize = 4 if out == "f32" else 2
    stride = 32 * width * osize // 32                  # column blocks back to back (32-B units)
    res = run_module(isa.loads(_gemm_nz(quant, out, stride, split), "nz.asm"), M, cores=1,
                     inputs={"a": a.reshape(-1), "b": b.reshape(-1)})
    assert res.reports == []
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32 if out == "f32" else np.float16)
    want = c.reshape(32, 32 // width, width).transpose(1, 0, 2).reshape(-1)   # NZ: block j = rows x width
    np.testing.assert_allclose(res.outputs["c"].astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=1e-6)


def test_channel_split_needs_nz_f32_output():
    res = run_module(isa.loads(_gemm_nz("F322F16", "f16", 32, 1), "nz.asm"), M, cores=1)
    assert any("channelSplit is for f32 output" in r.message for r in res.reports)
