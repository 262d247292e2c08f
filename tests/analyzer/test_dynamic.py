"""Trip counts, block frequencies and whole-launch totals against values known from the sources."""

from __future__ import annotations

import pytest

import isa
from analyzer.dataflow import Launch
from analyzer.dynamic import first_failure
from analyzer.params import resolve
from analyzer.report import analyze_function
from tests.isa.ptx_helpers import kernel
from tests.isa.test_cfg import NESTED


def _report(path, params=None, grid=None, block=None, name=None):
    m = isa.load(path)
    fn = m.function(name) if name else m.kernels[0]
    return analyze_function(m, fn, params=resolve(m, fn, params or {}), launch=Launch(grid, block))


def test_constant_nested_loops_are_exact():
    m = isa.loads(".version 9.0\n.target sm_90\n.address_size 64\n" + kernel(NESTED).emit())
    r = analyze_function(m, m.kernels[0])
    assert {h: li.trips for h, li in r.estimate.loops.items()} == {1: 3, 2: 7}
    assert r.estimate.counts == {0: 1.0, 1: 4.0, 2: 32.0, 3: 4.0, 4: 1.0}
    dyn = r.dynamic()
    assert dyn["flops"] == {"value": 64, "exact": True, "by_dtype": {"f32": 64}}
    assert dyn["exact"] is True


@pytest.mark.parametrize("v0,step,bound,cmp,stay,expected", [
    (0, 1, 10, "lt", True, 10), (1, 1, 10, "lt", True, 9), (0, 4, 10, "lt", True, 3), (0, 1, 10, "le", True, 11),
    (40, -4, 0, "ne", True, 10), (10, -1, 0, "gt", True, 10), (10, -3, 0, "ge", True, 4),
    (0, 1, 10, "ge", False, 10), (5, 1, 5, "lt", True, 0), (3, 2, 10, "ne", True, None),
])
def test_first_failure(v0, step, bound, cmp, stay, expected):
    assert first_failure(v0, step, bound, cmp, stay) == expected


def test_sgemm_naive_flops_match_the_manifest_work(corpus, manifest):
    entry = next(e for e in manifest["entries"] if e["name"] == "sgemm_naive")
    perf = entry["perf_launch"]
    params = {a["scalar"]: a["value"] for a in perf["args"] if "scalar" in a}
    r = _report(corpus / "ptx" / "sgemm_naive.sm_90.ptx", params, tuple(perf["grid"]), tuple(perf["block"]))
    dyn = r.dynamic()
    assert dyn["flops"]["value"] == perf["work"]["flops"] == 2 * 2048 ** 3
    loop = r.estimate.loops[4]
    assert loop.trips == 511 and loop.exact and loop.induction == "%r29"
    # A and B: one 4-byte load each per multiply-add, one 4-byte store of C per thread
    assert dyn["bytes"]["global"]["value"] == 2 * 4 * 2048 ** 3 + 4 * 2048 ** 2
    assert dyn["flops"]["exact"] is False        # the bounds check is assumed to pass
    assert dyn["roofline"]["bound"] == "memory"


def test_remainder_loop_follows_the_parameter(corpus):
    r = _report(corpus / "ptx" / "sgemm_naive.sm_90.ptx", {"K": 45})
    assert r.estimate.loops[4].trips == 10 and r.estimate.loops[7].trips == 0
    assert r.estimate.counts[4] == 11 and r.estimate.counts[7] == 1
    assert r.dynamic()["flops"]["value"] == 2 * 45


def test_unknown_parameter_is_named_and_marked_inexact(corpus):
    r = _report(corpus / "ptx" / "sgemm_naive.sm_90.ptx")
    li = r.estimate.loops[4]
    assert li.trips is None and not li.exact
    assert "sgemm_naive_param_5" in li.reason and "--param" in li.reason
    dyn = r.dynamic()
    assert dyn["exact"] is False and "sgemm_naive_param_5" in dyn["missing_params"]


def test_wgmma_and_dp4a_work(corpus, manifest):
    r = _report(corpus / "ptx" / "wgmma_f16.sm_90a.ptx")
    info = [i for i in r.infos if i.family == "wgmma.mma_async"][0]
    assert info.flops == 2 * 64 * 64 * 16
    d = _report(corpus / "ptx" / "dp4a_gemm.sm_90.ptx")
    assert d.dynamic()["int_ops"]["value"] > 0 and d.classes["INT8_DP4A"] == 5


def test_warp_scope_work_is_shared_by_the_lanes(corpus):
    r = _report(corpus / "ptx" / "wmma_f16.sm_90.ptx", grid=(1, 1, 1), block=(32, 1, 1))
    per_thread = analyze_function(r.module, r.function).dynamic()
    launch = r.dynamic()
    assert launch["flops"]["value"] == pytest.approx(per_thread["flops"]["value"] * 32)
