"""Ascend-like counts from the scalar program stepped on every core (issue #15, "estimates that say
what they are"): an Ascend-like kernel's loop bounds are computed by its scalar program from
``block_idx`` and immediates, so the analyzer steps that program (``sim.ascend.scalar``, the
engine's own scalar closures) for each core of the launch and reports exact counts.

Before: the bundled GEMM had 4 of its 5 loops assumed 16 iterations and "≈ 134,912 executed per
core", while a run executes 1,716 instructions on its 24 cores."""

from __future__ import annotations

import json

import pytest

import isa
from analyzer.report import analyze_module
from isa.generate.conv import ConvConfig, conv2d_kernel
from isa.generate.fused import AttentionConfig, EpilogueConfig, flash_attention_kernel, gemm_epilogue_kernel
from isa.generate.gemm import GemmConfig, gemm_kernel
from isa.generate.vector import ReduceConfig, SoftmaxConfig, reduce_kernel, softmax_kernel
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module
from sim.ascend.scalar import step_scalar
from tests.conftest import EXAMPLES

MACHINE = load_machine("davinci-a2")
BUNDLED = sorted(p.name for p in (EXAMPLES / "ascend").glob("*.asm"))
GENERATED = {
    "gemm_f16_default": lambda: gemm_kernel(GemmConfig()),
    "gemm_f16_ragged": lambda: gemm_kernel(GemmConfig(m=200, n=136, k=100, l1_tile=(64, 64, 64),
                                                      l0_tile=(64, 64, 32))),
    "gemm_s8_requant": lambda: gemm_kernel(GemmConfig(dtype="s8", m=100, n=96, k=160, layout_b="col",
                                                      l1_tile=(64, 64, 128), l0_tile=(64, 64, 64),
                                                      epilogue="requant", scale=2.0 ** -12)),
    "gemm_bf16_one_stage": lambda: gemm_kernel(GemmConfig(dtype="bf16", m=512, n=384, k=512, stages=1)),
    "reduce_sum_f16": lambda: reduce_kernel(ReduceConfig("sum", "f16", 300, 1000)),
    "reduce_max_f32": lambda: reduce_kernel(ReduceConfig("max", "f32", 7, 2000)),
    "softmax_f32": lambda: softmax_kernel(SoftmaxConfig("f32", 64, 500)),
    "softmax_f16": lambda: softmax_kernel(SoftmaxConfig("f16", 33, 1024)),
    "gemm_epilogue_mix": lambda: gemm_epilogue_kernel(EpilogueConfig()),
    "flash_attention_mix": lambda: flash_attention_kernel(AttentionConfig()),
    "conv2d": lambda: conv2d_kernel(ConvConfig()),
}


def _module(which: str):
    if which in GENERATED:
        return isa.loads(GENERATED[which](), f"{which}.asm")
    return isa.load(EXAMPLES / "ascend" / which)


@pytest.mark.parametrize("which", BUNDLED + sorted(GENERATED))
def test_stepped_counts_equal_the_runs_per_instruction_counts(which):
    """Every bundled and generated kernel: the analyzer's counts are exact and equal, instruction by
    instruction, what a run (``kernlens run``, timing-only) executes on all its cores."""
    module = _module(which)
    run = run_module(module, MACHINE, functional=False)
    assert not run.reports
    reports = analyze_module(module)
    assert sum(sum(run.launch.pc_counts[r.name]) for r in reports) == run.launch.instructions_executed
    for r in reports:
        got = run.launch.pc_counts[r.name]
        assert r.measured == {k: v for k, v in enumerate(got)}, r.name
        assert r.measured_taken == dict(enumerate(run.launch.taken_counts[r.name]))
        dyn = r.dynamic()
        assert (dyn["basis"], dyn["exact"], dyn["guesses"]) == ("exact", True, [])
        assert dyn["instructions"] == {"value": sum(got), "exact": True}
        assert dyn["per"] == "launch" and dyn["cores"] == len(run.launch.events) // (
            3 if run.launch.vector_blocks else 1) * (2 if r.core_type == "vector" and run.launch.vector_blocks else 1)
        assert all(li.iterations is not None and li.exact for li in r.loops)


