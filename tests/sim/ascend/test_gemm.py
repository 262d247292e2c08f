"""Generated GEMMs run on the functional simulator and match numpy (fp32 / int32 accumulation)."""

from __future__ import annotations

import numpy as np
import pytest

import isa
from isa.errors import InputError
from isa.generate.gemm import GemmConfig, gemm_kernel
from sim.ascend.check import compare, make_inputs, read_meta, reference
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")
SMALL = dict(l1_tile=(64, 64, 128), l0_tile=(64, 64, 64))


def _run(cfg: GemmConfig, cores=3, seed=0):
    module = isa.loads(gemm_kernel(cfg), "gemm.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=seed)
    res = run_module(module, M, inputs=inputs, cores=cores)
    return res, meta, inputs


@pytest.mark.parametrize("dtype", ["f16", "bf16", "s8"])
@pytest.mark.parametrize("shape", [(128, 128, 128), (150, 100, 200), (33, 70, 47)])
@pytest.mark.parametrize("stages", [1, 2])
def test_gemm_matches_numpy(dtype, shape, stages):
    m, n, k = shape
    res, meta, inputs = _run(GemmConfig(dtype=dtype, m=m, n=n, k=k, stages=stages, **SMALL))
    assert res.reports == []
    ref = reference(meta, inputs)["c"]
    got = res.outputs["c"]
    if dtype == "s8":
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, ref)          # exact
        assert np.abs(ref).max() > 1000                  # real accumulations, not zeros
    else:
        verdict = compare(res.outputs, {"c": ref}, meta)
        assert verdict["passed"], verdict
        assert np.abs(got.astype(np.float32)).max() > 1.0


@pytest.mark.parametrize("la,lb", [("row", "col"), ("col", "row"), ("col", "col")])
@pytest.mark.parametrize("dtype", ["f16", "s8"])
def test_gemm_layouts(dtype, la, lb):
    res, meta, inputs = _run(GemmConfig(dtype=dtype, m=96, n=80, k=160, layout_a=la, layout_b=lb, **SMALL))
    assert res.reports == []
    verdict = compare(res.outputs, reference(meta, inputs), meta)
    assert verdict["passed"], verdict
    if dtype == "s8":
        assert verdict["max_abs_err"] == 0


def test_gemm_numpy_reference_is_independent():
    """The simulator result equals a plain numpy matmul of the same inputs (not only check.reference)."""
    res, meta, inputs = _run(GemmConfig(dtype="f16", m=64, n=48, k=80, layout_b="col", **SMALL))
    a = inputs["a"].reshape(64, 80).astype(np.float32)
    b = inputs["b"].reshape(48, 80).astype(np.float32).T
    want = (a @ b).astype(np.float16).astype(np.float32)
    got = res.outputs["c"].reshape(64, 48).astype(np.float32)
    assert np.max(np.abs(got - want)) <= 2 * np.abs(want).max() * 2 ** -11


@pytest.mark.parametrize("epilogue,out", [("dequant", np.float16), ("requant", np.int8)])
def test_s8_epilogues(epilogue, out):
    scale = 2.0 ** -12 if epilogue == "requant" else 2.0 ** -7
    cfg = GemmConfig(dtype="s8", m=70, n=64, k=96, epilogue=epilogue, scale=scale, offset=3, **SMALL)
    res, meta, inputs = _run(cfg)
    got = res.outputs["c"]
    assert got.dtype == out
    a = inputs["a"].reshape(70, 96).astype(np.int64)
    b = inputs["b"].reshape(96, 64).astype(np.int64)
    acc = (a @ b).astype(np.float64)
    if epilogue == "dequant":
        np.testing.assert_array_equal(got, (acc * scale).astype(np.float32).astype(np.float16).reshape(-1))
    else:
        want = np.clip(np.rint(acc * scale) + 3, -128, 127).astype(np.int8).reshape(-1)
        np.testing.assert_array_equal(got, want)
        assert len(np.unique(want)) > 20      # not saturated


@pytest.mark.parametrize("kw,words", [
    (dict(l1_tile=(256, 256, 256), l0_tile=(256, 256, 64)), ["L0C", "256x256 x 4 B", "131072"]),
    (dict(l1_tile=(128, 256, 512), l0_tile=(128, 256, 64)), ["L1", "524288"]),
    (dict(l1_tile=(128, 256, 256), l0_tile=(128, 256, 128)), ["L0B", "65536"]),
    (dict(l1_tile=(100, 256, 256), l0_tile=(100, 256, 64)), ["multiple of 16"]),
])
def test_tile_budget_errors(kw, words):
    with pytest.raises(InputError) as info:
        gemm_kernel(GemmConfig(m=512, n=512, k=512, **kw))
    for w in words:
        assert w in info.value.message


def test_per_channel_dequant_through_fixpipe_buffer():
    """VDEQF16: one QUANT_PRE word per output column, copied GM -> L1 -> FB and selected by set_fpc."""
    text = """.kernel pc .cube (.gm .s8 %a[512], .gm .s8 %b[512], .gm .u64 %q[16], .gm .f16 %c[256])
{
    copy_gm_to_cbuf l1[0], gm[%a], 0, 1, 16, 0, 0, 0
    copy_gm_to_cbuf l1[512], gm[%b], 0, 1, 16, 0, 0, 0
    copy_gm_to_cbuf l1[1024], gm[%q], 0, 1, 4, 0, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    set_flag PIPE_MTE2, PIPE_FIX, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_FIX, EVENT_ID0
    load_cbuf_to_ca.s8 l0a[0], l1[0], 0, 1, 1, 0, 0, 0, 0
    load_cbuf_to_cb.s8 l0b[0], l1[512], 0, 1, 1, 0, 0, 0, 0
    copy_cbuf_to_fbuf fb[0], l1[1024], 1, 4, 0, 0
    set_fpc fb[0]
    set_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    mad.s8 l0c[0], l0a[0], l0b[0], 16, 32, 16, 0, 0, 0, 1
    set_flag PIPE_M, PIPE_FIX, EVENT_ID0
    wait_flag PIPE_M, PIPE_FIX, EVENT_ID0
    copy_matrix_cc_to_gm.s32 gm[%c], l0c[0], 0, 16, 16, 16, 16, 0, VDEQF16, 0, 0, 1
}
"""
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, size=(16, 32), dtype=np.int8)
    bt = rng.integers(-128, 128, size=(16, 32), dtype=np.int8)      # B stored column-major (n x k)
    scales = np.array([2.0 ** -(3 + j % 5) * (1 + (j % 3) / 4) for j in range(16)], dtype=np.float32)
    q = scales.view(np.uint32).astype(np.uint64) | np.uint64(1 << 46)
    res = run_module(isa.loads(text, "pc.asm"), M, inputs={"a": a.reshape(-1), "b": bt.reshape(-1), "q": q},
                     cores=1)
    assert res.reports == []
    acc = a.astype(np.int64) @ bt.astype(np.int64).T
    want = (acc.astype(np.float32) * scales[None, :]).astype(np.float16)
    np.testing.assert_array_equal(res.outputs["c"].reshape(16, 16), want)
