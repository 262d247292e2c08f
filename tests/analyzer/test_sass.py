"""validate-kernel --sass, 'sass:' expectations and k.sass in pytest, on the project's examples.

Tests that compile skip without ptxas + nvdisasm; the 'tools absent' behaviour is checked by
pointing kernlens at tools that do not exist.
"""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from tests.conftest import EXAMPLES

WMMA = EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx"
SGEMM = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_sass_section_side_by_side(sass_tools, capsys):
    code, out, err = run(capsys, WMMA, "--sass", "--format", "json", "--expect", "sass:HMMA>=1",
                         "--expect", "sass:TENSOR_CORE>=1", "--expect", "TENSOR_CORE>=1")
    assert code == 0, err
    k = json.loads(out)["kernels"][0]
    s = k["sass"]
    assert s["available"] and s["registers"] == 32 and s["registers_allocated"] == 32
    assert (s["spill_stores"], s["spill_loads"], s["shared_bytes"]) == (0, 0, 0)
    # one wmma.mma m16n16k16 is two HMMA.16816 on sm_90
    assert s["classes"]["TENSOR_CORE"] == 2 * k["classes"]["TENSOR_CORE"]
    assert s["opcodes"]["HMMA.16816.F32"] == s["classes"]["HMMA"]
    sass_exp = [e for e in k["expectations"] if e["level"] == "sass"]
    assert len(sass_exp) == 2 and all(e["result"] == "pass" and all(n > 0 for n in e["lines"]) for e in sass_exp)


def test_text_report_and_a_failing_sass_expectation(sass_tools, capsys):
    code, out, _ = run(capsys, SGEMM, "--sass", "--expect", "sass:HGMMA>=1")
    assert code == 1
    assert "SASS static" in out and "SASS opcodes" in out and "registers (allocated" in out
    assert "expected sass:HGMMA >= 1, found 0" in out


def _ptx_line(n: int) -> str:
    return SGEMM.read_text().splitlines()[n - 1].strip()


def test_a_failing_sass_expectation_names_the_nearest_sass_instructions(sass_tools, capsys):
    # no HGMMA in a scalar SGEMM: the nearest are its FFMAs, each with the PTX line it came from
    code, out, _ = run(capsys, SGEMM, "--expect", "sass:HGMMA>=1", "--format", "json")
    assert code == 1
    (e,) = json.loads(out)["kernels"][0]["expectations"]
    assert e["result"] == "fail" and e["level"] == "sass" and len(e["nearest"]) == 3
    for n in e["nearest"]:
        assert n["instruction"] == "FFMA" and _ptx_line(n["line"]).startswith("fma.rn.f32")
        assert n["text"].startswith(f"SASS {n['sass_index']}: FFMA ") and f"PTX line {n['line']}: fma.rn.f32" in n["text"]
        assert "source sgemm_tiled.cu:" in n["text"]
    code, out, _ = run(capsys, SGEMM, "--expect", "sass:HGMMA>=1")
    assert "nearest instructions:" in out and f"PTX line {e['nearest'][0]['line']}: fma.rn.f32" in out
    # an opcode with a width none has: the LDS of other widths
    code, out, _ = run(capsys, SGEMM, "--expect", "sass:LDS.U8>=1", "--format", "json")
    (e,) = json.loads(out)["kernels"][0]["expectations"]
    assert e["nearest"] and all(n["instruction"].startswith("LDS") for n in e["nearest"])
    assert all(_ptx_line(n["line"]).startswith("ld.shared") for n in e["nearest"])


