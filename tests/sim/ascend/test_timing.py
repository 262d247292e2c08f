"""Pipe timeline: ping-pong overlap, flags, GM sharing, Chrome trace, and the CLI's JSON."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

import isa
from isa.generate.gemm import GemmConfig, gemm_kernel
from sim.ascend.cli import add_arguments, run_ascend
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module

M = load_machine("davinci-a2")


@pytest.fixture(scope="module")
def gemm1024():
    out = {}
    for stages in (1, 2):
        module = isa.loads(gemm_kernel(GemmConfig(m=1024, n=1024, k=1024, stages=stages)), "g.asm")
        out[stages] = run_module(module, M, cores=1, functional=False).timing
    return out


def test_double_buffering_keeps_cube_busy(gemm1024):
    t1, t2 = gemm1024[1], gemm1024[2]
    assert t2.utilization["M"] >= 0.85
    assert t1.cycles / t2.cycles >= 1.5
    # the cube does the same work either way: 1024^3 / 16^3 fractals + a 6-cycle head per mad
    mads = (1024 // 128) * (1024 // 256) * (1024 // 64)
    assert t1.busy["M"] == pytest.approx(64 ** 3 + 6 * mads)
    assert t2.busy["M"] == pytest.approx(64 ** 3 + 6 * mads)


def test_the_1024_figures_stay_those_of_before_the_shared_timing_layer(gemm1024):
    """Issue #10: the Ascend-like model moved onto sim/timing's stages and its figures did not change
    (docs/ascend-isa.md: 1024^3 on one core 303,983 cycles, cube 87.2 %, 2.04x for ping-pong). A
    change to the shared layer that moves them shows here, not only in bench/ascend_gemm.py."""
    t1, t2 = gemm1024[1], gemm1024[2]
    assert t2.cycles == pytest.approx(303983.37, abs=0.5)
    assert t1.cycles == pytest.approx(619849.41, abs=0.5)
    assert round(100 * t2.utilization["M"], 1) == 87.2
    assert round(t1.cycles / t2.cycles, 2) == 2.04


def test_stage1_serialises_the_pipes(gemm1024):
    t1 = gemm1024[1]
    # with one buffer MTE2, MTE1 and the cube take turns: their busy times add up to most of the kernel
    assert (t1.busy["MTE2"] + t1.busy["MTE1"] + t1.busy["M"]) / t1.cycles > 0.9
    assert t1.flag_waits["MTE1->MTE2 EVENT_ID0"]["wait_cycles"] > 0


def test_many_cores_share_gm_bandwidth(examples):
    """A GM transfer gets min(port bandwidth, HBM bandwidth / cores moving GM data / L2-miss fraction)."""
    module = isa.load(str(examples / "ascend" / "vadd_f16.asm"))    # 16 tiles of 512-B copies

    def copies(cores):
        t = run_module(module, M, cores=cores, functional=False, trace=True).timing
        d = [s.cycles for s in t.slices if s.pipe == "MTE2" and s.kind == "op"]
        assert len(d) == 32                       # two loads per tile
        return t, d

    # every byte is touched once (miss fraction 1); 48 cores launched but only 16 have a tile
    t48, d48 = copies(48)
    assert t48.gm_unique_bytes == t48.gm_bytes == 3 * 4096 * 2
    assert t48.gm_bytes_per_cycle == pytest.approx(M.hbm_bytes_per_cycle / 16)
    assert d48 == [pytest.approx(M.mover_head + 512 / (M.hbm_bytes_per_cycle / 16))] * 32
    # on 4 cores the HBM share (1000 / 4 B/cycle) is above the 110 B/cycle port: the port binds
    t4, d4 = copies(4)
    assert t4.gm_bytes_per_cycle == pytest.approx(M.hbm_bytes_per_cycle / 4)
    assert d4 == [pytest.approx(M.mover_head + 512 / M.mover_bw["gm->ub"])] * 32


def test_gemm_l2_reuse_and_capacity():
    """Tiles re-read by other blocks hit the LRU L2; only first touches go to HBM, unless the L2
    is too small for the blocks' reuse distance (then every re-read misses and time grows)."""
    import dataclasses

    text = gemm_kernel(GemmConfig(m=2048, n=2048, k=512, stages=2))
    one = run_module(isa.loads(text, "g.asm"), M, cores=1, functional=False).timing
    many = run_module(isa.loads(text, "g.asm"), M, cores=24, functional=False).timing
    reads = 2 * 2048 * 512 * 2                     # A and B, each read once from HBM
    assert many.hbm_read_bytes == reads
    c_bytes = 2048 * 2048 * 2
    assert many.l2_hit_rate == pytest.approx(1 - reads / (many.gm_bytes - c_bytes))
    assert many.hbm_writeback_bytes == 0           # C stays in the 192 MiB L2
    # 128 blocks on 24 cores take 6 rounds: faster than one core, not 24x
    assert one.cycles / 24 < many.cycles < one.cycles / 4
    tiny = dataclasses.replace(M, l2_bytes=256 * 1024)   # holds one B tile and one A tile
    small = run_module(isa.loads(text, "g.asm"), tiny, cores=24, functional=False).timing
    # blocks running at the same time still share the tiles they read together; later rounds miss
    assert small.l2_hit_rate < many.l2_hit_rate - 0.15 and small.hbm_read_bytes > 3 * reads
    # every dirty C tile is pushed out by later reads, except the last 256 KiB
    assert small.hbm_writeback_bytes == c_bytes - 256 * 1024
    assert small.cycles > many.cycles


