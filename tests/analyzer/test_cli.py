"""validate-kernel: exit codes, text/JSON/SARIF output, failure messages, --cfg, bad input."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main

PTX = "sgemm_naive.sm_90.ptx"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_passing_expectations_exit_0(corpus, capsys):
    code, out, err = run(capsys, corpus / "ptx" / PTX, "--expect", "FP32_FMA>=5", "--expect", "fma.rn.f32 == 5",
                         "--forbid", "TENSOR_CORE")
    assert code == 0, err
    assert "FP32_FMA>=5" in out and "PASS" in out and "FAIL" not in out


def test_failure_names_kernel_expectation_found_and_nearest_lines(corpus, capsys):
    code, out, _ = run(capsys, corpus / "ptx" / PTX, "--expect", "TENSOR_CORE>=1")
    assert code == 1
    assert "kernel 'sgemm_naive': expected TENSOR_CORE >= 1, found 0" in out
    assert f"{PTX}:76: fma.rn.f32" in out          # nearest: the FP32 FMAs, with line numbers


def test_forbid_failure_lists_the_offending_instructions(corpus, capsys):
    code, out, _ = run(capsys, corpus / "ptx" / "hgemm_half2.sm_90.ptx", "--forbid", "FP16_FMA")
    assert code == 1
    assert "expected FP16_FMA == 0, found 5" in out and "fma.rn.f16x2" in out


def test_json_has_the_listed_keys(corpus, capsys):
    code, out, _ = run(capsys, corpus / "ptx" / PTX, "--format", "json", "--param", "K=2048", "--param", "M=2048",
                       "--param", "N=2048", "--grid", "64,256,1", "--block", "32,8,1", "--expect", "ld.global>=10")
    assert code == 0
    doc = json.loads(out)
    k = doc["kernels"][0]
    for key in ("name", "opcodes", "classes", "dynamic", "flops", "bytes", "intensity", "registers", "shared_bytes",
                "loops", "expectations"):
        assert key in k
    assert k["name"] == "sgemm_naive"
    assert k["opcodes"]["ld.global.nc.f32"] == 10 and k["opcodes"]["fma.rn.f32"] == 5
    assert k["classes"]["FP32_FMA"] == 5
    assert k["flops"]["total"] == 2 * 2048 ** 3
    assert k["dynamic"]["flops"]["exact"] is False and "value" in k["dynamic"]["instructions"]
    assert k["loops"][0]["iterations"] == 512 and k["loops"][0]["exact"] is True
    assert k["expectations"] == [{"expectation": "ld.global>=10", "name": "ld.global", "op": ">=", "count": 10,
                                  "found": 10, "result": "pass", "level": "ptx", "lines": k["expectations"][0]["lines"],
                                  "nearest": []}]
    assert len(k["expectations"][0]["lines"]) == 10
    assert k["registers"]["declared"] == {"b32": 32, "b64": 34, "f32": 30, "pred": 9}


def test_sarif_has_stable_rules_and_regions(corpus, capsys):
    code, out, _ = run(capsys, corpus / "ptx" / PTX, "--format", "sarif", "--expect", "TENSOR_CORE>=1",
                       "--forbid", "ld.global.nc")
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    assert [r["id"] for r in run0["tool"]["driver"]["rules"]] == ["KL001", "KL002", "KL003", "KL004", "KL005"]
    rules = {r["ruleId"] for r in run0["results"]}
    assert {"KL001", "KL002"} <= rules
    forbidden = next(r for r in run0["results"] if r["ruleId"] == "KL002")
    loc = forbidden["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith(PTX) and loc["region"]["startLine"] == 74
    assert any(r["ruleId"] == "KL004" for r in run0["results"])   # K unknown: trip count note


def test_cfg_writes_dot(corpus, capsys, tmp_path):
    out_dot = tmp_path / "cfg.dot"
    code, _, _ = run(capsys, corpus / "ptx" / PTX, "--cfg", out_dot, "--param", "K=8")
    assert code == 0
    dot = out_dot.read_text()
    assert dot.startswith('digraph "sgemm_naive"')
    assert 'B4 -> B4 [label="taken", style=dashed];' in dot       # the unrolled K loop
    assert 'B0 -> B9 [label="taken"];' in dot                     # the bounds check to the exit
    assert "executed 2x per thread" in dot                        # K=8: two unrolled iterations


@pytest.mark.parametrize("args,message", [
    (["--expect", "TENSOR_CORE>>1"], "bad expectation"),
    (["--expect", "TENSR_CORE>=1"], "unknown instruction class 'TENSR_CORE' (did you mean TENSOR_CORE?)"),
    (["--param", "Q=1"], "no analysed kernel has a parameter"),
    (["--param", "K"], "expected NAME=VALUE"),
    (["--kernel", "nope"], "no kernel named 'nope'"),
    (["--grid", "4,4"], "--grid and --block go together"),
    (["--grid", "0,0,0", "--block", "32,1,1"], "bad --grid '0,0,0'"),
    (["--param", "=3"], "bad --param '=3'"),
    (["--param", "K=abc"], "'abc' is not an integer"),
    (["--machine", "nope"], "no machine model 'nope'\n  expected one of: davinci-a2, h200"),
    (["--precision-mode", "nope"], "unknown precision mode 'nope'"),
    (["--expect", "garbage"], "bad expectation 'garbage'"),
])
def test_bad_input_exits_2(corpus, capsys, args, message):
    code, out, err = run(capsys, corpus / "ptx" / PTX, *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_missing_file_and_usage_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path / "missing.ptx")
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as exc:
        main(["--format", "yaml", "x.ptx"])
    assert exc.value.code == 2
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { fmaa.rn.f32 %f1, %f2, %f3, %f4; }\n")
    code, _, err = run(capsys, bad)
    assert code == 2 and "unknown opcode 'fmaa'" in err and ":4:" in err


def test_unreadable_or_unparsable_files_exit_2_with_a_location(corpus, capsys, tmp_path):
    code, out, err = run(capsys, tmp_path)
    assert (code, out) == (2, "") and err == f"{tmp_path}: error: is a directory, not a file: {tmp_path}\n"
    asm = tmp_path / "bad.asm"
    asm.write_text("kernel x\n  foo bar,,\n")
    code, _, err = run(capsys, asm)
    assert code == 2 and err.startswith(f"{asm}:1:1: error:") and "Traceback" not in err
    code, _, err = run(capsys, corpus / "ptx" / PTX, "--cfg", str(tmp_path))
    assert code == 2 and err == f"{tmp_path}: error: cannot write {tmp_path}: Is a directory\n"


def test_an_analyzer_bug_is_one_line_not_a_traceback(corpus, capsys, monkeypatch):
    import analyzer.report

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(analyzer.report, "analyze_function", broken)
    code, out, err = run(capsys, corpus / "ptx" / PTX)
    assert (code, out, err) == (2, "", "validate-kernel: internal error: ZeroDivisionError: division by zero\n")


def test_kernlens_analyze_subcommand(corpus, capsys):
    from kernlens.cli import main as kmain

    code = kmain(["analyze", str(corpus / "ptx" / PTX), "--format", "json", "--expect", "bar.sync==0"])
    out, _ = capsys.readouterr()
    assert code == 0 and json.loads(out)["kernels"][0]["expectations"][0]["result"] == "pass"


def test_every_corpus_file_in_one_run(corpus, manifest, capsys):
    files = sorted((corpus / "ptx").glob("*.ptx"))
    code, out, err = run(capsys, *files, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    seen = {(k["file"].rsplit("/", 1)[-1], k["name"]) for k in doc["kernels"]}
    for e in manifest["entries"]:
        for rel in e["ptx"].values():
            assert (rel.rsplit("/", 1)[-1], e["entry"]) in seen
    wgmma = next(k for k in doc["kernels"] if k["file"].endswith("wgmma_f16.sm_90a.ptx"))
    entry = next(e for e in manifest["entries"] if e["entry"] == wgmma["name"])
    assert wgmma["classes"]["TENSOR_CORE"] == entry["static_counts"]["sm_90"]["wgmma"] == 5
    assert wgmma["shared_bytes"] > 0


def test_outputs_that_cannot_be_written_are_located_errors(tmp_path, capsys):
    """--plot, --cfg and -o to a folder that does not exist: ``PATH: error: cannot write ...`` (exit 2), as
    kernlens run's --trace and --out say it; before, the message had no ``file:`` prefix."""
    from tests.conftest import EXAMPLES
    from kernlens.cli import main as kernlens

    ptx = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
    for opt, name in (("--plot", "r.svg"), ("--cfg", "g.dot"), ("-o", "out.json")):
        bad = str(tmp_path / "no" / name)
        extra = ("--format", "json") if opt == "-o" else ()
        code, _, err = run(capsys, ptx, opt, bad, *extra)
        assert code == 2 and err.startswith(f"{bad}: error: cannot write {bad}: "), (opt, err)
    bad = str(tmp_path / "no" / "t.svg")
    code = kernlens(["run", str(ptx), "--launch", f"{EXAMPLES / 'manifest.json'}#sgemm_tiled", "--timing", "h200",
                     "--plot", bad])
    assert code == 2 and capsys.readouterr().err.startswith(f"{bad}: error: cannot write {bad}: ")


def test_an_unknown_param_lists_the_parameters(capsys):
    """``--param nope=3`` said only that no kernel has it; now it names the parameters to choose from."""
    from tests.conftest import EXAMPLES

    code, _, err = run(capsys, EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx", "--param", "nope=3")
    assert code == 2
    assert err.startswith("error: --param nope: no analysed kernel has a parameter of that name (parameters: "
                          "sgemm_tiled_param_0 (A), sgemm_tiled_param_1 (B), sgemm_tiled_param_2 (C), ")
    assert "sgemm_tiled_param_5 (K))" in err


def test_the_static_roofline_row_says_it_is_a_model(capsys):
    """The text's roofline row printed an attainable rate with no word on its basis (global bytes as DRAM)."""
    from tests.conftest import EXAMPLES

    code, out, _ = run(capsys, EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx", "--param", "K=64", "--grid", "2,3,1",
                       "--block", "32,1,1")
    row = " ".join(next(l for l in out.splitlines() if l.startswith("roofline")).split())
    assert code == 0 and row.startswith("roofline memory-bound on h200: attainable 30.72 TFLOP/s of peak 645.56")
    assert "(a model: global bytes taken as DRAM bytes, no caches)" in " ".join(out.split())
