"""Mix kernels: cube (AIC) and vector (AIV) cores 1:2, cross-core flags, a GM workspace between them."""

from __future__ import annotations

import numpy as np
import pytest

import isa
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")

PARAMS = "(.gm .f16 %a[256], .gm .f16 %b[256], .gm .f32 %ws[{n}], .gm .f32 %out[{n}])"

AIC = """
.kernel k_aic .cube {params}
{{
    copy_gm_to_cbuf_multi_nd2nz_b16 l1[0], gm[%a], 0, 1, 16, 16, 0, 16, 16, 1, 0
    copy_gm_to_cbuf_multi_nd2nz_b16 l1[512], gm[%b], 0, 1, 16, 16, 0, 16, 16, 1, 0
    set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    load_cbuf_to_ca.f16 l0a[0], l1[0], 0, 1, 1, 0, 0, 0, 0
    load_cbuf_to_cb.f16 l0b[0], l1[512], 0, 1, 1, 0, 0, 1, 0
    set_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    mad.f16 l0c[0], l0a[0], l0b[0], 16, 16, 16, 0, 0, 0, 1
    set_flag PIPE_M, PIPE_FIX, EVENT_ID0
    wait_flag PIPE_M, PIPE_FIX, EVENT_ID0
    mul %t, block_idx, 1024
    add %t, %t, %ws
    copy_matrix_cc_to_gm.f32 gm[%t], l0c[0], 0, 16, 16, 16, 16, 0, NoQuant, 0, 0, 1
    {set}
    wait_flag_dev 1
}}
"""

AIV = """
.kernel k_aiv .vector {params}
{{
    {wait}
    mul %t, block_idx, 512
    add %s, %t, %ws
    copy_gm_to_ubuf ub[0], gm[%s], 0, 1, 16, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vadds.f32 ub[512], ub[0], 1.0, 2, 1, 1, 8, 8
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    add %d, %t, %out
    copy_ubuf_to_gm gm[%d], ub[512], 0, 1, 16, 0, 0
    ffts_cross_core_sync PIPE_MTE3, 2, 1
}}
"""


def mix(n_aic, set_="ffts_cross_core_sync PIPE_FIX, 2, 0", wait="wait_flag_dev 0"):
    p = PARAMS.format(n=256 * n_aic)
    text = ".mix k k_aic k_aiv\n" + AIC.format(params=p, set=set_) + AIV.format(params=p, wait=wait)
    return isa.loads(text, "mix.asm")


def inputs(n_aic):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    return a, b, {"a": a.reshape(-1), "b": b.reshape(-1)}


@pytest.mark.parametrize("n_aic", [1, 3])
def test_cube_result_goes_through_gm_to_both_vector_cores(n_aic):
    a, b, ins = inputs(n_aic)
    res = run_module(mix(n_aic), M, cores=n_aic, inputs=ins, trace=True)
    assert res.reports == []
    want = a.astype(np.float32) @ b.astype(np.float32) + 1.0
    out = res.outputs["out"].reshape(n_aic, 16, 16)
    for g in range(n_aic):
        np.testing.assert_allclose(out[g], want, rtol=1e-6, atol=1e-6)
    launch = res.launch
    assert launch.core_types == ["cube"] * n_aic + ["vector"] * (2 * n_aic) and launch.vector_blocks == 2 * n_aic
    t = res.timing
    # each vector core's vadds starts after its cube core's FixPipe wrote the workspace (+ the flag latency)
    fix = {s.core: s for s in t.slices if s.pipe == "FIX" and s.kind == "op"}
    for j in range(2 * n_aic):
        v = next(s for s in t.slices if s.core == n_aic + j and s.pipe == "V")
        assert v.start >= fix[j // 2].end + M.cross_core_latency
    # the cube core's final wait is released only when both of its vector cores have written out
    for g in range(n_aic):
        xw = next(s for s in t.slices if s.core == g and s.kind == "xwait")
        mte3 = [s for s in t.slices if s.core in (n_aic + 2 * g, n_aic + 2 * g + 1) and s.pipe == "MTE3"
                and s.kind == "op"]
        assert xw.end >= max(s.end for s in mte3) + M.cross_core_latency
    # the flows of the trace join a cube core's set to its vector cores' waits and back
    cross = [(x.core, y.core) for x, y in t.flows if x.core != y.core]
    assert (0, n_aic) in cross and (0, n_aic + 1) in cross and (n_aic + 1, 0) in cross
    assert set(t.utilization_by_kind) == {"cube", "vector"}
    assert t.utilization_by_kind["cube"]["M"] > 0 and t.utilization_by_kind["vector"]["V"] > 0


def test_trace_names_cube_and_vector_cores():
    from sim.ascend.trace import chrome_trace

    module = mix(2)
    _, _, ins = inputs(2)
    res = run_module(module, M, cores=2, inputs=ins, trace=True)
    tr = chrome_trace(res, res.timing, res.launch, module, M.hz)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in tr if e.get("name") == "process_name"}
    assert names == {0: "cube core 0", 1: "cube core 1", 2: "vector core 0", 3: "vector core 1",
                     4: "vector core 2", 5: "vector core 3"}
    starts = {e["id"]: e["pid"] for e in tr if e["ph"] == "s"}
    ends = {e["id"]: e["pid"] for e in tr if e["ph"] == "f"}
    assert any(starts[i] == 0 and ends[i] == 2 for i in starts)


def test_missing_cross_core_set_is_a_deadlock():
    res = run_module(mix(1, set_="mov %x, 0"), M, cores=1, inputs=inputs(1)[2])
    msgs = [r.message for r in res.reports]
    assert len(msgs) == 2 and all("deadlock: wait_flag_dev" in m for m in msgs)
    assert res.reports[0].stopped and sorted(r.core for r in res.reports) == [0, 0]   # cube core 0, vector core 0
    assert res.reports[0].other_cores == [] and res.reports[1].other_cores == [1]


def test_reading_the_workspace_without_the_flag_is_a_race():
    res = run_module(mix(1, wait="mov %x, 0"), M, cores=1, inputs=inputs(1)[2])
    races = [r.message for r in res.reports if "no cross-core flag" in r.message]
    assert races and "copy_gm_to_ubuf (PIPE_MTE2) reads %ws" in races[0] and "cube core 0 (PIPE_FIX)" in races[0]


def test_naming_one_segment_runs_the_whole_mix():
    a, b, ins = inputs(1)
    res = run_module(mix(1), M, cores=1, inputs=ins, kernel="k_aiv")
    assert res.reports == [] and res.launch.kernel == "k" and res.launch.vector_blocks == 2


def test_inspector_timeline_runs_a_mix_kernel():
    from tui.timeline import run_timing

    class Doc:                      # what run_timing reads of a KernelDoc
        module = mix(24)            # the inspector launches every core: 24 cube + 48 vector
        name = "k_aic"

    run = run_timing(Doc(), "davinci-a2")
    assert run.reports == [] and {s.core for s in run.timing.slices} == set(range(72))
