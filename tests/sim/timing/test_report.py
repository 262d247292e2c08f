"""``result.timing`` holds every figure issue #10 names, and the text report shows waves, the tail
wave and the launch overhead."""

import numpy as np
import pytest

import isa
import sim
from sim.timing.report import render
from tests.sim.timing.test_sm import _kernel

BODY = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * 8
                 + ["    st.global.f32 [%rd4], %f1;"])


def _timed(grid):
    out = np.zeros(grid * 32 * 40, np.float32)
    return sim.run_kernel(isa.loads(_kernel(BODY)), "k", grid, 32, [out, np.uint32(0)], timing="h200")


def test_every_field_the_issue_names():
    tm = _timed(4).timing
    assert tm["label"] == "modelled" and tm["cycles"] > 0 and tm["seconds"] == pytest.approx(tm["cycles"] / 1.98e9)
    assert tm["ipc"] > 0 and tm["bound"] and tm["sampled"] is False
    occ = tm["occupancy"]
    assert set(occ) >= {"theoretical", "achieved", "limiter", "registers_source", "waves", "wave_count", "tail_wave"}
    assert all(set(v) == {"busy_cycles", "utilization"} for v in tm["pipes"].values())
    assert {"fma", "alu", "fp16", "fp64", "xu", "lsu", "mma", "tensor_gmma", "branch", "shared"} <= set(tm["pipes"])
    assert tm["pipes"]["fma"]["busy_cycles"] > 0
    assert set(tm["memory"]) >= {"l1_hit_rate", "l2_hit_rate", "dram_bytes_read", "dram_bytes_write",
                                 "shared_wavefronts"}
    assert tm["stalls"] and set(tm["stalls"]) <= {"long_scoreboard", "short_scoreboard", "wait", "math_pipe_throttle",
                                                  "mio_throttle", "lg_throttle", "barrier", "membar", "not_selected",
                                                  "gmma", "selected", "no_instruction", "dispatch_stall", "drain",
                                                  "branch_resolving", "sleeping", "misc", "tex_throttle"}


def test_waves_and_the_tail_wave():
    """32 one-warp CTAs per SM (the block limit) x 132 SMs = 4,224 CTAs a wave: 5,280 CTAs are 1.25
    waves, i.e. 2 waves with the tail wave a quarter full."""
    tm = _timed(5280).timing
    occ = tm["occupancy"]
    assert occ["ctas_per_sm"] == 32
    assert occ["waves"] == pytest.approx(1.25) and occ["wave_count"] == 2 and occ["tail_wave"] == pytest.approx(0.25)
    text = render(tm)
    assert "1.25 (2 waves, the tail wave 25% full; " in text
    assert f"(+ {tm['launch_overhead']:.0f} launch)" in text
    one = _timed(4).timing["occupancy"]
    assert (one["wave_count"], one["tail_wave"]) == (1, pytest.approx(4 / (32 * 132)))
    assert "one partial wave" in render(_timed(4).timing)
