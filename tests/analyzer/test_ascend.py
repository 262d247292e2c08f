"""The analyzer on an Ascend-like module goes through isa.semantics.describe(instr, 'ascend')."""

from __future__ import annotations

import json

import isa
from analyzer.render import render_json
from analyzer.report import analyze_module
from isa.semantics import describe
from tests.conftest import EXAMPLES

KERNEL = """\
.arch davinci-a2
.kernel add_f16 .vector (.gm .f16 %x[4096], .gm .f16 %y[4096], .s32 %n)
{
    mov %s0, block_idx
loop:
    copy_gm_to_ubuf ub[0], gm[%x+64], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vadds.f16 ub[256], ub[0], -0.5, 1, 1, 1, 8, 8
    cmp.lt %p0, %s0, %n
    @!%p0 bra loop
    ret
}
"""


def test_analyzer_runs_on_ascend_modules():
    m = isa.loads(KERNEL, "k.asm")
    assert m.isa == "ascend"
    (r,) = analyze_module(m)
    assert [describe(i, "ascend") for i in r.instructions] == r.infos
    assert r.opcodes["vadds.f16"] == 1
    assert set(r.cfg.loops) == {1} and r.cfg.max_depth == 1
    doc = json.loads(render_json([r]))
    k = doc["kernels"][0]
    assert k["isa"] == "ascend" and k["name"] == "add_f16"
    assert k["dynamic"]["roofline"] is None                   # no GPU roofline for DaVinci
    assert k["loops"][0]["exact"] is False
    copy = r.infos[1]
    assert k["dynamic"]["bytes"][copy.space]["value"] == copy.bytes * 16   # loop assumed 16 iterations


