"""--precision-mode wiring: OpInfo -> ArithmeticFact, the corpus verdicts, and what the CLI prints."""

from __future__ import annotations

import json

import pytest

import isa
from analyzer import precision
from analyzer.report import analyze_function


def _report(corpus, name, entry=None):
    m = isa.load(corpus / "ptx" / name)
    return analyze_function(m, m.function(entry) if entry else m.kernels[0])


def test_facts_map_tensor_vector_and_convert(corpus):
    r = _report(corpus, "wmma_f16.sm_90.ptx")
    facts = precision.facts(r)
    mma = [f for f in facts if f.kind == "matrix"]
    assert mma and all((f.in_dtype, f.acc_dtype, f.out_dtype) == ("f16", "f32", "f32") for f in mma)
    assert all(f.full_opcode.startswith("wmma.mma") for f in mma)
    conv = _report(corpus, "convert.sm_90.ptx")
    kinds = {(f.kind, f.full_opcode) for f in precision.facts(conv)}
    assert ("convert", "cvt.rn.f16.f32") in kinds and ("convert", "cvt.rn.bf16.f32") in kinds
    sg = precision.facts(_report(corpus, "sgemm_naive.sm_90.ptx"))
    fma = [f for f in sg if f.full_opcode == "fma.rn.f32"]
    assert len(fma) == 5 and (fma[0].kind, fma[0].in_dtype, fma[0].acc_dtype, fma[0].line) == ("vector", "f32", "f32", 76)
    assert not any(f.full_opcode.startswith(("add.s", "mad.lo", "setp")) for f in sg)


def test_cli_precision_mode(corpus, capsys):
    from analyzer.cli import main

    assert main([str(corpus / "ptx" / "wmma_f16.sm_90.ptx"), "--precision-mode", "cube_fp16in_fp32out"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("precision:")]
    assert lines == ["precision: complies with cube_fp16in_fp32out (5 arithmetic instructions checked)"]   # its five wmma.mma
    assert main([str(corpus / "ptx" / "sgemm_naive.sm_90.ptx"), "--precision-mode", "force_fp16",
                 "--format", "sarif"]) == 1
    out = capsys.readouterr().out
    assert '"ruleId": "KL005"' in out and "fma.rn.f32" in out


@pytest.mark.parametrize("ptx,mode,verdict", [
    ("wmma_f16.sm_90.ptx", "cube_fp16in_fp32out", "complies"),
    ("sgemm_naive.sm_90.ptx", "force_fp16", "violates"),
    ("mma_bf16.sm_90.ptx", "mixed_bfloat16", "complies"),
])
def test_corpus_verdicts(corpus, ptx, mode, verdict):
    r = _report(corpus, ptx)
    assert precision.check([r], mode)["kernels"][r.name] == verdict


def test_cli_precision_json_counts_checked_instructions(corpus, capsys):
    from analyzer.cli import main

    assert main([str(corpus / "ptx" / "sgemm_naive.sm_90.ptx"), "--precision-mode", "force_fp32",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True
    assert doc["precision"] == {"mode": "force_fp32", "checked": 5, "violations": [],
                                "kernels": {"sgemm_naive": "complies"}}
    assert main([str(corpus / "ptx" / "sgemm_naive.sm_90.ptx"), "--precision-mode", "force_fp16",
                 "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["precision"]["checked"] == 5
    assert [v["line"] for v in doc["precision"]["violations"]] == [76, 80, 84, 89, 112]   # the fma.rn.f32 lines of the file


@pytest.mark.parametrize("mode", ["", "nope", "origin", "must_keep_origin_dtype"])
def test_cli_precision_mode_that_cannot_be_checked_is_an_error(corpus, capsys, mode):
    from analyzer.cli import main

    assert main([str(corpus / "ptx" / "sgemm_naive.sm_90.ptx"), "--precision-mode", mode]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert ("original dtype" in err) == mode.endswith(("origin", "origin_dtype"))