def test_wait_blocks_until_set_and_is_reported():
    text = """.kernel w .vector (.gm .f16 %x[16384])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 1024, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID3
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID3
    vmuls.f16 ub[0], ub[0], 2.0, 1, 1, 1, 8, 8
}
"""
    res = run_module(isa.loads(text, "w.asm"), M, cores=1, trace=True)
    t = res.timing
    copy = next(s for s in t.slices if s.pipe == "MTE2" and s.kind == "op")
    vm = next(s for s in t.slices if s.pipe == "V" and s.kind == "op")
    assert copy.end - copy.start == pytest.approx(M.mover_head + 32768 / M.mover_bw["gm->ub"])
    assert vm.start >= copy.end + M.flag_latency
    assert t.flag_waits["MTE2->V EVENT_ID3"]["waits"] == 1
    assert t.flag_waits["MTE2->V EVENT_ID3"]["wait_cycles"] > 300


def test_pipe_barrier_all_drains_every_pipe():
    text = """.kernel b .vector (.gm .f16 %x[16384])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 1024, 0, 0
    pipe_barrier PIPE_ALL
    vmuls.f16 ub[65536], ub[65536], 2.0, 1, 1, 1, 8, 8
}
"""
    t = run_module(isa.loads(text, "b.asm"), M, cores=1, trace=True).timing
    copy = next(s for s in t.slices if s.pipe == "MTE2")
    vm = next(s for s in t.slices if s.pipe == "V")
    assert vm.start >= copy.end


def _cli(argv):
    p = argparse.ArgumentParser()
    p.add_argument("file")
    add_arguments(p)
    return run_ascend(p.parse_args(argv))


