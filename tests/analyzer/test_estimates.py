"""Estimates that say what they are (issue #15): iterations, not back edges; branches on the thread
index are shares of threads, not bounds checks; every guess is named beside the number and in JSON."""

from __future__ import annotations

import json
from pathlib import Path

import isa
from analyzer.cli import main as validate_kernel
from analyzer.dataflow import Launch
from analyzer.params import resolve
from analyzer.report import analyze_function
from tests.isa.ptx_helpers import kernel
from tests.isa.test_cfg import NESTED

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _report(name, params=None, grid=None, block=None):
    m = isa.load(EXAMPLES / "ptx" / f"{name}.sm_90.ptx")
    fn = m.kernels[0]
    return analyze_function(m, fn, params=resolve(m, fn, params or {}), launch=Launch(grid, block))


def _simulated(name):
    """What the simulator measures for the example's manifest launch."""
    from sim.launch import execute, load_launch

    spec = load_launch(f"{EXAMPLES / 'manifest.json'}#{name}")
    return execute(isa.load(EXAMPLES / "ptx" / f"{name}.sm_90.ptx"), spec).stats, spec


def test_loops_report_iterations_not_back_edges():
    m = isa.loads(".version 9.0\n.target sm_90\n.address_size 64\n" + kernel(NESTED).emit())
    r = analyze_function(m, m.kernels[0])
    # for (i = 0; i < 4; ++i) for (j = 0; j < 8; ++j): 4 and 8 iterations (3 and 7 back edges)
    assert sorted(li.iterations for li in r.loops) == [4, 8]
    assert sorted(li["iterations"] for li in r.to_json()["loops"]) == [4, 8]
    assert sorted(li["back_edges_taken"] for li in r.to_json()["loops"]) == [3, 7]


def test_assumed_iterations_means_iterations(capsys):
    """An unknown loop assumed to run 16 times runs its body 16 times, not 17."""
    m = isa.loads(".version 9.0\n.target sm_90\n.address_size 64\n" + kernel("""
\tld.param.u32 %r3, [k_param_1];
\tmov.u32 %r1, 0;
$L_loop:
\tfma.rn.f32 %f1, %f2, %f3, %f1;
\tadd.s32 %r1, %r1, 1;
\tsetp.lt.s32 %p1, %r1, %r3;
\t@%p1 bra $L_loop;
\tret;
""", params=".param .u64 k_param_0, .param .u32 k_param_1").emit())
    r = analyze_function(m, m.kernels[0])
    dyn = r.dynamic()
    assert dyn["flops"]["value"] == 2 * 16 and dyn["flops"]["exact"] is False
    assert dyn["basis"] == "estimate" and dyn["assumed_iterations"] == 16
    (g,) = dyn["guesses"]
    assert g["what"] == "loop iterations" and g["exact_with"] == ["--param k_param_1"]
    r2 = analyze_function(m, m.kernels[0], params={"k_param_1": 5})
    assert r2.dynamic()["flops"] == {"value": 10, "exact": True, "by_dtype": {"f32": 10}}


def test_warp_and_lane_branches_are_shares_of_threads_not_bounds_checks():
    """reduce_sum: ``if (lane == 0)`` partial store, ``if (warp == 0) { ... if (lane == 0) atomicAdd }``;
    the counts per launch equal what the simulator executes."""
    stats, spec = _simulated("reduce_sum")
    r = _report("reduce_sum", {"n": 5000}, spec.grid, spec.block)
    dyn = r.dynamic()
    # 4 CTAs: one atomicAdd each; 5 shuffles per thread + 5 more in warp 0; one store per warp
    assert dyn["mix"]["ATOMIC"] == 4
    assert dyn["mix"]["SHUFFLE"] == 4 * (256 * 5 + 32 * 5)
    assert dyn["mix"]["STORE_SHARED"] == 4 * 8
    atom = next(k for k, i in enumerate(r.instructions) if i.opcode in ("atom", "red"))
    assert r.instruction_exact()[atom] is True and dyn["mix_exact"]["ATOMIC"] is True
    assert not any("(bounds check)" in n for n in dyn["notes"])
    # without the block shape the share is unknown, and the report says so instead of guessing "bounds check"
    dyn0 = _report("reduce_sum", {"n": 5000}).dynamic()
    assert not any("(bounds check)" in n for n in dyn0["notes"])
    assert any("thread index" in n and "--block" in n for n in dyn0["notes"])
    assert any(g["what"] == "branch on the thread index" and g["exact_with"] == ["--block"] for g in dyn0["guesses"])


def test_wmma_gemm_with_parameters_and_launch_is_exact_and_equals_the_simulator():
    stats, spec = _simulated("hgemm_wmma")
    params = {a.name: a.value for a in spec.args if hasattr(a, "value")}
    dyn = _report("hgemm_wmma", params, spec.grid, spec.block).dynamic()
    assert dyn["exact"] is True and dyn["basis"] == "exact" and dyn["guesses"] == []
    assert dyn["instructions"]["value"] == stats["thread_instructions"]
    assert dyn["bytes"]["global"]["value"] == stats["bytes_by_space"]["global"]
    assert dyn["totals"].startswith("per launch: 192 threads")


