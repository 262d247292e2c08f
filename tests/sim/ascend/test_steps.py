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


def test_a_long_run_shows_progress_about_every_two_seconds(monkeypatch):
    """A progress line, as PTX runs have (the Ascend-like engine had none): the engine looks at the clock
    every TICK_STEPS instructions and calls ``progress`` when 2 s have passed (a fake clock: 2.5 s a look)."""
    import time

    from sim.ascend import engine

    clock = iter(range(10 ** 6))
    monkeypatch.setattr(time, "monotonic", lambda: 2.5 * next(clock))
    calls = []
    limit = 7 * engine.TICK_STEPS
    res = run_module(isa.loads(SPIN, "spin.asm"), load_machine("davinci-a2"), cores=1, functional=False,
                     max_steps=limit, progress=lambda *a: calls.append(a))
    assert res.launch.instructions_executed == limit
    # a look about every TICK_STEPS instructions (6 before the limit): the first sets the clock, each later one shows
    assert len(calls) == 5 and {c[1:] for c in calls} == {("vector core 0", 1)}
    steps = [c[0] for c in calls]
    assert all(0 < b - a - engine.TICK_STEPS <= 1 for a, b in zip(steps, steps[1:])) and steps[-1] < limit
    quiet = run_module(isa.loads(SPIN, "spin.asm"), load_machine("davinci-a2"), cores=1, functional=False,
                       max_steps=limit)               # no progress asked: the same result
    assert quiet.launch.instructions_executed == limit


def test_the_default_limit_is_far_above_every_bundled_kernel_and_said_in_the_help(capsys):
    """The default was 200 M instructions per core (about 60 s of CPU on a spinning loop, against about
    8 s for PTX's 5 M steps per batch); the bundled kernels need at most a few thousand per core."""
    import pytest

    from sim.ascend import engine

    assert engine.MAX_STEPS == 20_000_000
    most = 0
    for f in sorted((EXAMPLES / "ascend").glob("*.asm")):
        res = run_module(isa.load(str(f), isa="ascend"), load_machine("davinci-a2"), functional=False)
        assert not res.launch.reports, f
        most = max(most, res.launch.instructions_executed)
    assert 0 < most * 1000 < engine.MAX_STEPS
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "default 20,000,000" in " ".join(capsys.readouterr().out.split())


def test_the_cli_progress_line_only_on_a_terminal(monkeypatch, capsys):
    import sys

    from sim.ascend import cli

    assert cli._progress() is None                    # pytest's stderr is no terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    show = cli._progress()
    show(1_234_567, "cube core 3", 24)
    assert show.shown
    assert "simulating: 1,234,567 instructions on cube core 3 (24 in this launch; Ctrl-C stops" in capsys.readouterr().err