def test_the_bundled_gemm_before_and_after(capsys):
    from analyzer.cli import main

    path = EXAMPLES / "ascend" / "gemm_f16_256x192x320.asm"
    (r,) = analyze_module(isa.load(path))
    # the static estimate alone (what the report said before): 4 loops assumed 16 iterations
    assert sum(1 for li in r.estimate.loops.values() if li.iterations is None) == 4
    assert main([str(path), "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    dyn = k["dynamic"]
    assert (dyn["instructions"], dyn["cores"], dyn["core_type"]) == ({"value": 1716, "exact": True}, 24, "cube")
    assert dyn["threads"] is None and dyn["totals"] == "per launch: 24 cube cores, one program each"
    assert dyn["mix"]["CUBE"] == 20 and dyn["mix"]["FIXPIPE"] == 4 and all(dyn["mix_exact"].values())
    st = dyn["stepped"]
    assert (st["block_idx"], st["cores"], st["machine"], st["steps"]) == ("0-23", 24, "davinci-a2", 1716)
    # cores 0-3 compute one output tile each, the 20 others find none (their prologue and exit only)
    assert st["per_core_instructions"] == [349] * 4 + [16] * 20
    assert dyn["notes"][0].startswith("counts exact: the scalar program stepped on the 24 cube cores of a "
                                      "davinci-a2 launch (block_idx 0-23")
    loops = {li["lines"][0]: li for li in k["loops"]}
    # 4 blocks of 128x128 on 24 cores: cores 0-3 take one tile each, 20 cores none
    assert loops[15]["iterations"] == round(4 / 24, 3) and loops[15]["stepped"] is True
    assert loops[38]["iterations"] == 3                              # K = 320 in steps of 128
    assert loops[58]["iterations"] == round(5 / 3, 3)                # 128, 128, 64 in steps of 64: 2, 2, 1
    assert loops[90].get("entered") is False and loops[101].get("entered") is False   # no K tail of 16
    assert all(li["exact"] for li in k["loops"])
    assert main([str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "instructions 134 static, 1716 executed per launch" in text and "≈" not in text
    assert "L15-140 depth 1: 0.167 iterations (average per entry)" in text
    assert "L90-98 depth 4: not entered" in text and "assumed" not in text


LOADED = """\
.arch davinci-a2
.kernel k .vector (.gm .f32 %x[64])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_S, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_S, EVENT_ID0
    ld.s32 %s1, ub[0]
    add %s2, %s1, 1
    mov %s0, 0
loop:
    add %s0, %s0, 1
    cmp.lt %p0, %s0, %s2
    @%p0 bra loop
    ret
}
"""


def test_a_branch_on_loaded_data_keeps_the_estimate_and_says_why():
    (r,) = analyze_module(isa.loads(LOADED, "k.asm"))
    dyn = r.dynamic()
    assert r.measured is None and dyn["basis"] == "estimate" and dyn["exact"] is False
    g = dyn["guesses"][0]
    assert g["what"] == "the scalar program" and g["line"] == 13 and g["exact_with"] == []
    assert g["assumed"] == "not stepped: the branch at line 13 depends on data (a value loaded from UB at line 7)"
    assert dyn["notes"][0].startswith("counts not stepped exactly: the branch at line 13 depends on data")
    # the loop itself stays a labelled guess
    assert any(x["what"] == "loop iterations" and x["line"] == 11 for x in dyn["guesses"])


def test_a_loaded_value_that_decides_no_branch_does_not_stop_the_stepping():
    src = LOADED.replace("cmp.lt %p0, %s0, %s2", "cmp.lt %p0, %s0, 5")
    (r,) = analyze_module(isa.loads(src, "k.asm"))
    assert r.dynamic()["basis"] == "exact"
    assert [li.iterations for li in r.loops] == [5]


SPIN = """\
.arch davinci-a2
.kernel spin .vector (.gm .f16 %x[4096])
{
    mov %s0, 0
loop:
    add %s0, %s0, 2
    cmp.ne %p0, %s0, 7
    @%p0 bra loop
    ret
}
"""


def test_an_endless_scalar_loop_is_bounded():
    m = isa.loads(SPIN, "spin.asm")
    got = step_scalar(m, m.kernels[0], MACHINE, limit=5000)
    assert not got.exact and got.line == 7           # in the loop at lines 6-8
    assert got.reason == "the scalar program needs more than 5,000 steps (all cores together; stopped on core 0)"
    (r,) = analyze_module(m)                 # the default limit: also ends, with the estimate
    dyn = r.dynamic()
    assert dyn["basis"] == "estimate" and dyn["guesses"][0]["exact_with"] == ["a larger step limit"]


PARAM = """\
.arch davinci-a2
.kernel k .vector (.gm .f16 %x[4096], .s32 %n)
{
    mov %s0, 0
loop:
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    add %s0, %s0, block_num
    cmp.lt %p0, %s0, %n
    @%p0 bra loop
    ret
}
"""


def test_a_scalar_parameter_without_a_value_says_which_param_makes_it_exact(capsys):
    from analyzer.cli import main

    (r,) = analyze_module(isa.loads(PARAM, "k.asm"))
    g = r.dynamic()["guesses"][0]
    assert (g["what"], g["exact_with"]) == ("the scalar program", ["--param %n"])
    (r,) = analyze_module(isa.loads(PARAM, "k.asm"), params={"%n": 200})
    dyn = r.dynamic()
    # 48 vector cores stepping by block_num = 48 up to 200: 5 iterations each (48, 96, 144, 192, 240)
    assert dyn["basis"] == "exact" and [li.iterations for li in r.loops] == [5]
    assert dyn["mix"]["MTE2"] == 48 * 5


def test_kernlens_run_counts_agree_with_the_steps_on_a_mix_kernel():
    """A mix kernel's two code segments: cube cores and twice as many vector cores (subblock_idx 0, 1)."""
    module = _module("flash_attention_mix")
    aic, aiv = module.kernels
    a, v = step_scalar(module, aic, MACHINE), step_scalar(module, aiv, MACHINE)
    assert (a.cores, a.core_type, v.cores, v.core_type) == (24, "cube", 48, "vector")
    assert a.block_idx == "0-23" and v.block_idx == "0-47"
    run = run_module(module, MACHINE, functional=False)
    assert (a.counts, v.counts) == (run.launch.pc_counts[aic.name], run.launch.pc_counts[aiv.name])
    assert sum(a.per_core) + sum(v.per_core) == run.launch.instructions_executed


def test_the_text_report_says_why_the_counts_are_estimates(tmp_path, capsys):
    from analyzer.cli import main

    f = tmp_path / "k.asm"
    f.write_text(PARAM)
    assert main([str(f)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("estimate rests on scalar program not stepped: scalar parameter(s) %n have no value (line 2); "
            "1 loop(s) assumed 16 iterations (line 6); exact with --param %n loops") in text
    assert "only a run counts" not in text                # --param %n decides them all
    assert main([str(f), "--param", "%n=200"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "1056 executed per launch" in text     # 48 cores x (mov + 5 x 4 + ret) and "estimate rests on" not in text


@pytest.mark.parametrize("which", BUNDLED + sorted(GENERATED))
def test_stepped_work_is_what_the_run_moves_and_the_meta_says(which):
    """Work and bytes from each instruction's operands as stepped: GM bytes equal the run's GM
    traffic (``kernlens run``'s gm bytes), a GEMM's FLOPs (integer ops for s8) 2 x m x n x k of its
    ``.meta``; before, every instruction whose counts sit in registers counted 0."""
    from sim.ascend.check import read_meta
    from sim.ascend.timing import gm_traffic

    module = _module(which)
    run = run_module(module, MACHINE, functional=False)
    docs = [r.to_json() for r in analyze_module(module)]
    assert all(d["flops"]["exact"] and d["bytes"]["exact"] for d in docs)
    assert all(d["flops"]["basis"].startswith("stepped") for d in docs)
    assert sum(d["bytes"]["global"] for d in docs) == gm_traffic(run.launch.events)
    meta = read_meta(module) or {}
    if meta.get("op") == "gemm":
        (d,) = docs
        assert d["flops"]["total"] + d["flops"]["int_ops"] == 2 * meta["m"] * meta["n"] * meta["k"]


def test_vector_work_applies_the_mask():
    """The bundled reduction sums 300 rows of 1000 f16: one op per element summed (the tables'
    vcadd), 300,000; counting every lane of each repeat (the mask not applied) gave 307,200."""
    (r,) = analyze_module(isa.load(EXAMPLES / "ascend" / "reduce_sum_f16.asm"))
    d = r.to_json()
    assert (d["flops"]["total"], d["flops"]["exact"]) == (300 * 1000, True)
    assert d["bytes"]["global"] == 300 * 1000 * 2 + 300 * 2 == d["work_from_meta"]["global_bytes"]


def test_without_steps_the_work_comes_from_the_meta_shapes(tmp_path, capsys):
    from analyzer.cli import main

    f = tmp_path / "k.asm"
    f.write_text(PARAM.replace(".arch davinci-a2\n", ".arch davinci-a2\n.meta op=reduce reduce=sum dtype=f16 rows=2 "
                                                    "cols=2048\n"))
    assert main([str(f), "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    assert k["flops"]["basis"] == ".meta shapes" and k["flops"]["total"] == 2 * 2047
    assert k["bytes"]["global"] == 2 * 2048 * 2 + 2 * 2
    assert main([str(f)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "FLOPs 4094 per launch (rows x (cols - 1) (.meta))" in text and "global bytes ≥ 8196 per launch" in text


def test_kernlens_run_reports_the_measured_counts_by_class(capsys):
    """After a run the counts are the run's own (basis 'measured'), per code segment of a mix kernel;
    they equal the stepped ones the analyzer reports."""
    from kernlens.cli import main

    path = EXAMPLES / "ascend" / "gemm_f16_256x192x320.asm"
    assert main(["run", str(path), "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["measured_counts"].values()
    assert (m["basis"], m["cores"], m["instructions"]) == ("measured", 24, 1716)
    assert m["by_class"] == {"SCALAR": 1132, "SYNC": 376, "MTE1": 160, "MTE2": 24, "CUBE": 20, "FIXPIPE": 4}
    (r,) = analyze_module(isa.load(path))
    assert {c: v for c, v in r.dynamic()["mix"].items() if "_" not in c} == m["by_class"]
    assert main(["run", str(path)]) == 0
    assert ("by class (measured, 24 cores): SCALAR 1,132, SYNC 376, MTE1 160, MTE2 24, CUBE 20, FIXPIPE 4"
            in capsys.readouterr().out)