def test_guesses_are_marked_beside_the_numbers_and_in_json(tmp_path, capsys):
    path = str(EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx")
    assert validate_kernel([path]) == 0
    text = capsys.readouterr().out
    assert "per thread (give --grid and --block" in text
    assert "≈ " in text.split("instructions", 1)[1].splitlines()[0]
    rests = next(line for line in text.splitlines() if line.startswith("estimate rests on"))
    assert "assumed 16 iterations" in rests
    assert "exact with --param hgemm_wmma_param_5" in text.replace("\n", " ").replace("  ", " ") or \
        "--param hgemm_wmma_param_5" in text
    # exact numbers carry no mark: the kernel's parameter loads run once whatever the loops do
    row = next(line for line in text.splitlines() if "LOAD_PARAM" in line)
    assert "≈" not in row
    assert validate_kernel([path, "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    assert k["dynamic"]["basis"] == "estimate"
    assert {g["line"] for g in k["dynamic"]["guesses"] if g["what"] == "loop iterations"} == {78, 168}


def test_measured_counts_replace_the_estimates_and_say_so():
    """After a run, reports use the measured counts (basis 'measured', no guesses)."""
    stats, spec = _simulated("reduce_sum")
    r = _report("reduce_sum", grid=spec.grid, block=spec.block)
    est = r.dynamic()
    assert est["basis"] == "estimate" and est["guesses"]          # n unknown: the loop count is a guess
    r.use_measured(stats["threads_by_instruction"])
    dyn = r.dynamic()
    assert dyn["basis"] == "measured" and dyn["guesses"] == [] and dyn["exact"] is True
    assert dyn["notes"] == ["counts measured: this launch run on the functional simulator"]
    assert dyn["instructions"] == {"value": stats["thread_instructions"], "exact": True}
    # 5000 inputs: one add per element in the grid-stride loop, 5 shuffle rounds per warp and the
    # block-level combine; the estimate (16 iterations assumed) said 13,952
    assert est["flops"]["value"] == 13952 and dyn["flops"]["value"] == 10760
    assert dyn["mix"]["ATOMIC"] == stats["opcode_threads"]["atom.global.add.f32"] == 4
    assert dyn["bytes"]["global"]["value"] == 5000 * 4 + 4 * 4


def test_kernlens_run_reports_measured_work(capsys):
    from kernlens.cli import main

    args = ["run", str(EXAMPLES / "ptx" / "reduce_sum.sm_90.ptx"), "--launch", f"{EXAMPLES / 'manifest.json'}#reduce_sum"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "top opcodes (warp-instructions per launch): mov.u32 416" in text
    assert ("work per launch (measured: the counts of this run): FLOPs 10,760 (f32 10,760), int ops 0, "
            "global bytes 20,032, intensity 0.54 FLOP/B, memory-bound on h200 (roofline, modelled: global bytes "
            "taken as DRAM bytes; --timing h200 models the caches)") in text
    # the counts say what they are (they were printed bare)
    assert "  counts (exact: counted by the functional simulator, whole launch):\n  warp_instructions" in text
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    w = out["measured_work"]
    assert (w["basis"], w["flops"], w["global_bytes"], w["bound"]) == ("measured", 10760, 20032, "memory")
    assert "threads_by_instruction" not in out["stats"]


def test_totals_say_per_thread_or_per_launch(capsys):
    path = str(EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx")
    assert validate_kernel([path, "--param", "K=64"]) == 0
    text = capsys.readouterr().out
    assert "per thread (give --grid and --block for whole-launch totals)" in text
    assert "1024 per thread f16 1024" in text and "160 per thread" in text
    assert validate_kernel([path, "--param", "K=64", "--grid", "2,3,1", "--block", "32,1,1"]) == 0
    text = capsys.readouterr().out
    assert "per launch: 192 threads (grid 2x3x1, block 32x1x1)" in text and "196,608 per launch f16 196,608" in text


def test_measured_loop_iterations():
    """With the run's branch counts the loops' iterations are measured too (header runs / entries)."""
    stats, spec = _simulated("sgemm_tiled")
    r = _report("sgemm_tiled", grid=spec.grid, block=spec.block)
    assert [li.iterations for li in r.loops] == [None]            # K unknown: the tile loop is a guess
    r.use_measured(stats["threads_by_instruction"], taken_by_instruction=stats["taken_by_instruction"])
    (tile,) = r.loops
    # K = 50 in tiles of 16: 4 tiles (the 16 multiply-adds of a tile unrolled by nvcc)
    assert (tile.iterations, tile.exact, tile.to_json()["measured"]) == (4, True, True)


def test_a_loop_no_thread_reaches_is_not_entered_not_assumed(capsys):
    """The README's demo (K=64): the wmma remainder loop (K/16 % 4 == 0) is skipped by the branch
    before it. It was printed "iterations unknown (assumed 16)" beside exact counts; now "not entered"
    (0 iterations, exact), and the main loop's single pass reads "1 iteration"."""
    path = str(EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx")
    launch = ["--param", "K=64", "--grid", "2,3,1", "--block", "32,1,1"]
    assert validate_kernel([path, *launch]) == 0
    loops = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("loops"))
    assert "L78-151 depth 1: 1 iteration," in loops and "L168-178 depth 1: not entered" in loops
    assert "assumed" not in loops
    assert validate_kernel([path, *launch, "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    rem = next(li for li in k["loops"] if li["lines"][0] == 168)
    assert (rem["entered"], rem["iterations"], rem["exact"]) == (False, 0, True)
    assert k["dynamic"]["exact"] is True
    # without K the remainder loop may run: still a named guess
    assert validate_kernel([path, "--format", "json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    rem = next(li for li in k["loops"] if li["lines"][0] == 168)
    assert rem["iterations"] is None and "entered" not in rem and rem["exact"] is False
