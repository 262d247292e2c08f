"""Ascend-like kernels that never end (issue #15): a step limit per core (``--max-steps``, default
``sim.ascend.engine.MAX_STEPS``) stops the core, says where it loops (lines, about how many
iterations, the registers its exit test reads) and keeps the results; before, the run went on for
200 M instructions (4.5 min here) and ended in an error with the line only."""

from __future__ import annotations

import isa
from kernlens.cli import main
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module
from tests.conftest import EXAMPLES

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


def test_the_step_limit_says_where_the_core_loops_and_keeps_the_results():
    res = run_module(isa.loads(SPIN, "spin.asm"), load_machine("davinci-a2"), cores=2, functional=True,
                     max_steps=3000)
    assert res.launch.instructions_executed == 2 * 3000
    (r,) = res.launch.reports                          # the same finding on both cores: once
    text = r.render()
    assert "max_steps: stopped after 3,000 instructions (max_steps=3,000)" in text
    assert "in the loop at lines 6-8 (about 1,000 iterations so far)" in text
    assert "its exit test at line 7 (cmp.ne %p0, %s0, 7) reads %s0 = 2000" in text
    assert r.stopped and r.other_cores == [1]


def test_cli_max_steps_for_ascend_runs(tmp_path, capsys):
    f = tmp_path / "spin.asm"
    f.write_text(SPIN)
    assert main(["run", str(f), "--cores", "1", "--max-steps", "500"]) == 1
    cap = capsys.readouterr()
    assert "about 166 iterations so far" in cap.err and "instructions 500 executed" in cap.out
    assert main(["run", str(f), "--max-steps", "0"]) == 2
    assert "--max-steps must be a positive number of steps" in capsys.readouterr().err
    # a real kernel under the default limit: no report
    assert main(["run", str(EXAMPLES / "ascend" / "vadd_f16.asm")]) == 0
