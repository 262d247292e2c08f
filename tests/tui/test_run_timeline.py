"""Pilot tests that really run kernels from the inspector: the PTX simulator in the Run tab (check
report, undefined behaviour with jump-to-line, shared-memory heat beside the code) and the
Ascend-like timing model in the Timeline tab (per-pipe lanes, busy table, stall breakdown).

They use the project's own examples (examples/manifest.json), so they need no ../shared.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tui import timeline
from tests.tui.pilot import settle, sync
from tui.app import InspectorApp
from tui.model import load_file

SIZE = (150, 50)
SGEMM = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
OOB = EXAMPLES / "ptx" / "bugs" / "oob_write.sm_90.ptx"
RACE = EXAMPLES / "ptx" / "bugs" / "missing_sync.sm_90.ptx"
VADD = EXAMPLES / "ascend" / "vadd_f16.asm"
GEMM_S8 = EXAMPLES / "ascend" / "gemm_s8_requant.asm"
DEADLOCK = EXAMPLES / "ascend" / "bad" / "wait_without_set.asm"


def text(app, selector: str) -> str:
    return str(app.query_one(selector).render())


def status(app) -> str:
    return text(app, "#status")


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line of ``path`` containing ``needle``."""
    for i, ln in enumerate(path.read_text().splitlines(), 1):
        if needle in ln:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def cursor_row(app) -> str:
    asm = app.query_one("#asm")
    return asm.render_line(asm.cursor - asm.scroll_offset.y).text


# -- Run tab (PTX) ------------------------------------------------------------------------------