def test_sarif_has_results_for_failing_sass_expectations(sass_tools, capsys):
    code, out, _ = run(capsys, SGEMM, "--format", "sarif", "--expect", "sass:HGMMA>=1", "--expect", "sass:LDS.128>=1",
                       "--forbid", "sass:LDS.128")
    assert code == 1
    run_ = json.loads(out)["runs"][0]
    assert {"KL001", "KL002"} <= {r["id"] for r in run_["tool"]["driver"]["rules"]}
    by = {r["properties"]["expectation"]: r for r in run_["results"] if r["ruleId"] in ("KL001", "KL002")}
    assert set(by) == {"sass:HGMMA>=1", "sass:LDS.128==0"}          # the passing one gives no result
    miss, forbidden = by["sass:HGMMA>=1"], by["sass:LDS.128==0"]
    assert miss["ruleId"] == "KL001" and miss["properties"]["level"] == "sass"
    assert miss["properties"]["instructions"] == "nearest"
    line = miss["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert _ptx_line(line).startswith("fma.rn.f32")                  # the PTX line of the nearest FFMA
    assert len(miss["relatedLocations"]) == 2 and all(
        r["message"]["text"].startswith("SASS ") and "FFMA" in r["message"]["text"] for r in miss["relatedLocations"])
    assert forbidden["ruleId"] == "KL002" and forbidden["properties"]["instructions"] == "matching"
    lines = [forbidden["locations"][0]["physicalLocation"]["region"]["startLine"]] + \
        [r["physicalLocation"]["region"]["startLine"] for r in forbidden["relatedLocations"]]
    assert lines and all(_ptx_line(n).startswith("ld.shared.f32") for n in lines)   # what ptxas merged into LDS.128


def test_unknown_sass_class_is_bad_input(sass_tools, capsys):
    code, _, err = run(capsys, SGEMM, "--expect", "sass:LOAD_SHARD>=1")
    assert code == 2 and "unknown SASS instruction class 'LOAD_SHARD'" in err and "LOAD_SHARED" in err


def test_without_tools_sass_is_a_note_and_the_rest_works(no_sass_tools, capsys):
    code, out, err = run(capsys, SGEMM, "--sass", "--format", "json", "--expect", "LOAD_SHARED>=1")
    assert code == 0, err
    k = json.loads(out)["kernels"][0]
    assert k["sass"]["available"] is False and "ptxas" in k["sass"]["note"]
    assert k["classes"]["LOAD_SHARED"] >= 1
    code, out, _ = run(capsys, SGEMM, "--sass")
    assert code == 0 and "note: SASS: SASS needs ptxas" in out
    code, _, err = run(capsys, SGEMM, "--expect", "sass:HGMMA>=1")
    assert code == 2 and "needs the kernel's SASS" in err and "ptxas" in err


def test_kernel_check_sass(sass_tools):
    from analyzer.assertions import KernelAssertionError, KernelCheck

    k = KernelCheck.load(WMMA)
    k.sass.uses("HMMA", at_least=1).uses("TENSOR_CORE", exactly=2 * k.count("TENSOR_CORE")).no_spills()
    k.sass.registers_at_most(32).never_uses("HGMMA")
    with pytest.raises(KernelAssertionError) as e:
        k.sass.uses("HGMMA")
    assert "SASS: expected HGMMA >= 1, found 0" in str(e.value)
    assert "nearest instructions:" in str(e.value) and "HMMA.16816.F32" in str(e.value)   # the warp-level MMA
    with pytest.raises(KernelAssertionError) as e:
        k.sass.never_uses("HMMA")
    assert "HMMA.16816.F32" in str(e.value) and "PTX line" in str(e.value)


def test_kernel_check_sass_skips_without_tools(no_sass_tools):
    from analyzer.assertions import KernelCheck

    k = KernelCheck.load(SGEMM)
    with pytest.raises(pytest.skip.Exception) as e:
        k.sass.uses("LDS")
    assert "ptxas" in str(e.value)


def test_kernlens_run_sass_costs_the_merged_loads(sass_tools, capsys):
    from kernlens.cli import main as kmain

    spec = f"{EXAMPLES / 'manifest.json'}#sgemm_tiled"
    assert kmain(["run", str(SGEMM), "--launch", spec, "--json", "--sass"]) == 0
    sass = json.loads(capsys.readouterr().out)["stats"]
    assert kmain(["run", str(SGEMM), "--launch", spec, "--json"]) == 0
    ptx = json.loads(capsys.readouterr().out)["stats"]
    ncu = json.loads((EXAMPLES / "h200" / "ncu_metrics.json").read_text())["kernels"]["sgemm_tiled"]
    assert sass["shared_load_wavefronts"] == ncu["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 6912
    assert ptx["shared_load_wavefronts"] == 9216          # the PTX's 16 scalar loads per tile


def test_kernlens_run_sass_without_tools_notes_it(no_sass_tools, capsys):
    from kernlens.cli import main as kmain

    assert kmain(["run", str(SGEMM), "--launch", f"{EXAMPLES / 'manifest.json'}#sgemm_tiled", "--sass"]) == 0
    assert "note: SASS needs ptxas" in capsys.readouterr().err


def test_text_opcode_tables_show_the_25_most_frequent_and_how_many_more(sass_tools, capsys):
    code, out, _ = run(capsys, WMMA, "--sass", "--format", "json")
    k = json.loads(out)["kernels"][0]
    ptx, sass = k["opcodes"], k["sass"]["opcodes"]
    code, text, _ = run(capsys, WMMA, "--sass")
    ptx_part, sass_part = text.split("\nopcodes")[1].split("SASS opcodes")

    def rows(part):
        return [[c.strip() for c in line.split("│")[1:3]] for line in part.splitlines() if line.startswith("│")]

    top = sorted(sass.items(), key=lambda kv: (-kv[1], kv[0]))
    got = rows(sass_part.split("expectations")[0])
    assert got[:25] == [[n, str(c)] for n, c in top[:25]]
    assert len(sass) > 25 and got[25] == [f"... {len(sass) - 25} more", ""]
    assert len(ptx) <= 25 and rows(ptx_part) == [[n, str(c)] for n, c in sorted(ptx.items(), key=lambda kv: (-kv[1], kv[0]))]


def test_sass_of_a_kernel_with_calls_through_registers(sass_tools, capsys):
    # its listing has relocated code addresses (32@lo((k + .L_x_0@srel))) and RET.ABS.NODEC R20 0x0
    code, out, err = run(capsys, EXAMPLES / "ptx" / "calls" / "reduce_calls_G.sm_90.ptx", "--sass",
                         "--expect", "sass:CALL>=1", "--format", "json")
    assert code == 0, err
    s = json.loads(out)["kernels"][0]["sass"]
    assert s["available"] and s["opcodes"]["CALL.ABS.NOINC"] >= 1 and s["classes"]["CALL"] >= 1
