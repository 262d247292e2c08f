"""Vector-core kernels: reductions, softmax, masks, conversions, and the UB bank-conflict timing rules."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import isa
from isa.generate.vector import ReduceConfig, SoftmaxConfig, reduce_kernel, softmax_kernel
from sim.ascend.check import compare, make_inputs, read_meta, reference
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")


def _run_text(text, inputs=None, cores=2, trace=False):
    return run_module(isa.loads(text, "k.asm"), M, inputs=inputs or {}, cores=cores, trace=trace)


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("dtype", ["f16", "f32"])
@pytest.mark.parametrize("rows,cols", [(7, 50), (300, 128), (260, 1000), (5, 129)])
def test_reduce_matches_numpy(op, dtype, rows, cols):
    module = isa.loads(reduce_kernel(ReduceConfig(op, dtype, rows, cols)), "r.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=1)
    res = run_module(module, M, inputs=inputs, cores=4)
    assert res.reports == []
    x = inputs["x"].reshape(rows, cols).astype(np.float64)
    want = x.sum(1) if op == "sum" else x.max(1)
    got = res.outputs["y"].astype(np.float64)
    if op == "max":
        np.testing.assert_array_equal(got, want)           # max is exact
    else:
        tol = (2e-2 if dtype == "f16" else 1e-5) * np.sqrt(cols)
        assert np.max(np.abs(got - want)) <= tol
    assert compare(res.outputs, reference(meta, inputs), meta)["passed"]


@pytest.mark.parametrize("dtype", ["f16", "f32"])
@pytest.mark.parametrize("rows,cols", [(3, 5), (70, 1000)])
def test_softmax_matches_numpy(dtype, rows, cols):
    module = isa.loads(softmax_kernel(SoftmaxConfig(dtype, rows, cols)), "s.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=2)
    res = run_module(module, M, inputs=inputs, cores=4)
    assert res.reports == []
    y = res.outputs["y"].reshape(rows, cols).astype(np.float64)
    np.testing.assert_allclose(y.sum(1), 1.0, atol=2e-2 if dtype == "f16" else 1e-5)
    assert compare(res.outputs, reference(meta, inputs), meta)["passed"]


def test_bank_group_conflicts_reproduce_documented_examples(examples):
    """ascend.md 5: dst at 0x1FE00 with block stride 16 -> 8 cycles/repeat, stride 8 -> 4."""
    res = run_module(isa.load(str(examples / "ascend" / "bank_conflict.asm")), M, cores=1, trace=True)
    v = [s for s in res.timing.slices if s.pipe == "V"]
    head, reps = M.vec_head, 4
    assert [s.end - s.start for s in v] == [head + 8 * reps, head + 4 * reps, head + 1 * reps]


def test_bank_cycles_grow_per_repeat():
    def cycles(rep):
        text = (".kernel b .vector ()\n{\n"
                f"    vadds.f32 ub[0x1FE00], ub[0x100], 1.0, {rep}, 16, 1, 1, 8\n}}\n")
        return _run_text(text, cores=1).timing.busy["V"]
    assert cycles(11) - cycles(1) == 10 * 8


def test_read_read_same_group_conflict():
    """src0=0x10020 and src1=0x20020 are different banks of one group: reads serialise (ascend.md 5)."""
    def busy(s1):
        text = (".kernel b .vector ()\n{\n"
                f"    vmuls.f32 ub[0], ub[0], 1.0, 1, 1, 1, 8, 8\n"
                f"    vand.u32 ub[0x400], ub[0x10020], ub[{s1}], 10, 1, 1, 1, 8, 8, 8\n}}\n")
        res = _run_text(text, cores=1, trace=True)
        return [s.end - s.start for s in res.timing.slices if s.name == "vand"][0]
    # both sources cover the same 8 bank groups -> 2 reads per group -> 2 cycles (slope of vand is 1)
    assert busy(0x20020) == M.vec_head + 10 * 2
    assert busy(0x20120) == M.vec_head + 10 * 1     # 256 B further: the other 8 groups


def test_masks_normal_and_counter_mode():
    x = np.arange(256, dtype=np.float32)
    text = """.kernel m .vector (.gm .f32 %x[256], .gm .f32 %y[256])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 32, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vector_dup.f32 ub[1024], -1.0, 4, 1, 1, 8, 8
    pipe_barrier PIPE_V
    set_mask_norm
    set_vector_mask 0, 0xF0
    vadds.f32 ub[1024], ub[0], 100.0, 2, 1, 1, 8, 8
    set_mask_count
    set_vector_mask 0, 70
    vmuls.f32 ub[1536], ub[512], 2.0, 0, 1, 1, 8, 8
    set_mask_norm
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[1024], 0, 1, 32, 0, 0
}
"""
    y = _run_text(text, {"x": x}, cores=1).outputs["y"]
    want = np.full(256, -1.0, dtype=np.float32)
    for r in range(2):
        want[r * 64 + 4:r * 64 + 8] = x[r * 64 + 4:r * 64 + 8] + 100   # lanes 4..7 of each repeat
    want[128:198] = x[128:198] * 2                                      # counter mode: 70 elements
    np.testing.assert_array_equal(y, want)


def test_vconv_rounding_suffixes():
    # two values just above a half-way point, two exactly half-way between f16 neighbours 1 and 1+2^-10
    x = np.array([1.0 + 2 ** -11 + 2 ** -13, -(1.0 + 2 ** -11 + 2 ** -13), 1.0 + 2 ** -11, -(1.0 + 2 ** -11)] * 16,
                 dtype=np.float32)
    outs = {}
    for suffix in "rafcz":
        text = f""".kernel c .vector (.gm .f32 %x[64], .gm .f16 %y[64])
{{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vconv_f322f16{suffix} ub[256], ub[0], 1, 1, 1, 4, 8
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[256], 0, 1, 4, 0, 0
}}
"""
        outs[suffix] = _run_text(text, {"x": x}, cores=1).outputs["y"][:4].astype(np.float64)
    up, down = 1.0 + 2 ** -10, 1.0
    assert list(outs["r"]) == [up, -up, down, -down]      # nearest; ties to even (1.0)
    assert list(outs["a"]) == [up, -up, up, -up]          # nearest; ties away from zero
    assert list(outs["z"]) == [down, -down, down, -down]  # toward zero
    assert list(outs["f"]) == [down, -up, down, -up]      # floor
    assert list(outs["c"]) == [up, -down, up, -down]      # ceil


def test_bf16_vector_add():
    a = (np.arange(128) / 7).astype(ml_dtypes.bfloat16)
    text = """.kernel b .vector (.gm .bf16 %x[128], .gm .bf16 %y[128])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vadd.bf16 ub[256], ub[0], ub[0], 1, 1, 1, 1, 8, 8, 8
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[256], 0, 1, 8, 0, 0
}
"""
    y = _run_text(text, {"x": a}, cores=1).outputs["y"]
    np.testing.assert_array_equal(y.astype(np.float32), (a.astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
                                  .astype(np.float32))