@sync
async def test_run_sgemm_passes_the_check_and_paints_the_heat_column():
    app = InspectorApp([str(SGEMM)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")  # runs with the examples manifest's launch, in a worker
        await settle(app, pilot)
        assert app.query_one("#tabs").active == "run"
        spec = text(app, "#run-spec")
        assert "grid [3, 3, 1]  block [16, 16, 1]" in spec and "examples/manifest.json" in spec
        report = text(app, "#run-report")
        assert "(manifest inputs)" in report
        assert "PASS C (f32, 40x36): 0/1440 outside atol=0.0001 rtol=0.0001" in report
        assert "Error histogram (ULP)" in report
        assert text(app, "#run-problems-title") == "Undefined behaviour: none found"
        assert not app.query_one("#run-problems").display
        # 9 CTAs x 8 warps x ceil(K=50 / 16) tiles = 288 executions of each conflict-free ld.shared
        per_line = 9 * 8 * math.ceil(50 / 16)
        heat = app.query_one("#run-heat-list").prompts()
        assert heat and f"shared {per_line:>8,} wavefronts (ideal {per_line:,}, replay 1.00)" in heat[0]
        # the code view shows the heat column on the shared loads, and the status gives the numbers
        ld = line_of(SGEMM, "ld.shared.f32 \t%f12")
        await pilot.press("g", *str(ld), "enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "code"
        row = cursor_row(app)
        assert row.startswith("██") and f"{ld:>5}" in row and "ld.shared.f32" in row
        assert f"shared {per_line} wavefronts (ideal {per_line})" in status(app)
        # a line without memory traffic has no heat
        await pilot.press("k", "k")
        assert cursor_row(app).startswith("  ") and "wavefronts" not in status(app)


@sync
async def test_run_oob_write_lists_the_problem_and_jumps_to_its_line():
    store = line_of(OOB, "st.global.f32")
    app = InspectorApp([str(OOB)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.click("#run-sim-button")
        await settle(app, pilot)
        title = text(app, "#run-problems-title")
        assert title.startswith("Undefined behaviour: 1 finding(s) at 1 place(s)")
        (prompt,) = app.query_one("#run-problems").prompts()
        assert prompt.startswith(f"line {store:>5}  out_of_bounds")
        assert "4 bytes past the end of 800 bytes" in prompt and "oob_write.cu:4" in prompt
        assert "no reference for this launch: outputs not checked" in text(app, "#run-report")
        app.query_one("#run-problems").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "code"
        assert app.query_one("#asm").line == store
        assert "st.global.f32" in cursor_row(app) and f"line {store}" in status(app)
        # global sectors stand in for the heat where no line touches shared memory
        assert cursor_row(app).startswith(("░", "▒", "▓", "█")) and "global" in status(app)


@sync
async def test_run_missing_sync_groups_the_race_by_line():
    app = InspectorApp([str(RACE)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        sim = app.doc.sim
        prompts = app.query_one("#run-problems").prompts()
        assert len(prompts) == len({(p.ptx_line, p.kind) for p in sim.problems}) == 1
        race = line_of(RACE, "ld.shared.f32")
        assert prompts[0].startswith(f"line {race:>5}  shared_race ×{len(sim.problems)}")
        assert f"{sim.stats['problems_suppressed']:,} more of the same suppressed" in text(app, "#run-problems-title")


@sync
async def test_run_with_generated_inputs_draws_a_new_seed_and_still_passes():
    app = InspectorApp([str(SGEMM)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.click("#run-gen-button")
        await settle(app, pilot)
        report = text(app, "#run-report")
        assert "(generated inputs)" in report and "PASS C (f32, 40x36)" in report
        from sim.launch import entry_seed

        assert app.doc.sim.generated and app.doc.sim.seed != entry_seed("sgemm_tiled")


@sync
async def test_ptx_timeline_is_honest_and_shows_units_after_a_run(monkeypatch):
    # the build without a PTX timing model (tests/tui/test_ptx_timeline.py covers the one with)
    from tui import backends

    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(
        False, "The timing model is not available: kernlens has no cycle model for PTX, so there is no per-unit "
               "timeline or stall breakdown to show."))
    app = InspectorApp([str(SGEMM)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        body = text(app, "#timeline-body")
        assert "no cycle model for PTX" in body and "after a run in the Run tab" in body
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("5")
        body = text(app, "#timeline-body")
        assert "no cycle model for PTX" in body and "Executed warp-instructions by unit" in body
        stats = app.doc.sim.stats
        total = [l for l in body.splitlines() if l.strip().startswith("total")][0]
        assert total.split()[-1] == f"{stats['warp_instructions']:,}"
        lsu = [l for l in body.splitlines() if l.strip().startswith("lsu ")][0]
        fp32 = [l for l in body.splitlines() if l.strip().startswith("fp32 ")][0]
        # every ld/st (param, global, shared) is an LSU warp-instruction; every FMA an fp32 one
        ops = stats["opcodes"]
        assert lsu.split()[-2] == f"{sum(v for k, v in ops.items() if k.startswith(('ld.', 'st.'))):,}"
        assert fp32.split()[-2] == f"{ops['fma.rn.f32']:,}"


# -- Ascend-like kernels ------------------------------------------------------------------------

@sync
async def test_timeline_vadd_draws_pipes_and_the_model_numbers():
    from sim.ascend.machine import load_machine
    from sim.ascend.run import run_module

    app = InspectorApp([str(VADD)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        model = run_module(app.doc.module, load_machine("davinci-a2"), functional=False).timing
        head = text(app, "#timeline-body")
        assert f"{model.cycles:,.0f} cycles" in head and "48 vector core(s)" in head and "timing-only" in head
        lanes = text(app, "#timeline-lanes").splitlines()
        # 4096 values / 256 per tile = 16 tiles: cores 0-15 work, the other 32 only set the first flag
        assert lanes[2].startswith("cores 0-15    MTE2") and any(l.startswith("cores 16-47") for l in lanes)
        mte2, v, mte3 = lanes[2], lanes[3], lanes[4]
        assert v.split()[0] == "V" and mte3.split()[0] == "MTE3"
        # the vector pipe waits for MTE2 (░) before its vadd runs (█), and MTE3 waits for the vadd
        assert v.index("░") < v.index("█") and mte3.index("░") < mte3.index("█")
        assert mte2.index("█") < v.index("█") < mte3.rindex("█")
        tables = text(app, "#timeline-tables")
        row = [l for l in tables.splitlines() if l.strip().startswith("MTE2 ")][0].split()
        assert row[1] == "32" and row[2] == f"{model.busy['MTE2']:,.0f}"   # 2 loads per tile
        assert row[3] == f"{model.utilization['MTE2'] * 100:.1f}%"
        assert set(model.flag_waits) == {"MTE2->V EVENT_ID0", "V->MTE3 EVENT_ID0", "MTE3->MTE2 EVENT_ID0"}
        for name, w in model.flag_waits.items():
            flag = [l for l in tables.splitlines() if l.strip().startswith(name)][0]
            assert f"{w['waits']} waits" in flag and f"{w['wait_cycles']:,.0f} cycles" in flag
        assert not app.query_one("#timeline-problems").display


@sync
async def test_timeline_deadlock_is_listed_and_jumps_to_the_wait():
    wait = line_of(DEADLOCK, "wait_flag PIPE_MTE2, PIPE_V, EVENT_ID1")
    app = InspectorApp([str(DEADLOCK)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        (prompt,) = app.query_one("#timeline-problems").prompts()
        assert prompt.startswith(f"line {wait:>5}") and "deadlock" in prompt and "core 0 and 47 other(s)" in prompt
        app.query_one("#timeline-problems").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "code" and app.query_one("#asm").line == wait


@sync
async def test_ascend_run_checks_the_int8_gemm_bit_exact():
    app = InspectorApp([str(GEMM_S8)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        assert ".meta op=gemm m=100 n=96 k=160" in text(app, "#run-spec")
        report = text(app, "#run-report")
        assert "Check (max|err| <= 0 * max|ref| + 0): PASSED" in report
        # 100 x 96 int8 outputs, all at ULP distance 0
        zero = [l for l in report.splitlines() if l.strip().startswith("0 ")][0]
        assert zero.split()[-1] == str(100 * 96)
        assert text(app, "#run-problems-title") == "Undefined behaviour: none found"


def test_lanes_group_identical_cores_and_scale_to_cycles():
    doc = load_file(str(VADD)).kernels[0]
    run = timeline.run_timing(doc)
    width = 50
    lanes = timeline.lanes(run, width)
    assert {ln.cores for ln in lanes} == {tuple(range(16)), tuple(range(16, 48))}
    assert all(len(ln.cells) <= width for ln in lanes)
    # the last busy cell of MTE3 on a working core is the kernel's end (the copy out finishes last)
    mte3 = next(ln for ln in lanes if ln.pipe == "MTE3" and 0 in ln.cores)
    assert len(mte3.cells) == width and mte3.cells[-1] in (timeline.BUSY, timeline.PART)
    assert timeline.core_label((0, 1, 2, 5, 7, 8)) == "cores 0-2,5,7-8" and timeline.core_label((3,)) == "core 3"


def test_timing_of_a_ptx_kernel_is_refused_with_a_message():
    from isa.errors import InputError

    with pytest.raises(InputError, match="Ascend-like kernels only"):
        timeline.run_timing(load_file(str(SGEMM)).kernels[0])


@sync
async def test_launch_option_runs_a_file_outside_any_manifest(tmp_path):
    copy = tmp_path / "k.ptx"
    copy.write_text(OOB.read_text())
    store = line_of(copy, "st.global.f32")
    # without a spec the run says what is missing instead of running
    app = InspectorApp([str(copy)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        assert "no launch spec for this kernel" in text(app, "#run-report")
        assert app.query_one("#run-sim-button").disabled and app.doc.sim is None
    # with --launch manifest.json#entry it runs and finds the planted bug
    app = InspectorApp([str(copy)], launch=f"{EXAMPLES / 'manifest.json'}#oob_write")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        assert "launch spec: " in text(app, "#run-spec") and not app.query_one("#run-sim-button").disabled
        await pilot.click("#run-sim-button")
        await settle(app, pilot)
        (prompt,) = app.query_one("#run-problems").prompts()
        assert prompt.startswith(f"line {store:>5}  out_of_bounds")


@sync
async def test_the_ascend_run_tab_offers_no_h200_check():
    """The H200 recorded outputs of PTX kernels only: an Ascend-like kernel's Run tab and command
    palette do not offer to check them (issue #15); a PTX kernel's still do."""
    from tui.app import InspectorCommands

    for path, offered in ((VADD, False), (SGEMM, True)):
        app = InspectorApp([str(path)])
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("4")
            await settle(app, pilot)
            button = app.query_one("#run-check-button")
            assert button.display is offered
            names = [name for name, _, _ in InspectorCommands(app.screen)._commands()]
            assert ("Check recorded outputs" in names) is offered


def test_pipes_table_counts_the_scalar_instructions():
    """Scalar instructions leave no trace slice (their issue time rides on the next event): the S row
    counted 0 ops beside its busy cycles (issue #15). Every instruction is counted once."""
    doc = load_file(str(VADD)).kernels[0]
    run = timeline.run_timing(doc)
    rows = {p.pipe: p for p in timeline.breakdown(run).pipes}
    flags = sum(1 for s in run.timing.slices if s.kind != "op")
    assert rows["S"].busy > 0 and rows["S"].ops > 0
    assert sum(p.ops for p in rows.values()) + flags == run.instructions


@sync
async def test_the_code_tab_shows_the_class_label_uncut():
    """``store shared 32`` was cut to ``store shared 3`` (issue #15): the class column fits the
    longest label."""
    from tui.widgets.asm_view import CLASS_W, AsmView

    app = InspectorApp([str(SGEMM)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.query_one("#asm", AsmView)
        row = app.doc.index_of_line(line_of(SGEMM, "st.shared.f32"))
        text = "".join(seg.text for seg in view._gutter(row))
        assert "store shared 32 " in text
    assert CLASS_W >= len("store shared 128")


def test_the_ascend_timeline_header_says_what_each_number_is():
    """The header printed the model's cycles beside the run's exact counts with no word on either."""
    from tui.widgets.timeline_panel import header_markup

    run = timeline.run_timing(load_file(str(VADD)).kernels[0])
    text = header_markup(run)
    assert f"{run.cycles:,.0f} cycles[/] (" in text and "GHz; modelled)" in text
    assert f"({run.timing.gm_unique_bytes:,} distinct) [dim](exact: counted in this run)[/]" in text


def test_the_run_tab_result_says_what_its_numbers_are():
    """The Run tab listed the run's counts, the simulator's speed and the Ascend-like cycles unlabelled."""
    from tui import runs
    from tui.widgets.run_panel import result_markup

    ptx = runs.simulate(load_file(str(EXAMPLES / "ptx" / "reduce_sum.sm_90.ptx")).kernels[0])
    text = result_markup(ptx)
    assert "counts of this run (exact: counted by the functional simulator):\n  warp_instructions" in text
    assert "M thread-instructions/s (the simulator's speed here, measured)" in text
    asc = runs.simulate_ascend(load_file(str(VADD)).kernels[0])
    assert "cycles in the timing model (modelled)" in result_markup(asc)
