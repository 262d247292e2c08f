"""For every corpus entry and target, the analyzer's counts agree with the manifest."""

from __future__ import annotations

import isa
from analyzer.manifest import check_manifest, count_family, expectations_for
from analyzer.report import analyze_function


def test_every_entry_and_target_agrees_with_the_manifest(corpus, manifest):
    checks, mismatches = check_manifest(corpus)
    expected = sum(len(e["static_counts"][t]) + len(e["expect"][t]) for e in manifest["entries"] for t in e["ptx"])
    assert checks == expected > 2000
    assert mismatches == [], "\n".join(map(str, mismatches[:20]))


def test_type_order_matters_for_conversions(corpus):
    m = isa.load(corpus / "ptx" / "hgemm_cp_async.sm_90.ptx")
    r = analyze_function(m, m.kernels[0])
    # 8 f32->f16 conversions; the 72 f16->f32 ones must not be counted
    assert count_family(r, "cvt.f16.f32") == 8
    assert r.count("cvt.f32.f16") == 72


def test_manifest_expect_becomes_analyzer_expectations(corpus, manifest):
    entry = next(e for e in manifest["entries"] if e["name"] == "mma_bf16_m16n8k16_gemm")
    m = isa.load(corpus / entry["ptx"]["sm_80"])
    r = analyze_function(m, m.function(entry["entry"]))
    outcomes = r.check(expectations_for(entry, "sm_80"))
    assert len(outcomes) == len(entry["expect"]["sm_80"])
    assert all(o.holds for o in outcomes)
    assert next(o for o in outcomes if o.expectation.name == "mma.sync").found == 10
