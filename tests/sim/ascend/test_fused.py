"""Generated mix kernels (cube + vector cores) checked against numpy on 1 and 24 cube cores."""

from __future__ import annotations

import numpy as np
import pytest

import isa
from isa.generate.fused import EpilogueConfig, gemm_epilogue_kernel
from sim.ascend.check import compare, make_inputs, read_meta, reference
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")
SMALL = dict(l1_tile=(64, 64, 64), l0_tile=(64, 64, 32))


def run(text, cores):
    module = isa.loads(text, "fused.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=3)
    res = run_module(module, M, cores=cores, inputs=inputs, trace=True)
    return res, reference(meta, inputs), meta


def overlaps(t, n_aic):
    cube = [(s.start, s.end) for s in t.slices if s.core < n_aic and s.pipe == "M" and s.kind == "op"]
    vec = [(s.start, s.end) for s in t.slices if s.core >= n_aic and s.pipe == "V" and s.kind == "op"]
    return any(a < d and c < b for a, b in cube for c, d in vec)


@pytest.mark.parametrize("m,n,k,cores,act,out", [
    (128, 128, 96, 1, "relu", "s8"),     # 4 blocks on one cube core: both workspace slots are reused
    (128, 192, 80, 1, "none", "f16"),
    (384, 256, 64, 24, "relu", "s8"),    # 24 blocks, one per cube core, 48 vector cores
])
def test_gemm_epilogue_matches_numpy(m, n, k, cores, act, out):
    cfg = EpilogueConfig(m=m, n=n, k=k, act=act, out=out, scale=4.0, **SMALL)
    res, ref, meta = run(gemm_epilogue_kernel(cfg), cores)
    assert res.reports == []                     # no race, no deadlock
    verdict = compare(res.outputs, ref, meta)
    assert verdict["passed"], verdict
    got = res.outputs["c"].astype(np.float64)
    want = ref["c"].astype(np.float64)
    if out == "s8":
        assert np.mean(got == want) > 0.99 and len(np.unique(want)) > 10   # real quantised values, not all 0
    if act == "relu":
        assert (want >= 0).all() and (want == 0).mean() > 0.3
    assert res.launch.core_types.count("vector") == 2 * cores


def test_gemm_epilogue_cube_and_vector_overlap_in_time():
    cfg = EpilogueConfig(m=512, n=256, k=512, l1_tile=(128, 128, 128), l0_tile=(128, 128, 64))  # 8 blocks
    res, ref, meta = run(gemm_epilogue_kernel(cfg), 1)
    assert res.reports == [] and compare(res.outputs, ref, meta)["passed"]
    t = res.timing
    assert overlaps(t, 1)                       # the epilogue of block i runs while the cube does block i+1
    assert t.stalls.cycles.get("cross_core", 0) > 0


def test_gemm_epilogue_without_slot_release_deadlocks():
    cfg = EpilogueConfig(m=128, n=192, k=64, **SMALL)           # 6 blocks: the third needs slot 0 back
    text = gemm_epilogue_kernel(cfg).replace("    ffts_cross_core_sync PIPE_MTE2, 2, %t2\n", "")
    res, _, _ = run(text, 1)
    assert any("deadlock: wait_flag_dev 2" in r.message for r in res.reports)


def attention(cfg, cores, peaky=8.0):
    from isa.generate.fused import flash_attention_kernel

    module = isa.loads(flash_attention_kernel(cfg), "fa.asm")
    meta = read_meta(module)
    inputs = make_inputs(meta, seed=5)
    # sharpen the scores so that a wrong softmax (no max, no rescaling) cannot pass as the mean of V
    inputs["q"] = (inputs["q"].astype(np.float32) * peaky).astype(np.float16)
    res = run_module(module, M, cores=cores, inputs=inputs, trace=True)
    return res, reference(meta, inputs), meta, inputs


@pytest.mark.parametrize("sq,sk,d,cores", [(128, 512, 64, 1), (1536, 128, 64, 24)])
def test_flash_attention_matches_numpy(sq, sk, d, cores):
    from isa.generate.fused import AttentionConfig

    res, ref, meta, inputs = attention(AttentionConfig(sq=sq, sk=sk, d=d), cores)
    assert res.reports == []
    verdict = compare(res.outputs, ref, meta)
    assert verdict["passed"] and verdict["max_abs_err"] < 2e-3, verdict
    v = inputs["v"].reshape(sk, d).astype(np.float64)
    assert np.abs(ref["o"].reshape(sq, d) - v.mean(axis=0)).max() > 0.5    # attention is far from uniform


def test_flash_attention_overlaps_softmax_with_the_next_qk():
    from isa.generate.fused import AttentionConfig

    res, ref, meta, _ = attention(AttentionConfig(sq=64, sk=1024, d=128), 1)
    assert res.reports == [] and compare(res.outputs, ref, meta)["passed"]
    assert overlaps(res.timing, 1)
