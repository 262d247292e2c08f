"""Kernels that never end (issue #15): a default step limit, where each warp loops, results kept."""

from __future__ import annotations

import json

import numpy as np

import isa
import sim
from sim.ptx.machine import STEPS_PER_BATCH

from .kernels import ptx, run_body

# threads 0..15 count 0, 2, 4, ... and never meet 7; the others leave at once
ENDLESS = """
    st.global.u32 [%rd10], %r1;
    setp.lt.u32 %p2, %r1, 16;
    @!%p2 bra DONE;
    mov.u32 %r5, 0;
LOOP:
    add.s32 %r5, %r5, 2;
    setp.ne.s32 %p1, %r5, 7;
    @%p1 bra LOOP;
DONE:
    add.s32 %r2, %r1, 100;
"""


def test_step_limit_says_where_each_warp_loops_and_what_the_exit_test_reads():
    out, res = run_body(ENDLESS, threads=64, max_steps=3000)
    (p,) = [p for p in res.problems if p.kind == "max_steps"]
    assert p.ptx_line in (29, 30, 31)
    assert "1 warp(s) here (16 threads)" in p.message
    assert "in the loop at lines 29-31" in p.message and "iterations so far" in p.message
    assert "other paths at line 33 (2 warp(s), waiting to reconverge)" in p.message
    # the exit test, with the values the first looping thread has
    assert "setp.ne.s32 %p1, %r5, 7" in p.message and "%r5 = " in p.message
    v = int(p.message.split("%r5 = ")[1].split()[0].rstrip(","))
    assert v % 2 == 0 and v > 1000
    assert p.thread == (0, 0, 0)
    # what was computed before the stop is kept: the store before the loop, for every thread
    assert out.tolist() == list(range(64))


def test_a_default_step_limit_stops_an_endless_loop(monkeypatch):
    """Without max_steps the limit is STEPS_PER_BATCH per batch of CTAs (shrunk here to keep the test fast)."""
    import sim.ptx.machine as machine

    assert STEPS_PER_BATCH >= 1_000_000
    monkeypatch.setattr(machine, "STEPS_PER_BATCH", 700)
    out, res = run_body(ENDLESS, threads=32, ctas=3)
    # the three CTAs store to the same words before the loop: those are real global races, reported too
    stops = [p for p in res.problems if p.kind != "global_race"]
    assert [p.kind for p in stops] == ["max_steps"] and "max_steps=700" in stops[0].message
    assert out.tolist()[:16] == list(range(16))


def test_kernlens_run_max_steps_reports_the_loop(tmp_path, capsys):
    from kernlens.cli import main

    path = tmp_path / "endless.ptx"
    path.write_text(ptx(ENDLESS))
    launch = tmp_path / "launch.json"
    launch.write_text(json.dumps({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "out", "dtype": "u8", "shape": [256], "init": "zeros", "role": "out"},
        {"buffer": "inp", "dtype": "u8", "shape": [256], "init": "zeros", "role": "in"},
        {"scalar": "n", "dtype": "s32", "value": 0}]}))
    rc = main(["run", str(path), "--launch", str(launch), "--max-steps", "2000"])
    out = capsys.readouterr().out
    assert rc in (0, 1)
    assert "max_steps" in out and "in the loop at lines" in out and "%r5 = " in out


def test_ctrl_c_stops_cleanly_and_keeps_the_results():
    class CtrlC:
        """Presses Ctrl-C at the 500th instruction."""
        n = 0

        def on_instruction(self, ev):
            self.n += 1
            if self.n == 500:
                raise KeyboardInterrupt

        __call__ = on_instruction

    out, res = run_body(ENDLESS, threads=64, listeners=[CtrlC()])
    (p,) = res.problems
    assert p.kind == "interrupted" and "interrupted (Ctrl-C)" in p.message and "in the loop at lines 29-31" in p.message
    assert out.tolist() == list(range(64))