def test_cli_json_check_trace(tmp_path, capsys):
    src = tmp_path / "g.asm"
    src.write_text(gemm_kernel(GemmConfig(dtype="bf16", m=96, n=80, k=100, l1_tile=(64, 64, 64),
                                          l0_tile=(64, 64, 32))))
    trace = tmp_path / "t.json"
    out = tmp_path / "o.npz"
    rc = _cli([str(src), "--check", "--json", "--trace", str(trace), "--out", str(out), "--cores", "2"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cores"] == 2 and data["cycles"] > 0 and data["seconds"] == pytest.approx(data["cycles"] / 1.8e9)
    assert set(data["pipes"]) == {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"}
    assert 0 < data["pipes"]["M"]["utilization"] < 1 and data["pipes"]["M"]["busy_cycles"] > 0
    assert data["check"]["passed"] is True and data["check"]["max_abs_err"] >= 0
    assert "max_rel_err" in data["check"]
    with np.load(out) as z:      # named as a PTX run names them (issue #15): in_NAME, got_NAME
        assert z["got_c"].shape == (96 * 80,) and z["in_a"].shape == (96 * 100,) and "c" not in z
    tr = json.loads(trace.read_text())["traceEvents"]
    lanes = {(e["pid"], e["args"]["name"]) for e in tr if e.get("name") == "thread_name"}
    assert {(0, "CUBE"), (0, "MTE2"), (1, "FIXP"), (1, "MTE1")} <= lanes   # lanes that have work
    starts = [e for e in tr if e["ph"] == "s"]
    ends = [e for e in tr if e["ph"] == "f"]
    assert len(starts) == len(ends) > 10
    assert {e["id"] for e in starts} == {e["id"] for e in ends}
    slices = [e for e in tr if e["ph"] == "X"]
    cube_tid = {e["pid"]: e["tid"] for e in tr if e.get("name") == "thread_name" and e["args"]["name"] == "CUBE"}
    assert any(e["name"] == "mad" and e["tid"] == cube_tid[e["pid"]] for e in slices)
    assert {e["args"]["name"] for e in tr if e.get("name") == "process_name"} == {"cube core 0", "cube core 1"}


def test_cli_gemm_reports_fraction_of_peak(tmp_path, capsys):
    src = tmp_path / "g.asm"
    src.write_text(gemm_kernel(GemmConfig(m=512, n=512, k=512)))
    assert _cli([str(src), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["gemm"]
    assert g["peak_tflops"] == pytest.approx(353.89, rel=1e-3)
    assert 0 < g["fraction_of_peak"] < 1


def test_zero_length_wait_is_drawn_one_cycle_but_counted_as_zero():
    """A wait_flag whose set fired long before takes 0 cycles: the trace draws it one cycle wide,
    but its recorded cycles and the flag-wait totals keep the real (zero) length."""
    from sim.ascend.trace import chrome_trace

    text = """.kernel z .vector (.gm .f16 %x[16384])
{
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    vmuls.f16 ub[65536], ub[65536], 2.0, 200, 1, 1, 8, 8
    pipe_barrier PIPE_ALL
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 1024, 0, 0
}
"""
    module = isa.loads(text, "z.asm")
    res = run_module(module, M, cores=1, functional=False, trace=True)
    t = res.timing
    (wait,) = [s for s in t.slices if s.kind == "wait"]
    assert wait.pipe == "MTE2" and wait.cycles == 0 and wait.shown_end == wait.start + 1
    assert t.flag_waits == {"MTE3->MTE2 EVENT_ID0": {"wait_cycles": 0.0, "waits": 1}}
    # the copy starts when the scalar unit issues it after the wait, not after the drawn width
    copy = next(s for s in t.slices if s.pipe == "MTE2" and s.kind == "op")
    assert copy.start == wait.end + M.issue_cycles
    tr = chrome_trace(res, t, res.launch, module, M.hz)["traceEvents"]
    (w,) = [e for e in tr if e.get("ph") == "X" and e["cat"] == "wait"]
    assert w["args"]["cycles"] == 0 and w["dur"] == pytest.approx(1e6 / M.hz)


def test_flag_wait_totals_equal_the_wait_slices():
    """Per flag, the reported wait cycles are the sum of that flag's wait slices (real ends)."""
    text = gemm_kernel(GemmConfig(m=256, n=256, k=256, stages=2))
    t = run_module(isa.loads(text, "g.asm"), M, cores=2, functional=False, trace=True).timing
    assert t.flag_waits and sum(v["waits"] for v in t.flag_waits.values()) == sum(
        1 for s in t.slices if s.kind == "wait")
    total_slices = sum(s.cycles for s in t.slices if s.kind == "wait")
    assert total_slices == pytest.approx(sum(v["wait_cycles"] for v in t.flag_waits.values()))
    assert total_slices > 0


def test_vector_op_without_a_slope_in_the_model_is_an_error():
    import dataclasses

    from isa.errors import InputError

    text = ".kernel v .vector ()\n{\n    vmuls.f32 ub[0], ub[256], 2.0, 1, 1, 1, 8, 8\n}\n"
    slopes = {k: v for k, v in M.vec_slope.items() if k != "vmuls"}
    with pytest.raises(InputError, match="no vector slope for vmuls"):
        run_module(isa.loads(text, "v.asm"), dataclasses.replace(M, vec_slope=slopes), cores=1)
    # with the slope it is priced head + slope per repeat (reads and writes in distinct bank groups)
    t = run_module(isa.loads(text, "v.asm"), M, cores=1, trace=True).timing
    (v,) = [s for s in t.slices if s.pipe == "V"]
    assert v.cycles == M.vec_head + M.vec_slope["vmuls"]


def test_every_wait_is_a_stall_of_the_shared_layer_including_queue_full():
    """The scalar unit issues 40 vector ops into the 32-deep V queue: it waits for 8 slots
    (queue_full:V); flag waits are charged per flag and per pipe pair; PIPE_ALL drains as barrier."""
    body = "\n".join("    vmuls.f16 ub[0], ub[0], 2.0, 100, 1, 1, 8, 8" for _ in range(40))
    text = f""".kernel q .vector (.gm .f16 %x[16384])
{{
    copy_gm_to_ubuf ub[65536], gm[%x], 0, 1, 1024, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
{body}
    pipe_barrier PIPE_ALL
}}
"""
    t = run_module(isa.loads(text, "q.asm"), M, cores=1, functional=False, trace=True).timing
    st = t.stalls.cycles
    # an entry leaves the queue when it starts: while the first vmuls waits behind the flag, 32
    # vmuls fill the queue and the last 8 issues wait for a slot
    assert t.stalls.count["queue_full:V"] == 40 - M.queue_depth
    assert st["flag:MTE2->V"] == pytest.approx(t.flag_waits["MTE2->V EVENT_ID0"]["wait_cycles"])
    assert st["flag:MTE2->V"] > 0
    assert st["barrier"] > 0
    # the scalar's queue-full waits are exactly what the V ops' issue times show
    v = [s for s in t.slices if s.pipe == "V" and s.kind == "op"]
    assert v[M.queue_depth].start == pytest.approx(v[M.queue_depth - 1].end)
