"""The pytest plugin, through pytester: passing and failing output."""

from __future__ import annotations

import shutil

import pytest

# imported here so the in-process inner runs reuse them (numpy cannot be imported twice per process)
import analyzer.assertions  # noqa: F401

pytest_plugins = ["pytester"]

# the inner runs share this process: keep other plugins' global state out of them
_ARGS = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy")


@pytest.fixture
def corpus_ptx(corpus):
    return corpus / "ptx"


def test_plugin_is_registered_through_the_entry_point(pytester):
    result = pytester.runpytest("--fixtures", *_ARGS)
    result.stdout.fnmatch_lines(["*kernlens_load*", "*kernlens_compile*"])


def test_passing_checks(pytester, corpus_ptx):
    pytester.makepyfile(f"""
        def test_sgemm(kernlens_load):
            k = kernlens_load(r"{corpus_ptx / 'sgemm_naive.sm_90.ptx'}", params={{"K": 2048}})
            k.uses("FP32_FMA", at_least=4).uses("fma.rn.f32", exactly=5).never_uses("TENSOR_CORE")
            k.uses("ld.global.nc", at_most=10)
            k.sequence("ld.param", "ld.global.nc", "NEXT: ld.global.nc", "fma.rn.f32", "NOT: bar.sync", "st.global")
            k.in_innermost_loop("fma.rn.f32")
            k.no_spills()
            k.intensity_at_least(0.2)

        def test_mma(kernlens_load):
            k = kernlens_load(r"{corpus_ptx / 'mma_bf16.sm_90.ptx'}")
            k.uses("TENSOR_CORE").uses("ld.global.u32", at_least=1).in_innermost_loop("mma.sync")

        def test_from_text(kernlens_load):
            k = kernlens_load(".version 9.0\\n.target sm_90\\n.address_size 64\\n"
                              ".visible .entry t() {{ .reg .b32 %r<4>; dp4a.s32.s32 %r1, %r2, %r3, %r1; ret; }}")
            k.uses("INT8_DP4A", exactly=1)
    """)
    result = pytester.runpytest(*_ARGS)
    result.assert_outcomes(passed=3)


def test_failing_checks_explain_themselves(pytester, corpus_ptx):
    pytester.makepyfile(f"""
        SGEMM = r"{corpus_ptx / 'sgemm_naive.sm_90.ptx'}"

        def test_wants_tensor_cores(kernlens_load):
            kernlens_load(SGEMM).uses("TENSOR_CORE", at_least=1)

        def test_forbids_fp32(kernlens_load):
            kernlens_load(SGEMM).never_uses("FP32_FMA")

        def test_order(kernlens_load):
            kernlens_load(SGEMM).sequence("st.global", "ld.global.nc")

        def test_intensity(kernlens_load):
            kernlens_load(SGEMM, params={{"K": 2048}}).intensity_at_least(10)
    """)
    result = pytester.runpytest(*_ARGS)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines([
        "*kernel 'sgemm_naive' (*sgemm_naive.sm_90.ptx): expected TENSOR_CORE >= 1, found 0",
        "*closest candidates:",
        "*sgemm_naive.sm_90.ptx:76: fma.rn.f32*",
    ])
    result.stdout.fnmatch_lines(["*expected FP32_FMA == 0, found 5", "*matching instructions:"])
    result.stdout.fnmatch_lines(["*expected 'ld.global.nc' after line 124 (sequence st.global ; ld.global.nc), found 10 before that point and none after"])
    result.stdout.fnmatch_lines(["*expected arithmetic intensity >= 10 FLOP/B, found 0.25 (estimate)",
                                 "*global-memory instructions:"])


def test_compile_fixture_skips_or_compiles(pytester, corpus):
    cu = corpus / "cuda" / "hgemm_half2.cu"
    pytester.makepyfile(f"""
        def test_compiled(kernlens_compile):
            k = kernlens_compile(r"{cu}", arch="sm_80")
            k.uses("FP16_FMA", at_least=1).never_uses("TENSOR_CORE")
    """)
    result = pytester.runpytest(*_ARGS, "-rs")
    if shutil.which("nvcc") is None:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*nvcc is not on PATH*"])
    else:
        result.assert_outcomes(passed=1)
