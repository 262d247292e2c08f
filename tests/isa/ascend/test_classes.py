"""Ascend-like instruction classes work in validate-kernel expectations and show in its table."""

from __future__ import annotations

from analyzer.cli import main
from isa.ascend.semantics import CLASSES
from tests.conftest import EXAMPLES

GEMM_S8 = str(EXAMPLES / "ascend" / "gemm_s8_requant.asm")


def test_every_class_describe_gives_is_listed():
    import isa
    from isa.semantics import describe

    seen = set()
    for path in sorted((EXAMPLES / "ascend").glob("*.asm")):
        for k in isa.load(path).kernels:
            for ins in k.instructions:
                seen |= describe(ins, "ascend").classes
    assert seen and seen <= CLASSES
    assert {"CUBE", "CUBE_S8", "MTE1", "MTE2", "FIXPIPE", "VECTOR", "SYNC", "SCALAR"} <= seen


def test_expectations_on_an_int8_cube_kernel(capsys):
    assert main([GEMM_S8, "--expect", "CUBE>=1", "--expect", "CUBE_S8==1", "--expect", "MTE1==6",
                 "--forbid", "CUBE_F16"]) == 0
    out = capsys.readouterr().out
    for cls in ("MTE1", "MTE2", "CUBE_S8", "FIXPIPE"):
        assert f"│ {cls} " in out
    assert main([GEMM_S8, "--expect", "CUBE_F16>=1"]) == 1
    out = capsys.readouterr().out
    assert "expected CUBE_F16 >= 1, found 0" in out and "gemm_s8_requant.asm:111: mad.s8" in out


def test_report_counts_per_core_and_says_which_work_is_unknown_statically(capsys):
    assert main([GEMM_S8, "--format", "json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    (k,) = data["kernels"] if "kernels" in data else [data]
    # the scalar program is stepped on the launch's 24 cube cores (tests/analyzer/test_ascend_steps.py):
    # the mad.s8 on line 111, whose m, k, n sit in registers, is counted with their values
    assert (k["dynamic"]["per"], k["dynamic"]["cores"]) == ("launch", 24)
    assert not [n for n in k["dynamic"]["notes"] if "register operands" in n]
    assert (k["flops"]["int_ops"], k["flops"]["exact"]) == (2 * 100 * 96 * 160, True)
