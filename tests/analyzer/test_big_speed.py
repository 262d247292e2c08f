"""What keeps validate-kernel fast on a big file (issue #15) without changing a report: parsing and
analysing a module leave no reference cycles (so a big file's batches need no cyclic collection),
a parse that fails and is done again (the fast path's retry on the real text: a guard on a line of
its own, ``RETRIED``) included."""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

import pytest

import analyzer.cli as cli
import isa
from analyzer.dataflow import Launch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / "ptx" / p for p in ("sgemm_tiled.sm_90.ptx", "hgemm_wmma.sm_90.ptx", "reduce_sum.sm_90.ptx",
                                                   "calls/reduce_calls_G.sm_90.ptx", "bugs/missing_sync.sm_90.ptx")]
EXAMPLES += sorted((ROOT / "examples" / "ptx" / "tma").glob("*.ptx"))

SCOPED = """.version 8.0
.target sm_90
.address_size 64
.shared .align 4 .b8 tile[512];
.func (.param .b32 r) twice(.param .b32 x)
{
    .reg .b32 %a;
    ld.param.b32 %a, [x];
    add.s32 %a, %a, %a;
    st.param.b32 [r], %a;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    mov.u32 %r1, %tid.x;
    {
        .reg .b32 %t<2>;
        shl.b32 %t0, %r1, 2;
        st.shared.u32 [tile+4], %t0;
        {
            .reg .pred %q;
            setp.eq.s32 %q, %t0, 0;
        }
    }
    {
        .param .b32 a;
        .param .b32 b;
        st.param.b32 [a], %r1;
        call (b), twice, (a);
        ld.param.b32 %r2, [b];
    }
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""

#: a guard alone on its line: the fast path takes the next line as a statement, its substituted
#: parse fails and the real text is parsed again (tests/isa/test_fastpath.py)
RETRIED = SCOPED.replace("    ld.param.u64 %rd1, [out];\n",
                         "    setp.eq.s32 %p1, %r1, 0;\n    @%p1\n    bra $L;\n$L:\n    ld.param.u64 %rd1, [out];\n"
                         ).replace(".reg .b32 %r<4>;", ".reg .b32 %r<4>;\n    .reg .pred %p<2>;")


def _job(path: str):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    args = p.parse_args([path, "--expect", "INT_ARITH>=1", "--expect", "st.shared>=1"])
    exps = [cli.parse_expectation(e) for e in args.expect]
    return cli._Job(args, exps, {}, Launch(), False, None)


@pytest.mark.parametrize("path", ["scoped", "retried"] + EXAMPLES,
                         ids=["scoped", "retried"] + [p.name for p in EXAMPLES])
def test_analysing_a_module_leaves_no_reference_cycles(path, tmp_path, monkeypatch):
    if path in ("scoped", "retried"):
        text = SCOPED if path == "scoped" else RETRIED
        path = tmp_path / f"{path}.ptx"
        path.write_text(text)
        from isa.ptx import parser

        parses = []
        real = parser._parse
        monkeypatch.setattr(parser, "_parse", lambda *a, **k: parses.append(1) or real(*a, **k))
        isa.loads(text, str(path), cache=False)
        assert len(parses) == (2 if text is RETRIED else 1)        # the retried one is parsed again
    job = _job(str(path))
    text = path.read_text()
    cli._analyse(isa.loads(text, str(path), cache=False), job)   # warm: lazy tables, the parser's set-up
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        records, _ = cli._analyse(isa.loads(text, str(path), cache=False), job)
        assert records and all(r.payload for r in records)
        del records
        gc.collect()
        garbage = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert garbage == []



def _corpus_reports():
    from analyzer.report import analyze_function

    root = ROOT.parent / "shared" / "corpus" / "ptx"
    files = sorted(root.glob("*.ptx")) + sorted((ROOT / "examples" / "ptx").rglob("*.ptx"))
    for f in files:
        try:
            m = isa.load(f)
        except isa.KernlensError:
            continue
        for i, fn in enumerate(m.kernels):
            launch = Launch((4, 2, 1), (128, 1, 1)) if i % 2 else Launch()
            yield analyze_function(m, fn, launch=launch, params={"0": 1024} if i % 3 == 0 else None)


def test_counts_summed_by_group_are_the_counts_summed_by_instruction(monkeypatch):
    """KernelReport.dynamic sums a block's instructions by description (_count_groups): every
    figure and every key order of the JSON is the instruction-by-instruction sum's, on every
    corpus and bundled kernel, with and without a launch shape."""
    from analyzer.jsontext import dumps
    from analyzer.report import KernelReport

    from tests.conftest import corpus_or_skip

    corpus_or_skip()
    grouped = total = 0
    real = KernelReport._count_groups
    for r in _corpus_reports():
        fast = r.dynamic()
        grouped += real(r, r._work_infos(), r.instruction_counts(), r.instruction_exact()) is not None
        total += 1
        monkeypatch.setattr(KernelReport, "_count_groups", lambda self, *a: None)
        slow = r.dynamic()
        monkeypatch.setattr(KernelReport, "_count_groups", real)
        assert dumps(fast) == dumps(slow), r.name
    assert total > 100 and grouped > total // 2


def test_counts_that_could_round_differently_are_summed_instruction_by_instruction():
    from analyzer.report import KernelReport

    r = next(_corpus_reports())
    infos, counts, exact = r._work_infos(), r.instruction_counts(), r.instruction_exact()
    assert KernelReport._count_groups(r, infos, counts, exact) is not None
    third = [c / 3.0 if c else c for c in counts]          # not a multiple of 1/1024
    assert any(third) and KernelReport._count_groups(r, infos, third, exact) is None
    huge = [c * 2.0 ** 40 for c in counts]                  # sums past 2**34
    assert KernelReport._count_groups(r, infos, huge, exact) is None