def test_unknown_machine_is_an_error_for_ascend_too(capsys):
    from analyzer.cli import main

    vadd = str(EXAMPLES / "ascend" / "vadd_f16.asm")
    assert main([vadd, "--machine", "nope"]) == 2
    assert capsys.readouterr().err == "error: no machine model 'nope'\n  expected one of: davinci-a2, h200\n"
    assert main([vadd, "--machine", "davinci-a2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["kernels"][0]["dynamic"]["roofline"] is None


def test_ascend_reports_use_the_meta_shapes_and_omit_ptx_only_fields(capsys):
    """Issue 15: FLOPs and global bytes were 0 for a GEMM that `kernlens run` executes; registers,
    shared and local memory (PTX-only) were printed."""
    from analyzer.cli import main

    path = str(EXAMPLES / "ascend" / "gemm_f16_256x192x320.asm")
    assert main([path, "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    for key in ("registers", "shared_bytes", "shared", "local_bytes", "spills"):
        assert key not in k
    w = k["work_from_meta"]
    assert w["flops"] == 2 * 256 * 192 * 320 == 31_457_280
    assert w["global_bytes"] == (256 * 320 + 320 * 192 + 256 * 192) * 2 == 385_024
    # the scalar program stepped (test_ascend_steps): exact work, the .meta figures beside it
    assert k["flops"]["total"] == 31_457_280 and k["flops"]["basis"].startswith("stepped")
    assert k["flops"]["by_dtype"] == {"f16": 31_457_280}            # was {} beside the total
    # A and B are read once per output tile that needs them: 2x (a lower bound of 385,024 by .meta)
    assert k["bytes"]["global"] == 671_744 and k["bytes"]["by_path"] == {"gm->l1": 573_440, "l0c->gm": 98_304}
    assert abs(k["intensity"] - 31_457_280 / 671_744) < 1e-12
    assert main([path]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "FLOPs 31,457,280 per launch (exact, from the stepped operands; .meta 2 x m x n x k = 31,457,280)" in text
    assert ("global bytes 671,744 per launch moved between GM and the cores (gm->l1 573,440, l0c->gm 98,304; "
            "≥ 385,024 by .meta, each array once)") in text
    assert "registers" not in text and "shared memory" not in text and "local memory" not in text
    # an s8 GEMM counts integer ops; a reduction rows x (cols - 1) adds
    assert main([str(EXAMPLES / "ascend" / "gemm_s8_requant.asm"), "--format", "json"]) == 0
    w = json.loads(capsys.readouterr().out)["kernels"][0]["work_from_meta"]
    assert w["int_ops"] == 2 * 100 * 96 * 160 and w["global_bytes"] == 100 * 160 + 160 * 96 + 100 * 96
    assert main([str(EXAMPLES / "ascend" / "reduce_sum_f16.asm"), "--format", "json"]) == 0
    w = json.loads(capsys.readouterr().out)["kernels"][0]["work_from_meta"]
    assert (w["flops"], w["global_bytes"]) == (300 * 999, 300 * 1000 * 2 + 300 * 2)


def _mix_file(tmp_path):
    from tests.sim.ascend.test_mix import AIC, AIV, PARAMS

    p = PARAMS.format(n=256)
    path = tmp_path / "mix.asm"
    path.write_text(".mix k k_aic k_aiv\n" + AIC.format(params=p, set="ffts_cross_core_sync PIPE_FIX, 2, 0")
                    + AIV.format(params=p, wait="wait_flag_dev 0"))
    return path


def test_a_mix_kernels_expectations_are_checked_once_on_both_segments(tmp_path, capsys):
    from analyzer.cli import main

    path = _mix_file(tmp_path)
    # the cube segment has the CUBE, the vector segment the VECTOR: both hold for the mix kernel
    assert main([str(path), "--expect", "CUBE>=1", "--expect", "VECTOR>=1", "--forbid", "FP32_FMA",
                 "--format", "json"]) == 0
    aic, aiv = json.loads(capsys.readouterr().out)["kernels"]
    assert (aic["name"], aiv["name"], aic["mix"], aiv["mix"]) == ("k_aic", "k_aiv", "k", "k")
    assert aiv["expectations"] == []
    cube, vector, _ = aic["expectations"]
    assert (cube["found"], cube["segments"], cube["result"]) == (1, {"k_aic": 1, "k_aiv": 0}, "pass")
    assert (vector["found"], vector["segments"], vector["result"]) == (1, {"k_aic": 0, "k_aiv": 1}, "pass")
    text = path.read_text().splitlines()
    assert [text[n - 1].split()[0] for n in vector["lines"]] == ["vadds.f32"]       # a line of the vector half
    # a failing one fails once, with the nearest instructions of the segment that has them
    assert main([str(path), "--expect", "VECTOR_F16>=1"]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL mix kernel 'k': expected VECTOR_F16 >= 1, found 0 (k_aic 0, k_aiv 0)") == 1
    assert "nearest instructions in k_aiv:" in out and "vadds.f32 ub[512]" in out
    assert main([str(path), "--forbid", "MTE3", "--format", "sarif"]) == 1
    (res,) = [r for r in json.loads(capsys.readouterr().out)["runs"][0]["results"] if r["ruleId"] == "KL002"]
    line = res["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert res["properties"]["kernel"] == "k" and text[line - 1].split()[0] == "copy_ubuf_to_gm"


def test_an_ascend_loop_with_constant_bounds_is_counted_exactly(capsys):
    """Issue 15 (estimates that say what they are): the Ascend-like ``cmp.lt %p, %kk, 320`` exit test
    was "not a simple compare", so the GEMM's K loop (kk = 0, 128, 256 < 320) was assumed to run 16
    times; it runs 3. The loops no parameter decides are said to be counted only by a run."""
    from analyzer.cli import main

    path = EXAMPLES / "ascend" / "gemm_f16_256x192x320.asm"
    (r,) = analyze_module(isa.load(path))
    static = r.estimate.loops[next(h for h, li in r.estimate.loops.items() if li.first_line == 38)]
    assert (static.iterations, static.exact) == (3, True)
    assert static.reason == "%kk from 128 step 128 while lt 320"
    assert 38 not in {g["line"] for g in r.estimate.guesses}
    # the loops no parameter decides are counted by stepping the scalar program (test_ascend_steps)
    assert main([str(path), "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    kloop = next(li for li in k["loops"] if li["lines"][0] == 38)
    assert (kloop["iterations"], kloop["exact"], kloop["stepped"]) == (3, True, True)
    assert main([str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "L38-131 depth 2: 3 iterations" in text


def test_ascend_cmp_values_follow_64_bit_integers():
    from analyzer.dataflow import Dataflow
    from isa.cfg import Cfg

    src = KERNEL.replace("mov %s0, block_idx", "mov %s0, 5\n    mov %s1, -3\n    cmp.gt %p1, %s0, %s1")
    m = isa.loads(src, "k.asm")
    fn = m.kernels[0] if hasattr(m, "kernels") else m.functions[0]
    flow = Dataflow(Cfg(fn), {})
    k = next(i for i, ins in enumerate(fn.instructions) if ins.opcode == "cmp" and "gt" in ins.modifiers)
    assert flow.def_value(k) is True
