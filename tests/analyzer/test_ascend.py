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
