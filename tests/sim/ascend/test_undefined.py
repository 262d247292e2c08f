"""Hand-written bad kernels are caught with precise messages; results computed before are kept."""

from __future__ import annotations

import numpy as np

import isa
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")


def _reports(examples, name, inputs=None):
    module = isa.load(str(examples / "ascend" / "bad" / name))
    res = run_module(module, M, inputs=inputs or {}, cores=2)
    return res, [r.render() for r in res.reports]


def test_buffer_overflow(examples):
    res, out = _reports(examples, "overflow.asm")
    assert len(out) == 1
    assert out[0].startswith(f"{examples / 'ascend' / 'bad' / 'overflow.asm'}:5:5: error: kernel 'overflow' core 0:")
    assert "ub[0x2f000, 0x31000) beyond the 192 KB ub buffer (overflow by 4096 bytes)" in out[0]
    assert "copy_gm_to_ubuf ub[0x2F000]" in out[0]
    assert "same happens on 1 other core" in out[0]


def test_misaligned_l0a(examples):
    _, out = _reports(examples, "misaligned_l0a.asm")
    assert ":7:5: error:" in out[0]
    assert "l0a address 0x100 is not 512-byte aligned" in out[0]


def test_wait_without_set_is_a_deadlock_naming_both_flags(examples):
    _, out = _reports(examples, "wait_without_set.asm")
    assert ":6:5: error:" in out[0]
    assert "deadlock: wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID1) can never be satisfied" in out[0]
    assert "set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0) at line 5" in out[0]


def test_l0c_read_before_mad_waited(examples):
    a = np.ones(256, dtype=np.float16)
    res, out = _reports(examples, "l0c_race.asm", {"a": a, "b": a})
    assert len(out) == 1
    assert ":14:5: error:" in out[0]
    assert ("copy_matrix_cc_to_gm (PIPE_FIX) reads l0c[0x0, 0x400) written by mad at line 13 (PIPE_M) with no "
            "set_flag(PIPE_M, PIPE_FIX)/wait_flag between them") in out[0]
    # the race is reported, and the result is still written (program order): 16 x 16 ones
    np.testing.assert_array_equal(res.outputs["c"], np.full(256, 16, dtype=np.float16))


def test_results_before_a_stop_are_kept():
    text = """.kernel k .vector (.gm .f32 %x[64], .gm .f32 %y[64])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[0], 0, 1, 8, 0, 0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID2
    copy_ubuf_to_gm gm[%y], ub[256], 0, 1, 8, 0, 0
}
"""
    x = np.arange(64, dtype=np.float32)
    res = run_module(isa.loads(text, "k.asm"), M, inputs={"x": x}, cores=1)
    assert len(res.reports) == 1 and res.reports[0].stopped
    assert res.reports[0].span.line == 7
    np.testing.assert_array_equal(res.outputs["y"], x)


def test_double_set_and_gm_out_of_bounds():
    text = """.kernel k .vector (.gm .f32 %x[64])
{
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    copy_gm_to_ubuf ub[0], gm[%x+128], 0, 1, 8, 0, 0
}
"""
    res = run_module(isa.loads(text, "k.asm"), M, inputs={}, cores=1)
    msgs = [r.message for r in res.reports]
    assert "already set (by line 3)" in msgs[0]
    assert "GM access [0x80, 0x180) is out of bounds of parameter %x (256 bytes)" in msgs[1]


def test_correct_kernels_report_nothing(examples):
    for name in ("vadd_f16.asm", "gemm_f16_256x192x320.asm", "reduce_sum_f16.asm", "softmax_f32.asm",
                 "gemm_s8_requant.asm"):
        res = run_module(isa.load(str(examples / "ascend" / name)), M, inputs={}, cores=3)
        assert res.reports == [], name


def test_write_after_write_and_write_after_read_races():
    text = """.kernel k .vector (.gm .f32 %x[64])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    vector_dup.f32 ub[0], 1.0, 1, 1, 1, 8, 8
    pipe_barrier PIPE_ALL
    vmuls.f32 ub[256], ub[0], 2.0, 1, 1, 1, 8, 8
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
}
"""
    res = run_module(isa.loads(text, "k.asm"), M, inputs={"x": np.zeros(64, np.float32)}, cores=1)
    msgs = [(r.span.line, r.message) for r in res.reports]
    assert len(msgs) == 2 and not any(r.stopped for r in res.reports)
    assert msgs[0][0] == 4 and ("vector_dup (PIPE_V) overwrites the result of ub[0x0, 0x100) used by copy_gm_to_ubuf "
                                "at line 3 (PIPE_MTE2)") in msgs[0][1]
    assert msgs[1][0] == 7 and ("copy_gm_to_ubuf (PIPE_MTE2) overwrites ub[0x0, 0x100) used by vmuls at line 6 "
                                "(PIPE_V)") in msgs[1][1]
